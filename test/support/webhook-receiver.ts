import { EventEmitter } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { FleetEvent } from '../../src/events/types.js';

/**
 * A webhook receiver on loopback, as a customer would write one: every request is verified with
 * the official `standardwebhooks` package (`new Webhook(secret).verify(body, headers)`), so the
 * tests check fleetwatch's signatures against the reference implementation, not against itself.
 * Verified requests are answered from a script (default 200); unverified ones get 401 and are
 * kept apart in `rejected`.
 */

export type ScriptedResponse =
  | number
  | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number }
  /** Never answer (until `close()`): the sender's time-out fires. */
  | 'hang'
  /** Drop the connection without answering. */
  | 'drop';

export interface VerifiedDelivery {
  webhookId: string;
  /** `webhook-timestamp`, unix seconds. */
  timestamp: number;
  signature: string;
  headers: IncomingHttpHeaders;
  /** The raw body as received. */
  body: string;
  /** The body as parsed by `verify`. */
  payload: unknown;
  /** The CloudEvents in it: the object of a single event, or the batch array. */
  events: FleetEvent[];
  /** Epoch ms. */
  receivedAt: number;
  answer: ScriptedResponse;
  /** The sender's port: with `connectionOwner` (socket-owner.ts), which process sent it. */
  remotePort: number;
}

export interface RejectedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
  reason: string;
  receivedAt: number;
}

export interface WebhookReceiverOptions {
  /** The secret(s) this receiver knows; a request verifies when any one of them matches. */
  secret: string | readonly string[];
  /** The answer once the script is used up (default 200). */
  fallback?: ScriptedResponse;
  /** A larger body is answered 413 and kept as rejected, as nginx does beyond `client_max_body_size`. */
  maxBody?: number;
}

export class WebhookReceiver {
  readonly deliveries: VerifiedDelivery[] = [];
  readonly rejected: RejectedDelivery[] = [];
  readonly #server: Server;
  readonly #verifiers: Webhook[];
  readonly #script: ScriptedResponse[] = [];
  readonly #changes = new EventEmitter();
  #fallback: ScriptedResponse;
  readonly #maxBody: number;
  #port = 0;
  #url = '';

  private constructor(options: WebhookReceiverOptions) {
    const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret;
    this.#verifiers = secrets.map((secret) => new Webhook(secret));
    this.#fallback = options.fallback ?? 200;
    this.#maxBody = options.maxBody ?? Number.POSITIVE_INFINITY;
    this.#changes.setMaxListeners(100);
    this.#server = createServer((request, response) => {
      void this.#handle(request).then(
        async (answer) => {
          if (answer === 'hang') return;
          if (answer === 'drop') {
            request.socket.destroy();
            return;
          }
          const { status, headers, body, delayMs } = typeof answer === 'number' ? { status: answer } : answer;
          if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
          if (response.destroyed) return;
          response.writeHead(status, headers);
          response.end(body ?? '');
        },
        () => request.socket.destroy(),
      );
    });
  }

  static async start(options: WebhookReceiverOptions): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(options);
    await new Promise<void>((resolve, reject) => {
      receiver.#server.once('error', reject);
      receiver.#server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = receiver.#server.address() as AddressInfo;
    receiver.#port = port;
    receiver.#url = `http://127.0.0.1:${port}/hooks/fleetwatch`;
    return receiver;
  }

  get url(): string {
    return this.#url;
  }

  get port(): number {
    return this.#port;
  }

  /** Queues answers for the next verified requests, in order; then the fallback applies. */
  respondWith(...answers: ScriptedResponse[]): this {
    this.#script.push(...answers);
    return this;
  }

  /** Replaces the answer given once the script is used up (an outage: 503; its end: 200). */
  answerWith(answer: ScriptedResponse): this {
    this.#fallback = answer;
    return this;
  }

  /** The verified requests it answered with a 2xx: what the sender counts as delivered. */
  accepted(): VerifiedDelivery[] {
    return this.deliveries.filter((delivery) => {
      const status = typeof delivery.answer === 'object' ? delivery.answer.status : delivery.answer;
      return typeof status === 'number' && status >= 200 && status < 300;
    });
  }

  /** Stops listening and drops open connections: until `listen()`, connecting is refused. */
  async refuseConnections(): Promise<void> {
    await this.close();
  }

  /** Listens again on the same port (after `refuseConnections`). */
  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.#port, '127.0.0.1', () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
  }

  /** Every event received, once per `webhook-id`: what a receiver that deduplicates processes. */
  uniqueEvents(): FleetEvent[] {
    const seen = new Set<string>();
    return this.deliveries.flatMap((delivery) => {
      if (seen.has(delivery.webhookId)) return [];
      seen.add(delivery.webhookId);
      return delivery.events;
    });
  }

  /** Resolves once `count` verified requests have arrived (whatever they were answered). */
  waitFor(count: number, timeoutMs = 5_000): Promise<VerifiedDelivery[]> {
    return this.#until(
      () => this.deliveries.length >= count,
      () => this.deliveries.slice(),
      `${count} verified deliveries`,
      timeoutMs,
    );
  }

  /** Resolves once `count` requests have failed verification. */
  waitForRejected(count: number, timeoutMs = 5_000): Promise<RejectedDelivery[]> {
    return this.#until(
      () => this.rejected.length >= count,
      () => this.rejected.slice(),
      `${count} rejected requests`,
      timeoutMs,
    );
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(request: IncomingMessage): Promise<ScriptedResponse> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const body = raw.toString('utf8');
    const receivedAt = Date.now();
    if (raw.length > this.#maxBody) {
      this.rejected.push({ headers: request.headers, body, reason: 'body too large', receivedAt });
      this.#changes.emit('change');
      return 413;
    }
    const headers = flatHeaders(request.headers);
    let payload: unknown;
    let failure = 'no secret configured';
    const verified = this.#verifiers.some((verifier) => {
      try {
        payload = verifier.verify(body, headers);
        return true;
      } catch (error) {
        failure = (error as Error).message;
        return false;
      }
    });
    if (!verified) {
      this.rejected.push({ headers: request.headers, body, reason: failure, receivedAt });
      this.#changes.emit('change');
      return { status: 401, body: 'signature verification failed' };
    }
    const answer = this.#script.shift() ?? this.#fallback;
    this.deliveries.push({
      webhookId: headers['webhook-id'] ?? '',
      timestamp: Number(headers['webhook-timestamp']),
      signature: headers['webhook-signature'] ?? '',
      headers: request.headers,
      body,
      payload,
      events: (Array.isArray(payload) ? payload : [payload]) as FleetEvent[],
      receivedAt,
      answer,
      remotePort: request.socket.remotePort ?? 0,
    });
    this.#changes.emit('change');
    return answer;
  }

  #until<T>(done: () => boolean, value: () => T, what: string, timeoutMs: number): Promise<T> {
    if (done()) return Promise.resolve(value());
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        cleanup();
        resolve(value());
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new Error(
            `waited ${timeoutMs} ms for ${what}; got ${this.deliveries.length} verified and ${this.rejected.length} rejected`,
          ),
        );
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.#changes.off('change', check);
      };
      this.#changes.on('change', check);
    });
  }
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}
