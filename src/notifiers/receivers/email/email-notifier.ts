import { createHash } from 'node:crypto';
import type nodemailer from 'nodemailer';
import { linkedSignal } from '../../../lib/linked-signal.js';
import type { Logger } from '../../../log/logger.js';
import { REDACTED, type SecretRegistry } from '../../../log/secrets.js';
import {
  attemptLogFields,
  type DeliveryOptions,
  type DeliveryOutcome,
  type Notification,
  type Notifier,
  type NotifierDeps,
} from '../../notifier.js';
import { type EmailReceiverConfig, emailSecrets, mailboxAddress, serverOf } from './config.js';
import { buildEmail, type EmailMessage } from './message.js';
import { outcomeOfSmtpError, replyCode } from './outcome.js';

/** The SMTP transport as far as the notifier uses it: nodemailer's, or a test's. */
type Transport = ReturnType<typeof nodemailer.createTransport>;

let mailer: Promise<typeof nodemailer> | undefined;

/**
 * nodemailer, imported once, with the first email receiver: about 3 MB that an installation
 * without one never loads. `fleetwatch run` awaits it before starting when the config has an
 * email receiver, so a missing module stops the start with the import's own error, as a static
 * import did.
 */
export function loadNodemailer(): Promise<typeof nodemailer> {
  mailer ??= import('nodemailer').then((module) => module.default);
  mailer.catch(() => {
    mailer = undefined;
  });
  return mailer;
}

/**
 * The `Message-ID` of a notification: the same for every attempt at it, so a message the server
 * accepted but whose answer was lost (a time-out after the data) and that is sent again is
 * recognisably the same message, and mail systems that drop duplicate Message-IDs drop it. The id
 * is hashed because notification ids may hold characters a Message-ID may not; the readable id
 * travels in `X-Fleetwatch-Notification`.
 */
export function messageIdOf(notificationId: string, from: string): string {
  const domain = (mailboxAddress(from) ?? 'fleetwatch.invalid').split('@').at(-1)?.toLowerCase();
  const hash = createHash('sha256').update(notificationId).digest('hex').slice(0, 32);
  return `<${hash}.fleetwatch@${domain}>`;
}

/**
 * Delivers notifications by email through nodemailer's SMTP transport: one connection per message
 * (a notification is rare enough; nothing is left open between them), one message per
 * notification to every `to` address. `tls: starttls` sets `requireTLS` (the upgrade must happen
 * before anything else is said, or nothing is sent), `implicit` speaks TLS from the first byte,
 * `none` never upgrades. Certificates are verified against the system's CAs and `ca`, unless
 * `insecure_skip_verify`.
 *
 * At least once: a message the server accepted whose `250` never arrived is sent again on retry,
 * with the same `Message-ID`, `Date` and content. A message some recipients refused but others
 * accepted is delivered (sending again would repeat it to those who have it); the refused ones
 * are logged.
 */
export class EmailNotifier implements Notifier {
  readonly kind = 'email';
  readonly name: string;
  readonly #config: EmailReceiverConfig;
  readonly #server: string;
  /** nodemailer's transport once nodemailer is imported (loadNodemailer). */
  readonly #transport: Promise<Transport>;
  readonly #consoleUrl: string | undefined;
  readonly #secrets: SecretRegistry;
  readonly #logger: Logger;

