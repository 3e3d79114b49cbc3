import type { Dispatcher } from 'undici';
import { formatDuration } from '../../../lib/duration.js';
import { describeError, excerptOf } from '../../../lib/http-body.js';
import { ReceiverPoster } from '../../../lib/http-post.js';
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
import { logAttempt } from '../../notifier.js';
import { urlOrigin, type WebhookReceiverConfig, webhookSecrets } from './config.js';
import { type EncodedPayload, encodeParts, partId } from './payload.js';
import { classifyAnswer } from './response.js';
import { sign } from './signature.js';

export interface WebhookNotifierOptions {
  /** Epoch ms; `webhook-timestamp` is read from it at send time. */
  now?: () => number;
  /** Where requests go; by default an Agent of the notifier's own, closed by `close()`. */
  dispatcher?: Dispatcher;
}

/**
 * Delivers a notification as one signed POST (Standard Webhooks) whose body is CloudEvents JSON
 * (see `payload.ts`), or, when its events make more than `max_body`, as several, one part after
 * the other: `webhook-id` `<notification id>~part-<k>-of-<n>`. The delivery is delivered when every
 * part is; the first part that fails ends the attempt with its outcome, and the next attempt sends
 * every part again with the same ids (a receiver drops the ones it has, as it drops any repeated
 * webhook-id). Headers: `webhook-id` = the notification id (the same on every retry),
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
  readonly #poster: ReceiverPoster;
  readonly #extraHeaders: Record<string, string>;

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
    this.#poster = new ReceiverPoster(config.timeout, options.dispatcher);
    this.#extraHeaders = Object.fromEntries(
      Object.entries(config.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]),
    );
  }

  async deliver(notification: Notification, options: DeliveryOptions): Promise<DeliveryOutcome> {
    const started = performance.now();
    const outcome = await this.#attempt(notification, options);
    logAttempt(
      this.#logger,
      { notification, options, outcome, startedAt: started },
      { delivered: 'webhook delivered', failed: 'webhook not delivered' },
    );
    return outcome;
  }

  async #attempt(notification: Notification, options: DeliveryOptions): Promise<DeliveryOutcome> {
    let parts: EncodedPayload[];
    try {
      parts = encodeParts(notification.events, this.#config.max_body);
    } catch (error) {
      return { kind: 'rejected', reason: `cannot build the request: ${this.#describe(error)}` };
    }
    let outcome: DeliveryOutcome = { kind: 'retry', reason: 'nothing was sent' };
    for (const [index, part] of parts.entries()) {
      outcome = await this.#send(partId(notification.id, index, parts.length), part, options);
      if (outcome.kind !== 'delivered') {
        if (parts.length === 1) return outcome;
        return { ...outcome, reason: `part ${index + 1} of ${parts.length}: ${outcome.reason}` };
      }
    }
    return outcome;
  }

  /** One signed POST of `payload` under `webhookId`. */
  async #send(
    webhookId: string,
    payload: EncodedPayload,
    options: DeliveryOptions,
  ): Promise<DeliveryOutcome> {
    if (options.signal?.aborted) return { kind: 'retry', reason: 'cancelled before sending' };
    const body = payload.body;
    let headers: Record<string, string>;
    try {
      const timestamp = Math.floor(this.#now() / 1_000);
      headers = {
        'user-agent': `fleetwatch/${VERSION}`,
        ...this.#extraHeaders,
        'content-type': payload.contentType,
        'webhook-id': webhookId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': sign(this.#config.secrets, webhookId, timestamp, body),
      };
    } catch (error) {
      return { kind: 'rejected', reason: `cannot build the request: ${this.#describe(error)}` };
    }

    const result = await this.#poster.post(this.#config.url, { headers, body, signal: options.signal });
    switch (result.kind) {
      case 'answer':
        return classifyAnswer({
          status: result.status,
          retryAfter: result.retryAfter,
          excerpt: excerptOf(this.#secrets.scrub(result.text)),
          now: this.#now(),
        });
      case 'timeout':
        return { kind: 'retry', reason: `no answer within ${formatDuration(this.#config.timeout)}` };
      case 'cancelled':
        return { kind: 'retry', reason: 'cancelled before an answer came' };
      case 'unsendable':
        // A header or URL undici refuses to send: no retry will make it acceptable.
        return { kind: 'rejected', reason: `cannot send the request: ${this.#describe(result.error)}` };
      case 'network':
        return { kind: 'retry', reason: `network error: ${this.#describe(result.error)}` };
    }
  }

  /** A short, scrubbed account of an error: its code when it has one, else its message. */
  #describe(error: unknown): string {
    return excerptOf(this.#secrets.scrub(describeError(error)));
  }

  /** Closes the connection pool (when the notifier made it). Safe to call more than once. */
  close(): Promise<void> {
    return this.#poster.close();
  }
}
