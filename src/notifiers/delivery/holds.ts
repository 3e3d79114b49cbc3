import type { RedisClient } from '../../lib/redis-connection.js';
import { DEFAULT_PREFIX, type DeliveryKeys, deliveryKeys } from '../../store/keys.js';

/**
 * Holds: a receiver that must wait (it asked for a pause, the back-off before its next attempt,
 * or trouble of fleetwatch's own) waits as a whole, so nothing overtakes the notification at the
 * head of its queue (Guarantee 6). Two keys make a hold, written together in one MULTI and
 * expiring together:
 *
 * - BullMQ's rate-limit key of the `notify-<receiver>` queue (`{p}:notify-<receiver>:limiter`, the
 *   key `queue.rateLimit(ms)` sets, with the same value): while it lives, no worker of any replica
 *   takes a job of that queue;
 * - `{p}:receiver:<name>:hold`, JSON: why and until when, for `fleetwatch receiver list`,
 *   `/api/receivers` and the metrics.
 *
 * `resume` deletes both: the worker holding the receiver looks at the limiter again within its
 * `holdCheckMs` (delivery-worker.ts), so every replica takes the waiting notification, still
 * first in the queue, right away.
 */

/** Why a receiver is held: it asked (`throttled`), the wait before the next attempt (`retry`), fleetwatch's own trouble (`error`). */
export type HoldCause = 'throttled' | 'retry' | 'error';

export const HOLD_CAUSES: readonly HoldCause[] = ['throttled', 'retry', 'error'];

export interface ReceiverHold {
  receiver: string;
  /** ISO 8601: when the hold began. */
  since: string;
  /** ISO 8601: when it ends by itself. */
  until: string;
  cause: HoldCause;
  /** The HTTP status of the answer that caused it, when there was one. */
  status?: number;
  /** The failure that caused it, free of secrets (`HTTP 503: retry after 99999999s`). */
  reason: string;
  /** What the receiver's `Retry-After` asked for, in ms, when it sent one. */
  retryAfterMs?: number;
  /** The `Retry-After` was longer than the receiver's `max_hold`, which the hold is instead. */
  capped: boolean;
  /** The notification waiting at the head of the queue. */
  notification?: string;
}

export interface HoldRequest {
  /** How long, in ms (more than 0). */
  ms: number;
  cause: HoldCause;
  status?: number | undefined;
  reason: string;
  retryAfterMs?: number | undefined;
  capped?: boolean;
  notification?: string | undefined;
}

/**
 * What BullMQ's `queue.rateLimit` writes into the limiter key: a count no limiter reaches (the
 * delivery workers' limit is 1,000,000 a second), so the queue counts as limited until it expires.
 */
const LIMITED = String(Number.MAX_SAFE_INTEGER);

export interface ReceiverHoldsOptions {
  redis: RedisClient;
  prefix?: string;
  now?: () => number;
}

export class ReceiverHolds {
  readonly #redis: RedisClient;
  readonly #keys: DeliveryKeys;
  readonly #now: () => number;

  constructor(options: ReceiverHoldsOptions) {
    this.#redis = options.redis;
    this.#keys = deliveryKeys(options.prefix ?? DEFAULT_PREFIX);
    this.#now = options.now ?? Date.now;
  }

  /** Holds the whole receiver, on every replica, for `request.ms`; resolves with the hold recorded. */
  async hold(receiver: string, request: HoldRequest): Promise<ReceiverHold> {
    const ms = Math.ceil(request.ms);
    if (!(ms > 0)) throw new RangeError(`a hold lasts more than 0 ms (got ${request.ms})`);
    const since = this.#now();
    const hold: ReceiverHold = {
      receiver,
      since: new Date(since).toISOString(),
      until: new Date(since + ms).toISOString(),
      cause: request.cause,
      ...(request.status === undefined ? {} : { status: request.status }),
      reason: request.reason,
      // A Retry-After too large to represent is kept as the largest exact number.
      ...(request.retryAfterMs === undefined
        ? {}
        : { retryAfterMs: Math.min(request.retryAfterMs, Number.MAX_SAFE_INTEGER) }),
      capped: request.capped === true,
      ...(request.notification === undefined ? {} : { notification: request.notification }),
    };
    const replies = await this.#redis
      .multi()
      .set(this.#keys.receiverHold(receiver), JSON.stringify(hold), 'PX', ms)
      .set(this.#keys.receiverLimiter(receiver), LIMITED, 'PX', ms)
      .exec();
    failed(replies);
    return hold;
  }

  /** The receiver's hold, or undefined when it is not held. */
  async status(receiver: string): Promise<ReceiverHold | undefined> {
    return parseHold(receiver, await this.#redis.get(this.#keys.receiverHold(receiver)));
  }

  /** The holds of several receivers in one round trip: only the held ones are in the map. */
  async statuses(receivers: readonly string[]): Promise<Map<string, ReceiverHold>> {
    const out = new Map<string, ReceiverHold>();
    if (receivers.length === 0) return out;
    const values = await this.#redis.mget(receivers.map((receiver) => this.#keys.receiverHold(receiver)));
    receivers.forEach((receiver, index) => {
      const hold = parseHold(receiver, values[index]);
      if (hold) out.set(receiver, hold);
    });
    return out;
  }

  /**
   * Releases the receiver now, on every replica: its next notification is sent as soon as a worker
   * looks (within `holdCheckMs`). Resolves with the hold it ended, or undefined when none was
   * recorded (the limiter is cleared all the same).
   */
  async resume(receiver: string): Promise<ReceiverHold | undefined> {
    const key = this.#keys.receiverHold(receiver);
    const replies = await this.#redis
      .multi()
      .get(key)
      .del(key)
      .del(this.#keys.receiverLimiter(receiver))
      .exec();
    failed(replies);
    return parseHold(receiver, replies?.[0]?.[1] as string | null | undefined);
  }
}

function failed(replies: Array<[Error | null, unknown]> | null): void {
  if (!replies) throw new Error('the hold could not be written: the transaction was discarded');
  for (const [error] of replies) if (error) throw error;
}

function parseHold(receiver: string, text: string | null | undefined): ReceiverHold | undefined {
  if (!text) return undefined;
  let value: Partial<ReceiverHold>;
  try {
    value = JSON.parse(text) as Partial<ReceiverHold>;
  } catch {
    return undefined;
  }
  if (typeof value.until !== 'string' || typeof value.since !== 'string') return undefined;
  const cause = HOLD_CAUSES.includes(value.cause as HoldCause) ? (value.cause as HoldCause) : 'retry';
  return {
    receiver,
    since: value.since,
    until: value.until,
    cause,
    ...(typeof value.status === 'number' ? { status: value.status } : {}),
    reason: typeof value.reason === 'string' ? value.reason : '',
    ...(typeof value.retryAfterMs === 'number' ? { retryAfterMs: value.retryAfterMs } : {}),
    capped: value.capped === true,
    ...(typeof value.notification === 'string' ? { notification: value.notification } : {}),
  };
}
