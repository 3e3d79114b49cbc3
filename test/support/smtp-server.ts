import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { generate } from 'selfsigned';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

/**
 * A real SMTP server on loopback: the `smtp-server` package (nodemailer's author's), with
 * STARTTLS or implicit TLS on a certificate made for 127.0.0.1 when the test starts, AUTH PLAIN
 * and LOGIN against a user table, and every accepted message parsed by `mailparser`, as a mail
 * client would read it. Answers to a message can be scripted (`answerWith(451, 550)`), as can a
 * refusal of the whole session (`users` with a wrong password).
 */

export interface TestCertificate {
  /** PEM: what the client trusts through `ca`. */
  cert: string;
  key: string;
}

/** A self-signed certificate for 127.0.0.1 and localhost, made now (a few hundred ms of RSA). */
export async function testCertificate(): Promise<TestCertificate> {
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 2, value: 'localhost' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

export interface ReceivedMail {
  /** The session had been upgraded to TLS (STARTTLS or implicit) when the message came. */
  secure: boolean;
  /** The authenticated user, if any. */
  user: string | undefined;
  mailFrom: string;
  rcptTo: string[];
  raw: string;
  parsed: ParsedMail;
}

/** An SMTP error reply for the next message: the code and its text. */
export interface ScriptedReply {
  code: number;
  text?: string;
}

export interface TestSmtpServerOptions {
  certificate: TestCertificate;
  /** `starttls` (offered), `implicit` (TLS from the first byte), `plain` (no STARTTLS). */
  mode: 'starttls' | 'implicit' | 'plain';
  /** Users who may authenticate; without it, no AUTH is required. */
  users?: Record<string, string>;
}

export class TestSmtpServer {
  readonly received: ReceivedMail[] = [];
  /** Every session's outcome of AUTH: `ok user` or `refused user`. */
  readonly authAttempts: string[] = [];
  readonly #server: SMTPServer;
  readonly #script: ScriptedReply[] = [];
  readonly #events = new EventEmitter();
  #port = 0;

  private constructor(options: TestSmtpServerOptions) {
    const users = options.users;
    this.#server = new SMTPServer({
      secure: options.mode === 'implicit',
      key: options.certificate.key,
      cert: options.certificate.cert,
      // `plain`: STARTTLS neither offered nor accepted, as a server without TLS answers it.
      hideSTARTTLS: options.mode === 'plain',
      ...(options.mode === 'plain' ? { disabledCommands: ['STARTTLS'] } : {}),
      authMethods: ['PLAIN', 'LOGIN'],
      authOptional: users === undefined,
      // AUTH over a plain session is what `tls: none` would do; the server lets it, the test decides.
      allowInsecureAuth: true,
      disableReverseLookup: true,
      logger: false,
      size: 10 * 1024 * 1024,
      onAuth: (auth, _session, callback) => {
        const name = auth.username ?? '';
        if (users !== undefined && users[name] !== undefined && users[name] === auth.password) {
          this.authAttempts.push(`ok ${name}`);
          callback(null, { user: name });
          return;
        }
        this.authAttempts.push(`refused ${name}`);
        callback(Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 }));
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const scripted = this.#script.shift();
          if (scripted) {
            callback(
              Object.assign(new Error(scripted.text ?? `scripted ${scripted.code}`), {
                responseCode: scripted.code,
              }),
            );
            this.#events.emit('answered');
            return;
          }
          const raw = Buffer.concat(chunks).toString('utf8');
          void this.#keep(raw, session).then(() => callback(null, 'Ok: queued as test'));
        });
      },
    });
  }

  static async start(options: TestSmtpServerOptions): Promise<TestSmtpServer> {
    const server = new TestSmtpServer(options);
    await new Promise<void>((resolve, reject) => {
      server.#server.once('error', reject);
      server.#server.listen(0, '127.0.0.1', () => resolve());
    });
    server.#port = (server.#server.server.address() as AddressInfo).port;
    return server;
  }

  get port(): number {
    return this.#port;
  }

  get smarthost(): string {
    return `127.0.0.1:${this.#port}`;
  }

  /** The next messages are answered with these replies, in order; then accepted again. */
  answerWith(...replies: Array<number | ScriptedReply>): void {
    this.#script.push(...replies.map((reply) => (typeof reply === 'number' ? { code: reply } : reply)));
  }

  /** Resolves once `count` messages have been accepted. */
  async waitForMail(count: number, timeoutMs = 10_000): Promise<ReceivedMail[]> {
    if (this.received.length >= count) return this.received.slice(0, count);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#events.off('mail', check);
        reject(new Error(`${this.received.length} of ${count} messages arrived within ${timeoutMs} ms`));
      }, timeoutMs);
      const check = () => {
        if (this.received.length < count) return;
        clearTimeout(timer);
        this.#events.off('mail', check);
        resolve(this.received.slice(0, count));
      };
      this.#events.on('mail', check);
    });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #keep(raw: string, session: SMTPServerSession): Promise<void> {
    const parsed = await simpleParser(raw);
    const envelope = session.envelope;
    this.received.push({
      secure: session.secure,
      user: typeof session.user === 'string' ? session.user : undefined,
      mailFrom: envelope.mailFrom === false ? '' : envelope.mailFrom.address,
      rcptTo: envelope.rcptTo.map((recipient) => recipient.address),
      raw,
      parsed,
    });
    this.#events.emit('mail');
  }
}
