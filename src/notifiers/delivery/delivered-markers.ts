import type { RedisClient } from '../../lib/redis-connection.js';
import { DEFAULT_PREFIX, type DeliveryKeys, deliveryKeys } from '../../store/keys.js';

/** How long a delivered marker is kept: far longer than a job can wait to be taken again. */
export const DELIVERED_MARKER_TTL_SECONDS = 86_400;

/**
 * "This notification reached this receiver": written right after a receiver accepted it and
 * checked before every send. A replica killed after the receiver answered but before BullMQ
 * recorded the job as completed leaves the job active; it goes back to waiting when its lock
 * expires, and the next worker to take it finds the marker and completes it without sending again.
 * (Killed before the marker was written, the notification is sent twice: delivery is at least
 * once, and webhook receivers dedup on `webhook-id`.)
 */
export interface DeliveredMarkerStore {
  has(receiver: string, notificationId: string): Promise<boolean>;
  mark(receiver: string, notificationId: string): Promise<void>;
}

export class DeliveredMarkers implements DeliveredMarkerStore {
  readonly #redis: RedisClient;
  readonly #keys: DeliveryKeys;
  readonly #ttlSeconds: number;
  readonly #now: () => number;

  constructor(options: { redis: RedisClient; prefix?: string; ttlSeconds?: number; now?: () => number }) {
    this.#redis = options.redis;
    this.#keys = deliveryKeys(options.prefix ?? DEFAULT_PREFIX);
    this.#ttlSeconds = options.ttlSeconds ?? DELIVERED_MARKER_TTL_SECONDS;
    this.#now = options.now ?? Date.now;
  }

  async has(receiver: string, notificationId: string): Promise<boolean> {
    return (await this.#redis.exists(this.#keys.delivered(receiver, notificationId))) === 1;
  }

  async mark(receiver: string, notificationId: string): Promise<void> {
    await this.#redis.set(
      this.#keys.delivered(receiver, notificationId),
      String(this.#now()),
      'EX',
      this.#ttlSeconds,
    );
  }
}
