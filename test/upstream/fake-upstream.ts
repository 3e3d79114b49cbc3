import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type UpstreamConfig, upstreamSchema } from '../../src/upstream/config.js';

export interface Recorded {
  method: string;
  /** The raw request target as sent (path and query, still percent-encoded). */
  url: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The bearer token the request carried, if any. */
  token: string | undefined;
}

export type Handler = (request: Recorded, response: ServerResponse) => unknown;

export const CLIENT_ID = 'fleetwatch-test';
export const CLIENT_SECRET = 'cs-very-secret-value-123';

export function send(
  response: ServerResponse,
  status: number,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  if (body === undefined) {
    response.writeHead(status, headers).end();
    return;
  }
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text);
}

/** A deferred promise, to hold a response until the test lets it go. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * A loopback server playing token issuer, /v1 and the robot gateway. Routes are matched on
 * `METHOD rawPath` (path without query). By default `POST /oauth/token` issues numbered tokens
 * (`tok-1-...`, `tok-2-...`) valid for an hour, and every other route answers 404 until a test
 * sets it.
 */
export class FakeUpstream {
  readonly requests: Recorded[] = [];
  readonly #routes = new Map<string, Handler>();
  readonly #server: Server;
  readonly #waiters: Array<{ test: () => boolean; resolve: () => void }> = [];
  issued: string[] = [];
  connections = 0;
  url = '';

  private constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const url = req.url ?? '/';
        const auth = req.headers.authorization;
        const recorded: Recorded = {
          method: req.method ?? 'GET',
          url,
          path: url.split('?')[0] ?? url,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          token: auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length) : undefined,
        };
        this.requests.push(recorded);
        this.#notify();
        const handler = this.#routes.get(`${recorded.method} ${recorded.path}`);
        if (handler) {
          Promise.resolve(handler(recorded, res)).catch((error: unknown) => {
            if (!res.headersSent) send(res, 599, { message: String(error) });
          });
        } else if (recorded.method === 'POST' && recorded.path === '/oauth/token') {
          this.issueToken(res);
        } else {
          send(res, 404, { status: 'error', message: `no route ${recorded.method} ${recorded.path}` });
        }
      });
    });
    this.#server.on('connection', () => {
      this.connections++;
    });
  }

  static async start(): Promise<FakeUpstream> {
    const fake = new FakeUpstream();
    fake.#server.listen(0, '127.0.0.1');
    await once(fake.#server, 'listening');
    const { port } = fake.#server.address() as AddressInfo;
    fake.url = `http://127.0.0.1:${port}`;
    return fake;
  }

  /** Issues the next numbered token (long enough for the secret registry to remember it). */
  issueToken(response: ServerResponse, extra: Record<string, unknown> = { expires_in: 3600 }): string {
    const token = `tok-${this.issued.length + 1}-abcdefghij`;
    this.issued.push(token);
    send(response, 200, { access_token: token, token_type: 'Bearer', ...extra });
    return token;
  }

  on(method: string, path: string, handler: Handler): this {
    this.#routes.set(`${method} ${path}`, handler);
    return this;
  }

  /** Answers `method path` with the given statuses in turn, the last one repeating. */
  sequence(method: string, path: string, answers: Array<[number, unknown?, Record<string, string>?]>): this {
    let index = 0;
    return this.on(method, path, (_request, response) => {
      const answer = answers[Math.min(index++, answers.length - 1)]!;
      send(response, answer[0], answer[1], answer[2]);
    });
  }

  count(method: string, path: string): number {
    return this.requests.filter((r) => r.method === method && r.path === path).length;
  }

  get tokenRequests(): Recorded[] {
    return this.requests.filter((r) => r.method === 'POST' && r.path === '/oauth/token');
  }

  apiRequests(): Recorded[] {
    return this.requests.filter((r) => r.path !== '/oauth/token');
  }

  /** Resolves once `test` holds (checked whenever a request arrives). */
  until(test: () => boolean): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ test, resolve }));
  }

  #notify(): void {
    for (const waiter of [...this.#waiters]) {
      if (waiter.test()) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

type DeepPartialHttp = Partial<Record<keyof UpstreamConfig['http'], number>>;

/** A validated upstream config aimed at the fake, with fast retries. */
export function testConfig(
  url: string,
  overrides: {
    http?: DeepPartialHttp;
    token?: Partial<Record<'default_ttl' | 'refresh_before', number>>;
  } = {},
): UpstreamConfig {
  return upstreamSchema.parse({
    base_url: url,
    robot_base_url: url,
    auth_url: url,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
    token: { ...overrides.token },
    http: {
      retries: 2,
      retry_base_delay: 1,
      retry_max_delay: 20,
      request_timeout: 2_000,
      connect_timeout: 1_000,
      ...overrides.http,
    },
  });
}
