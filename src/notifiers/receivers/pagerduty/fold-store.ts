import type { RedisClient } from '../../../lib/redis-connection.js';
import { ITEMS_PER_CALL, slices } from '../../../lib/slices.js';
import { type LuaScript, runScript } from '../../../store/scripts.js';
import type { ReceiverRedis } from '../../notifier.js';
import type { FoldState } from './fold.js';

/**
 * Which incidents a PagerDuty receiver folded into which group alert (`fold.ts`), in its own Redis
 * hash (`{p}:pagerduty:<receiver>`): `i:<incident dedup key>` → the group alert's dedup key, and
 * `n:<group alert dedup key>` → how many incidents are folded into it. It holds one field per
 * folded incident whose resolution has not reached the receiver and one per group alert, so at most
 * one per incident the fleet can have (an incident folded again is the same field); a group alert's
 * fields go with its last incident. Only the receiver's delivery worker writes it, one notification
 * at a time (its queue's concurrency is 1).
 */

/** Incidents written per script call, so that one call never holds Redis for long. */
export const FOLD_BATCH = ITEMS_PER_CALL;

const FOLD: LuaScript = {
  name: 'fleetwatchPagerDutyFold',
  numberOfKeys: 1,
  lua: `local added = 0
for i = 2, #ARGV do
  if redis.call('HSETNX', KEYS[1], 'i:' .. ARGV[i], ARGV[1]) == 1 then added = added + 1 end
end
if added > 0 then redis.call('HINCRBY', KEYS[1], 'n:' .. ARGV[1], added) end
return added`,
};

/** Forgets incidents that are still folded into the group alert ARGV[1]; the count goes with the last. */
const RELEASE: LuaScript = {
  name: 'fleetwatchPagerDutyRelease',
  numberOfKeys: 1,
  lua: `local removed = 0
for i = 2, #ARGV do
  local field = 'i:' .. ARGV[i]
  if redis.call('HGET', KEYS[1], field) == ARGV[1] then
    redis.call('HDEL', KEYS[1], field)
    removed = removed + 1
  end
end
if removed > 0 then
  local left = redis.call('HINCRBY', KEYS[1], 'n:' .. ARGV[1], -removed)
  if left <= 0 then redis.call('HDEL', KEYS[1], 'n:' .. ARGV[1]) end
end
return removed`,
};

export class FoldStore {
  readonly #redis: RedisClient;
  readonly #key: string;

  constructor(redis: ReceiverRedis) {
    this.#redis = redis.connection;
    this.#key = redis.key;
  }

  /** What is folded among these incidents, and the counts of their group alerts and of `groups`. */
  async read(incidents: readonly string[], groups: readonly string[]): Promise<FoldState> {
    const foldedInto = new Map<string, string>();
    for (const batch of slices(incidents, FOLD_BATCH)) {
      const values = await this.#redis.hmget(this.#key, ...batch.map((key) => `i:${key}`));
      batch.forEach((key, index) => {
        const group = values[index];
        if (typeof group === 'string') foldedInto.set(key, group);
      });
    }
    const named = [...new Set([...groups, ...foldedInto.values()])];
    const counts = new Map<string, number>();
    if (named.length > 0) {
      const values = await this.#redis.hmget(this.#key, ...named.map((key) => `n:${key}`));
      named.forEach((key, index) => {
        const count = Number(values[index] ?? 0);
        if (Number.isInteger(count) && count > 0) counts.set(key, count);
      });
    }
    return { foldedInto, counts };
  }

  async fold(folds: ReadonlyMap<string, readonly string[]>): Promise<void> {
    await this.#each(FOLD, folds);
  }

  async release(releases: ReadonlyMap<string, readonly string[]>): Promise<void> {
    await this.#each(RELEASE, releases);
  }

  async #each(script: LuaScript, work: ReadonlyMap<string, readonly string[]>): Promise<void> {
    for (const [group, incidents] of work) {
      for (const batch of slices(incidents, FOLD_BATCH)) {
        await runScript(this.#redis, script, [this.#key], [group, ...batch]);
      }
    }
  }
}