  constructor(config: EmailReceiverConfig, deps: NotifierDeps) {
    this.name = config.name;
    this.#config = config;
    const { host, port } = serverOf(config);
    this.#server = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    this.#secrets = deps.secrets;
    for (const secret of emailSecrets(config)) deps.secrets.add(secret);
    this.#logger = deps.logger.child({ receiver: config.name, receiverKind: 'email', server: this.#server });
    this.#consoleUrl = deps.consoleUrl;
    const timeout = config.timeout;
    this.#transport = loadNodemailer().then((loaded) =>
      loaded.createTransport({
        host,
        port,
        secure: config.tls === 'implicit',
        requireTLS: config.tls === 'starttls',
        ignoreTLS: config.tls === 'none',
        ...(config.auth ? { auth: { user: config.auth.username, pass: config.auth.password } } : {}),
        // With credentials configured, a server that offers no AUTH fails the send instead of
        // taking the message unauthenticated.
        forceAuth: config.auth !== undefined,
        tls: {
          minVersion: 'TLSv1.2',
          rejectUnauthorized: !config.insecure_skip_verify,
          ...(config.ca === undefined ? {} : { ca: config.ca }),
        },
        connectionTimeout: timeout,
        greetingTimeout: timeout,
        socketTimeout: timeout,
        dnsTimeout: timeout,
        socketCloseTimeout: 1_000,
        // The message is built here; nothing in it may make nodemailer read a file or fetch a URL.
        disableFileAccess: true,
        disableUrlAccess: true,
        logger: false,
      }),
    );
    // A failed import surfaces at the first delivery (and close), not as an unhandled rejection.
    this.#transport.catch(() => {});
  }

  async deliver(notification: Notification, options: DeliveryOptions): Promise<DeliveryOutcome> {
    const started = performance.now();
    const { outcome, rejected } = await this.#send(notification, options);
    const scrubbed = this.#scrubbed(outcome);
    const fields = attemptLogFields(notification, options, scrubbed, started);
    if (scrubbed.kind !== 'delivered') {
      this.#logger.warn({ ...fields, reason: scrubbed.reason }, 'email delivery failed');
    } else if (rejected.length > 0) {
      this.#logger.warn({ ...fields, rejected }, 'email delivered, but the server refused some recipients');
    } else {
      this.#logger.debug(fields, 'email delivered');
    }
    return scrubbed;
  }

  async close(): Promise<void> {
    (await this.#transport.catch(() => undefined))?.close();
  }

  async #send(
    notification: Notification,
    options: DeliveryOptions,
  ): Promise<{ outcome: DeliveryOutcome; rejected: string[] }> {
    if (options.signal?.aborted) {
      return { outcome: { kind: 'retry', reason: 'delivery aborted before sending' }, rejected: [] };
    }
    const config = this.#config;
    let message: EmailMessage;
    try {
      message = buildEmail(notification, {
        maxEvents: config.max_events,
        ...(config.subject === undefined ? {} : { subjectPrefix: config.subject }),
        ...(this.#consoleUrl === undefined ? {} : { consoleUrl: this.#consoleUrl }),
      });
    } catch (error) {
      // Not a delivery problem (a bug building the message): never thrown, retried like one.
      const reason = `could not build the message: ${error instanceof Error ? error.message : String(error)}`;
      return { outcome: { kind: 'retry', reason }, rejected: [] };
    }
    let transport: Transport;
    try {
      transport = await this.#transport;
    } catch (error) {
      // Only when nodemailer could not be imported after the start (a receiver a reload added).
      const reason = `could not load nodemailer: ${error instanceof Error ? error.message : String(error)}`;
      return { outcome: { kind: 'retry', reason }, rejected: [] };
    }
    const linked = linkedSignal([options.signal, AbortSignal.timeout(config.timeout)]);
    const signal = linked.signal;
    try {
      const info = await transport.sendMail({
        from: config.from,
        to: config.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
        messageId: messageIdOf(notification.id, config.from),
        date: new Date(notification.createdAt),
        headers: {
          // RFC 3834: no auto-replies (out of office) to a machine's message.
          'Auto-Submitted': 'auto-generated',
          'X-Fleetwatch-Notification': notification.id,
        },
        signal,
      });
      const rejected = info.rejected.map(String);
      return { outcome: { kind: 'delivered', status: replyCode(info.response) ?? 250 }, rejected };
    } catch (error) {
      const outcome = outcomeOfSmtpError(error, {
        server: this.#server,
        timeoutMs: config.timeout,
        aborted: options.signal?.aborted === true,
        ...(config.auth ? { username: config.auth.username } : {}),
      });
      return { outcome, rejected: [] };
    } finally {
      linked.release();
    }
  }

  /** Reasons pass through the registry: no password, in any of its forms, leaves the notifier. */
  #scrubbed(outcome: DeliveryOutcome): DeliveryOutcome {
    if (outcome.kind === 'delivered') return outcome;
    let reason = this.#secrets.scrub(outcome.reason);
    // Also when the registry has forgotten it (it keeps a bounded number of secrets).
    for (const secret of emailSecrets(this.#config)) reason = reason.split(secret).join(REDACTED);
    return { ...outcome, reason };
  }
}
