import type { RedisClient } from '../lib/redis-connection.js';
import { byShard, keysOf, pipelineByShard } from './by-shard.js';
import { type SnapshotKind, type StoreKeys, storeKeys } from './keys.js';
import { defineScript, type LuaScript, queueScript } from './scripts.js';

/**
 * Poll leases: `{p}:lease:poll:<kind>:<id>:<scope>` holds the owner token with a PX ttl. A poll
 * that runs past its interval still holds the lease, so the next tick's job skips that entity
 * instead of polling it twice at once. Acquire and release are one Lua call per shard for a whole
 * batch (a lease is in its entity's shard, keys.ts; the calls go in one round trip).
 */

export interface LeaseRef {
  kind: SnapshotKind;
  id: string;
  /** What the lease covers on the entity: the poller's name (`poll` for a whole list). */
  scope: string;
}

/** SET NX PX per key; returns the 1-based positions of the keys acquired. ARGV: owner, ttl ms. */
const ACQUIRE_LUA = `
local acquired = {}
for i, key in ipairs(KEYS) do
  if redis.call('SET', key, ARGV[1], 'NX', 'PX', ARGV[2]) then
    acquired[#acquired + 1] = i
  end
end
return acquired
`;

/** Deletes only keys whose value is still the owner; returns how many. ARGV: owner. */
const RELEASE_LUA = `
local released = 0
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then
    redis.call('DEL', key)
    released = released + 1
  end
end
return released
`;

/** Re-arms the ttl of keys still owned; returns the 1-based positions extended. ARGV: owner, ttl ms. */
const EXTEND_LUA = `
local extended = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then
    redis.call('PEXPIRE', key, ARGV[2])
    extended[#extended + 1] = i
  end
end
return extended
`;

export const ACQUIRE_SCRIPT: LuaScript = { name: 'fleetwatchLeaseAcquire', lua: ACQUIRE_LUA };
export const RELEASE_SCRIPT: LuaScript = { name: 'fleetwatchLeaseRelease', lua: RELEASE_LUA };
export const EXTEND_SCRIPT: LuaScript = { name: 'fleetwatchLeaseExtend', lua: EXTEND_LUA };

export interface PollLeasesOptions {
  /** A producer connection; not closed by this class. */
  redis: RedisClient;
  prefix?: string;
  /** How many shards the per-entity keys are spread over (keys.ts). Default 1. */
  shards?: number;
}

function checkTtl(ttlMs: number): void {
  if (!Number.isInteger(ttlMs) || ttlMs < 1) throw new RangeError('lease ttlMs must be a positive integer');
}

function checkOwner(owner: string): void {
  if (!owner) throw new TypeError('a lease owner must not be empty');
}

const ascending = (a: number, b: number): number => a - b;

export class PollLeases {
  readonly keys: StoreKeys;
  readonly #redis: RedisClient;

  constructor(options: PollLeasesOptions) {
    this.#redis = options.redis;
    this.keys = storeKeys(options.prefix, options.shards);
  }

  keyOf(ref: LeaseRef): string {
    return this.keys.pollLease(ref.kind, ref.id, ref.scope);
  }

  /** Made once: a callback made per call is optimized anew per call (ARCHITECTURE.md, *Hot paths*). */
  readonly #shardOf = (ref: LeaseRef): number =>
    this.keys.shardOf(this.keys.subjectOf(ref.kind, ref.id, ref.scope));
  readonly #keyOf = (ref: LeaseRef): string => this.keyOf(ref);

  /** Tries to take every lease (SET NX PX each, one atomic call); returns the refs now held by `owner`. */
  acquire<Ref extends LeaseRef>(refs: readonly Ref[], ttlMs: number, owner: string): Promise<Ref[]> {
    return this.#held(ACQUIRE_SCRIPT, refs, ttlMs, owner);
  }

  /** Extends the leases `owner` still holds; returns those refs. */
  extend<Ref extends LeaseRef>(refs: readonly Ref[], ttlMs: number, owner: string): Promise<Ref[]> {
    return this.#held(EXTEND_SCRIPT, refs, ttlMs, owner);
  }

  /** Releases the leases still held by `owner` (compare-and-delete); returns how many were released. */
  async release(refs: readonly LeaseRef[], owner: string): Promise<number> {
    checkOwner(owner);
    if (refs.length === 0) return 0;
    const counts = await this.#run(RELEASE_SCRIPT, refs, [owner]);
    return counts.reduce((sum, { reply }) => sum + (reply as number), 0);
  }

  /** Runs a script that answers with the 1-based positions of the keys `owner` now holds. */
  async #held<Ref extends LeaseRef>(
    script: LuaScript,
    refs: readonly Ref[],
    ttlMs: number,
    owner: string,
  ): Promise<Ref[]> {
    checkTtl(ttlMs);
    checkOwner(owner);
    if (refs.length === 0) return [];
    const held = await this.#run(script, refs, [owner, ttlMs]);
    const taken: number[] = [];
    for (const { positions, reply } of held) {
      for (const position of reply as number[]) taken.push(positions[position - 1] as number);
    }
    taken.sort(ascending);
    const out = new Array<Ref>(taken.length);
    for (let i = 0; i < taken.length; i += 1) out[i] = refs[taken[i] as number] as Ref;
    return out;
  }

  /** Runs `script` once per shard over that shard's leases; each reply with the batch positions of its keys. */
  async #run(
    script: LuaScript,
    refs: readonly LeaseRef[],
    args: ReadonlyArray<string | number>,
  ): Promise<Array<{ positions: number[]; reply: unknown }>> {
    defineScript(this.#redis, script);
    const groups = byShard(refs, this.#shardOf);
    const replies = await pipelineByShard(
      this.#redis,
      groups,
      (group) => group.shard,
      (pipeline, group) => queueScript(pipeline, script, keysOf(group.items, this.#keyOf), args),
    );
    return groups.map((group, i) => {
      const [error, reply] = replies[i]?.[0] ?? [new Error('missing pipeline reply'), null];
      if (error) throw error;
      return { positions: group.positions, reply };
    });
  }
}
