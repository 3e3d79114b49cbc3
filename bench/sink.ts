import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The loopback webhook receiver: answers 204 at once and stamps every CloudEvent it gets (one
 * event, or a batch array) with its arrival time.
 */

export interface Arrival {
  id: string;
  type: string;
  subject: string;
  /** The event's `time`: when fleetwatch's poll observed the change (epoch ms). */
  observedAt: number;
  /** When the webhook call arrived here (epoch ms). */
  arrivedAt: number;
  /** The notification it came in (the call's `webhook-id`). */
  notification?: string;
}

interface CloudEventLike {
  id?: unknown;
  type?: unknown;
  subject?: unknown;
  time?: unknown;
}

export class WebhookSink {
  readonly arrivals: Arrival[] = [];
  deliveries = 0;
  readonly #server: Server;
  readonly #waiters = new Set<() => void>();

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<WebhookSink> {
    let sink: WebhookSink | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const arrivedAt = performance.timeOrigin + performance.now();
        res.writeHead(204).end();
        const id = req.headers['webhook-id'];
        sink?.receive(
          Buffer.concat(chunks).toString('utf8'),
          arrivedAt,
          typeof id === 'string' ? id : undefined,
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    sink = new WebhookSink(server);
    return sink;
  }

  get url(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/fleetwatch`;
  }

  receive(body: string, arrivedAt: number, notification?: string): void {
    this.deliveries += 1;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return;
    }
    for (const event of (Array.isArray(parsed) ? parsed : [parsed]) as CloudEventLike[]) {
      if (typeof event.type !== 'string' || typeof event.subject !== 'string') continue;
      this.arrivals.push({
        id: String(event.id),
        type: event.type,
        subject: event.subject,
        observedAt: typeof event.time === 'string' ? Date.parse(event.time) : Number.NaN,
        arrivedAt,
        ...(notification === undefined ? {} : { notification }),
      });
    }
    for (const wake of this.#waiters) wake();
  }

  /** Resolves once `done()` holds after an arrival, or after `timeoutMs` (then `false`). */
  async waitUntil(done: () => boolean, timeoutMs: number): Promise<boolean> {
    if (done()) return true;
    return new Promise((resolve) => {
      const finish = (result: boolean): void => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve(result);
      };
      const check = (): void => {
        if (done()) finish(true);
      };
      const timer = setTimeout(() => finish(done()), timeoutMs);
      this.#waiters.add(check);
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
