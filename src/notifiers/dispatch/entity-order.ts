import type { FleetEvent } from '../../events/types.js';
import type { RedisClient } from '../../lib/redis-connection.js';
import { homeSubject } from '../../store/incidents.js';
import { type StoreKeys, storeKeys } from '../../store/keys.js';

/**
 * Dispatch in commit order per subject (Guarantee 6). The commit script appends every event's id
 * to its subject's order list; an event may be dispatched when no earlier event of its subject is
 * still waiting in that list, and leaves the list once dispatched.
 *
 * Events can reach the events worker out of commit order: the outbox entries a killed replica had
 * read stay pending until another replica claims them (`worker.takeover_after`), while newer ones
 * flow; an event job a killed replica held comes back only once BullMQ finds it stalled; and the
 * worker runs several jobs at once. The gate makes a later event wait for them instead, bounded by
 * `maxWaitMs` from when its own job was queued: then the ids ahead of it are dropped from the list
 * (they arrive later, or were lost), so one missing event holds its subject once, not forever.
 *
 * An event whose id is not in its list (dispatched before and redelivered; from before the list
 * existed; from a store emptied since) goes at once: the dispatcher is idempotent per event.
 */

export type OrderVerdict =
  /** Dispatch it now; `skipped` ids ahead of it were given up on. */
  | { go: true; skipped: number }
  /** `ahead` earlier events of the subject are not dispatched yet. */
  | { go: false; ahead: number };

export interface EntityOrderOptions {
  redis: RedisClient;
  prefix?: string;
  /** How many shards the order lists are spread over (keys.ts). Default 1. */
  shards?: number;
  /** How long an event waits for earlier ones of its subject, from when its job was queued. */
  maxWaitMs: number;
  now?: () => number;
}

/** Drops the ids ahead of ARGV[1] if it is still behind them: atomic against a concurrent `done`. */
const GIVE_UP_LUA = `
local at = redis.call('LPOS', KEYS[1], ARGV[1])
if not at or at == 0 then return 0 end
redis.call('LTRIM', KEYS[1], at, -1)
return at
`;

/**
 * The longest wait for `worker.takeover_after` = T: a dead replica's outbox entries are claimed
 * after T idle (plus a relay pass), its event jobs found stalled within 2 T: 3 T covers both.
 */
export function orderMaxWait(takeoverAfterMs: number): number {
  return 3 * takeoverAfterMs;
}

export class EntityOrder {
  readonly maxWaitMs: number;
  readonly #redis: RedisClient;
  readonly #keys: StoreKeys;
  readonly #now: () => number;

  constructor(options: EntityOrderOptions) {
    if (!(options.maxWaitMs >= 0)) throw new RangeError('maxWaitMs must be 0 or more');
    this.#redis = options.redis;
    this.#keys = storeKeys(options.prefix, options.shards);
    this.maxWaitMs = options.maxWaitMs;
    this.#now = options.now ?? Date.now;
  }

  /** Whether `event`, queued at `queuedAt` (epoch ms), may be dispatched now. */
  async place(event: FleetEvent, queuedAt: number): Promise<OrderVerdict> {
    const key = this.#orderOf(event);
    const at = await this.#redis.lpos(key, event.id);
    if (at === null || at === 0) return { go: true, skipped: 0 };
    if (this.#now() - queuedAt < this.maxWaitMs) return { go: false, ahead: at };
    const skipped = Number(await this.#redis.eval(GIVE_UP_LUA, 1, key, event.id));
    return { go: true, skipped };
  }

  /** `event` was dispatched: the next one of its subject may go. */
  async done(event: FleetEvent): Promise<void> {
    await this.#redis.lrem(this.#orderOf(event), 1, event.id);
  }

  /** The event's subject's order list, in the shard the commit wrote it to (its home subject's). */
  #orderOf(event: FleetEvent): string {
    return this.#keys.shardKeys(this.#keys.shardOf(homeSubject(event))).order(event.subject);
  }

  /** When to look again: soon behind a dispatch under way, every second behind a dead replica's. */
  retryDelay(queuedAt: number): number {
    const waited = Math.max(0, this.#now() - queuedAt);
    return Math.min(1_000, Math.max(50, Math.floor(waited / 4)));
  }
}
