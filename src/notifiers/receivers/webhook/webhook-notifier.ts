import type { Readable } from 'node:stream';
import { Agent, type Dispatcher, errors, request } from 'undici';
import { formatDuration } from '../../../lib/duration.js';
import { describeError, exchangeOfError } from '../../../lib/http-answer.js';
import type { Logger } from '../../../log/logger.js';
import type { SecretRegistry } from '../../../log/secrets.js';
import { VERSION } from '../../../version.js';
import type {
  DeliveryOptions,
  DeliveryOutcome,
  Notification,
  Notifier,
  NotifierDeps,
} from '../../notifier.js';
import { attemptLogFields } from '../../notifier.js';
import { urlOrigin, type WebhookReceiverConfig, webhookSecrets } from './config.js';
import { encodePayload } from './payload.js';
import { classifyAnswer, excerptOf } from './response.js';
import { sign } from './signature.js';

/** Bytes of an error answer kept for the excerpt; the rest is read and dropped. */
const KEPT_BYTES = 4_096;
/** A body longer than this is not read to the end: the connection is dropped instead. */
const MAX_DRAINED_BYTES = 1_048_576;

export interface WebhookNotifierOptions {
  /** Epoch ms; `webhook-timestamp` is read from it at send time. */
  now?: () => number;
  /** Where requests go; by default an Agent of the notifier's own, closed by `close()`. */
  dispatcher?: Dispatcher;
}

/**
 * Delivers a notification as one signed POST (Standard Webhooks) whose body is CloudEvents JSON
 * (see `payload.ts`). Headers: `webhook-id` = the notification id (the same on every retry),
 * `webhook-timestamp` = unix seconds at send time, `webhook-signature` = one `v1,…` per configured
 * secret, `user-agent: fleetwatch/<version>`, and the configured extra headers. The body is
 * serialised once and exactly those bytes are signed and sent. Never throws: every problem is an
 * outcome, and no reason or log line carries a secret or the URL (only its origin is logged); the
 * receiver's secrets are registered with `deps.secrets` on construction.
 */
export class WebhookNotifier implements Notifier {
  readonly kind = 'webhook';
  readonly name: string;
  readonly #config: WebhookReceiverConfig;
  readonly #logger: Logger;
  readonly #secrets: SecretRegistry;
  readonly #now: () => number;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #extraHeaders: Record<string, string>;
  #closed: Promise<void> | undefined;

  constructor(config: WebhookReceiverConfig, deps: NotifierDeps, options: WebhookNotifierOptions = {}) {
    this.name = config.name;
    this.#config = config;
    this.#secrets = deps.secrets;
    for (const secret of webhookSecrets(config)) deps.secrets.add(secret);
    this.#logger = deps.logger.child({
      notifier: 'webhook',
      receiver: config.name,
      origin: urlOrigin(config.url),
    });
    this.#now = options.now ?? Date.now;
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher ??
      new Agent({
        connect: { timeout: config.timeout },
        headersTimeout: config.timeout,
        bodyTimeout: config.timeout,
      });
    this.#extraHeaders = Object.fromEntries(
      Object.entries(config.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
    );
  }

  async deliver(notification: Notification, options: DeliveryOptions): Promise<DeliveryOutcome> {
    const started = performance.now();
    const outcome = await this.#attempt(notification, options);
    const fields = attemptLogFields(notification, options, outcome, started);
    if (outcome.kind === 'delivered') this.#logger.debug(fields, 'webhook delivered');
    else this.#logger.debug({ ...fields, reason: outcome.reason }, 'webhook not delivered');
    return outcome;
  }

  async #attempt(notification: Notification, options: DeliveryOptions): Promise<DeliveryOutcome> {
    if (options.signal?.aborted) return { kind: 'retry', reason: 'cancelled before sending' };
    let body: Buffer;
    let headers: Record<string, string>;
    try {
      const payload = encodePayload(notification.events);
      body = payload.body;
      const timestamp = Math.floor(this.#now() / 1_000);
      headers = {
        'user-agent': `fleetwatch/${VERSION}`,
        ...this.#extraHeaders,
        'content-type': payload.contentType,
        'webhook-id': notification.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': sign(this.#config.secrets, notification.id, timestamp, body),
      };
    } catch (error) {
      return { kind: 'rejected', reason: `cannot build the request: ${this.#describe(error)}` };
    }

    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.#config.timeout);
    const signal = options.signal ? AbortSignal.any([deadline.signal, options.signal]) : deadline.signal;
    try {
      const response = await request(this.#config.url, {
        method: 'POST',
        headers,
        body,
        signal,
        dispatcher: this.#dispatcher,
      });
      const success = response.statusCode >= 200 && response.statusCode < 300;
      const text = await drain(response.body, success ? 0 : KEPT_BYTES);
      const retryAfter = response.headers['retry-after'];
      return classifyAnswer({
        status: response.statusCode,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
        excerpt: excerptOf(this.#secrets.scrub(text)),
        now: this.#now(),
      });
    } catch (error) {
      if (deadline.signal.aborted || exchangeOfError(error) === 'timeout') {
        return { kind: 'retry', reason: `no answer within ${formatDuration(this.#config.timeout)}` };
      }
      if (options.signal?.aborted) return { kind: 'retry', reason: 'cancelled before an answer came' };
      if (error instanceof errors.InvalidArgumentError) {
        // A header or URL undici refuses to send: no retry will make it acceptable.
        return { kind: 'rejected', reason: `cannot send the request: ${this.#describe(error)}` };
      }
      return { kind: 'retry', reason: `network error: ${this.#describe(error)}` };
    } finally {
      clearTimeout(timer);
    }
  }

  /** A short, scrubbed account of an error: its code when it has one, else its message. */
  #describe(error: unknown): string {
    return excerptOf(this.#secrets.scrub(describeError(error)));
  }

  /** Closes the connection pool (when the notifier made it). Safe to call more than once. */
  close(): Promise<void> {
    this.#closed ??= this.#ownsDispatcher ? this.#dispatcher.close() : Promise.resolve();
    return this.#closed;
  }
}

/**
 * Reads the whole body (so the connection goes back to the pool) keeping its first `keep` bytes;
 * a body past 1 MiB is cut off instead. A body that fails half-way changes nothing: the status
 * has already arrived.
 */
async function drain(body: Readable, keep: number): Promise<string> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let total = 0;
  try {
    for await (const chunk of body) {
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      if (keptBytes < keep) {
        const part = bytes.subarray(0, keep - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
      total += bytes.length;
      if (total > MAX_DRAINED_BYTES) break;
    }
  } catch {
    // The answer's status is what counts.
  }
  return Buffer.concat(kept).toString('utf8');
}
