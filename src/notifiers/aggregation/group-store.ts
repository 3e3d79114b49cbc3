import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClient } from '../../lib/redis-connection.js';
import { uniqueToken } from '../../lib/unique-token.js';
import { type NotifyKeys, notifyKeys } from '../../store/keys.js';
import { type LuaScript, runScript } from '../../store/scripts.js';
import { type GroupRecord, incidentSubjects } from './group-record.js';

/**
 * Aggregation groups in Redis, shared by every replica: `{p}:notify:group:<groupKey>` is a hash of
 * `v` (a version token, unique across replicas: lib/unique-token.ts) and `s` (the `GroupRecord`
 * JSON). Every change is a read-modify-write that commits only if the version is still the one
 * read (a Lua compare-and-set), retried with jittered back-off up to `maxAttempts` times; the same
 * script keeps the wake set (`{p}:notify:wake`, score = `record.wakeAt`) and the subject sets
 * (`{p}:notify:subject:<s>`, the groups holding an open incident of `s`) in step with the record,
 * so a group is never stored without its wake time. All keys share the `{p}` hash tag: one slot on Redis Cluster.
 *
 * Versions are tokens never used before, not counters: a group deleted and created again never
 * matches a version read from its previous life.
 *
 * Within one process, changes to the same group are queued and committed together (group commit):
 * a burst of 40 events into one group costs a few writes, not 40 contended ones. Across replicas
 * the compare-and-set orders them.
 *
 * Round trips: the store remembers the version and JSON it last read or wrote of each group
 * (`KNOWN_GROUPS` of them, the most recently used), and a change's first attempt starts from that
 * instead of reading again. A group is typically read or written moments before its next change
 * (the dispatcher reads its groups while it records the incident; a flush follows the dispatch that
 * scheduled it; the hand-off's second write follows the first), so most changes cost one round
 * trip, not two. A remembered version another replica has replaced fails the compare-and-set
 * like any contention, and the next attempt reads: it costs a round trip, never a lost change. An
 * attempt from memory that changes nothing is not trusted either (no compare-and-set checked it):
 * it is made again on a fresh read.
 */

/** A mutator's answer: `next` undefined = no change, null = delete the group. */
export interface GroupChange<R> {
  result: R;
  next?: GroupRecord | null;
}

/** Pure with respect to its input (it may run several times: once per attempt). */
export type GroupMutator<R> = (current: GroupRecord | undefined) => GroupChange<R>;

export class GroupContentionError extends Error {
  constructor(groupKey: string, attempts: number) {
    super(`group ${groupKey} changed under us ${attempts} times in a row; giving up for now`);
    this.name = 'GroupContentionError';
  }
}

/**
 * KEYS: group, wake, then `ARGV[6]` subject sets to add the group to, then subject sets to remove it
 * from. ARGV: expected version ('' = must not exist), new version ('' = delete), record JSON, wake
 * score ('' = none), group key (the wake and subject set member), number of sets to add to.
 * Returns 1 when written, 0 when the version did not match.
 */
const WRITE_LUA = `
local current = redis.call('HGET', KEYS[1], 'v')
if (current or '') ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[5])
else
  redis.call('HSET', KEYS[1], 'v', ARGV[2], 's', ARGV[3])
  if ARGV[4] == '' then
    redis.call('ZREM', KEYS[2], ARGV[5])
  else
    redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
  end
end
local adds = tonumber(ARGV[6])
for i = 3, #KEYS do
  if i < 3 + adds then
    redis.call('SADD', KEYS[i], ARGV[5])
  else
    redis.call('SREM', KEYS[i], ARGV[5])
  end
end
return 1
`;

/**
 * KEYS: wake. ARGV: now, lease until, limit. Takes up to `limit` groups due at `now` and moves their
 * score to `lease until`, so other replicas' flushers skip them meanwhile; if this one dies, they
 * come due again when the lease ends.
 */
const CLAIM_LUA = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, member in ipairs(due) do
  redis.call('ZADD', KEYS[1], ARGV[2], member)
end
return due
`;

/**
 * KEYS: wake. ARGV: now, lease until, group key. Takes that one group if it is due at `now`, as
 * CLAIM_LUA takes any: 1 if taken, 0 if it is not due (or another flusher holds it).
 */
const CLAIM_ONE_LUA = `
local score = redis.call('ZSCORE', KEYS[1], ARGV[3])
if score and tonumber(score) <= tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
  return 1
end
return 0
`;

/** KEYS: group, wake. ARGV: group key. Drops a wake entry whose group no longer exists. */
const FORGET_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.call('ZREM', KEYS[2], ARGV[1])
end
return 0
`;

/** Groups whose last read or written version the store remembers (see the class comment). */
export const KNOWN_GROUPS = 10_000;

const WRITE_SCRIPT: LuaScript = { name: 'fleetwatchNotifyGroupWrite', lua: WRITE_LUA };
const CLAIM_SCRIPT: LuaScript = { name: 'fleetwatchNotifyClaim', lua: CLAIM_LUA, numberOfKeys: 1 };
const CLAIM_ONE_SCRIPT: LuaScript = { name: 'fleetwatchNotifyClaimOne', lua: CLAIM_ONE_LUA, numberOfKeys: 1 };
const FORGET_SCRIPT: LuaScript = { name: 'fleetwatchNotifyForget', lua: FORGET_LUA, numberOfKeys: 2 };

export interface GroupStoreOptions {
  /** A producer connection; not closed by the store. */
  redis: RedisClient;
  prefix?: string;
  /** Compare-and-set attempts before `GroupContentionError` (the caller's job is retried). */
  maxAttempts?: number;
}

interface Waiter {
  mutate: GroupMutator<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** A group as stored: its version ('' = absent) and record JSON. */
interface Stored {
  version: string;
  json: string | undefined;
}

export class GroupStore {
  readonly keys: NotifyKeys;
  readonly #redis: RedisClient;
  readonly #maxAttempts: number;
  readonly #waiting = new Map<string, Waiter[]>();
  readonly #draining = new Set<string>();
  /** The last version read or written of recently used groups, oldest first (see `KNOWN_GROUPS`). */
  readonly #known = new Map<string, Stored>();

  constructor(options: GroupStoreOptions) {
    this.#redis = options.redis;
    this.keys = notifyKeys(options.prefix);
    this.#maxAttempts = options.maxAttempts ?? 30;
  }

  async get(groupKey: string): Promise<GroupRecord | undefined> {
    return (await this.#read(groupKey)).record;
  }

  /**
   * Applies `mutate` to the stored record atomically and resolves to its result. Concurrent calls
   * for the same group in this process are applied in call order in one write.
   */
  update<R>(groupKey: string, mutate: GroupMutator<R>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const queue = this.#waiting.get(groupKey) ?? [];
      queue.push({ mutate, resolve: resolve as (value: unknown) => void, reject });
      this.#waiting.set(groupKey, queue);
      if (!this.#draining.has(groupKey)) void this.#drain(groupKey);
    });
  }

  /** Group keys due at `now` (at most `limit`), leased until `leaseUntil` against other flushers. */
  async claimDue(now: number, leaseUntil: number, limit: number): Promise<string[]> {
    const due = await runScript(this.#redis, CLAIM_SCRIPT, [this.keys.wake], [now, leaseUntil, limit]);
    return Array.isArray(due) ? due.map(String) : [];
  }

  /** Takes `groupKey` if it is due at `now`, leased until `leaseUntil` (see `claimDue`). */
  async claim(groupKey: string, now: number, leaseUntil: number): Promise<boolean> {
    return (
      Number(
        await runScript(this.#redis, CLAIM_ONE_SCRIPT, [this.keys.wake], [now, leaseUntil, groupKey]),
      ) === 1
    );
  }

  /** Removes the wake entry of a group that no longer exists. */
  async forget(groupKey: string): Promise<void> {
    await runScript(this.#redis, FORGET_SCRIPT, [this.keys.group(groupKey), this.keys.wake], [groupKey]);
  }

  /** Groups that hold an open incident of `subject`. */
  async groupsOfSubject(subject: string): Promise<string[]> {
    return this.#redis.smembers(this.keys.subject(subject));
  }

  /** The wake score of a group (tests, diagnostics). */
  async wakeScore(groupKey: string): Promise<number | undefined> {
    const score = await this.#redis.zscore(this.keys.wake, groupKey);
    return score === null ? undefined : Number(score);
  }

  async #drain(groupKey: string): Promise<void> {
    this.#draining.add(groupKey);
    try {
      for (;;) {
        const batch = this.#waiting.get(groupKey);
        if (!batch || batch.length === 0) break;
        this.#waiting.delete(groupKey);
        try {
          const outcomes = await this.#apply(
            groupKey,
            batch.map((waiter) => waiter.mutate),
          );
          batch.forEach((waiter, index) => {
            const outcome = outcomes[index];
            if (outcome?.ok) waiter.resolve(outcome.value);
            else waiter.reject(outcome?.error ?? new Error('group update lost its outcome'));
          });
        } catch (error) {
          for (const waiter of batch) waiter.reject(error);
        }
      }
    } finally {
      this.#draining.delete(groupKey);
    }
  }

  async #read(groupKey: string): Promise<{ version: string; record: GroupRecord | undefined }> {
    const [version, json] = await this.#redis.hmget(this.keys.group(groupKey), 'v', 's');
    const stored = version && json ? { version, json } : { version: version ?? '', json: undefined };
    this.#remember(groupKey, stored);
    return this.#decode(groupKey, stored);
  }

  /** Parsed afresh each time: a mutator gets a record no other caller holds. */
  #decode(groupKey: string, stored: Stored): { version: string; record: GroupRecord | undefined } {
    if (stored.json === undefined) return { version: stored.version, record: undefined };
    try {
      return { version: stored.version, record: JSON.parse(stored.json) as GroupRecord };
    } catch {
      this.#known.delete(groupKey);
      throw new Error(`group ${groupKey}: stored state is not valid JSON`);
    }
  }

  #remember(groupKey: string, stored: Stored): void {
    this.#known.delete(groupKey);
    this.#known.set(groupKey, stored);
    if (this.#known.size > KNOWN_GROUPS) {
      const oldest = this.#known.keys().next();
      if (!oldest.done) this.#known.delete(oldest.value);
    }
  }

  async #apply(groupKey: string, mutators: readonly GroupMutator<unknown>[]): Promise<Outcome[]> {
    let known = this.#known.get(groupKey);
    for (let attempt = 1; ; attempt += 1) {
      // The first attempt starts from the remembered version when there is one (class comment).
      const { version, record } = known ? this.#decode(groupKey, known) : await this.#read(groupKey);
      const fromMemory = known !== undefined;
      known = undefined;
      let current = record;
      let changed = false;
      const outcomes: Outcome[] = mutators.map((mutate) => {
        try {
          const change = mutate(current);
          if (change.next !== undefined) {
            current = change.next ?? undefined;
            changed = true;
          }
          return { ok: true, value: change.result };
        } catch (error) {
          return { ok: false, error };
        }
      });
      // No change (or a mutator's error) is only an answer when seen on a fresh read: no
      // compare-and-set verifies it. Nor is deleting a group memory says is absent (`#write` has
      // nothing to write, so nothing checks the version: the group may exist by now).
      const unverified = !changed || (!record && !current) || outcomes.some((outcome) => !outcome.ok);
      if (fromMemory && unverified) continue;
      if (!changed) return outcomes;
      if (await this.#write(groupKey, version, record, current)) return outcomes;
      this.#known.delete(groupKey);
      // A remembered version replaced meanwhile is not contention: read and try again at once.
      if (fromMemory) continue;
      if (attempt >= this.#maxAttempts) throw new GroupContentionError(groupKey, attempt);
      await sleep(Math.random() * Math.min(100, 2 ** attempt));
    }
  }

  async #write(
    groupKey: string,
    version: string,
    before: GroupRecord | undefined,
    after: GroupRecord | undefined,
  ): Promise<boolean> {
    if (!before && !after) return true;
    const old = incidentSubjects(before);
    const now = incidentSubjects(after);
    const adds = [...now].filter((subject) => !old.has(subject));
    const removes = [...old].filter((subject) => !now.has(subject));
    const keys = [
      this.keys.group(groupKey),
      this.keys.wake,
      ...adds.map((subject) => this.keys.subject(subject)),
      ...removes.map((subject) => this.keys.subject(subject)),
    ];
    const written: Stored = after
      ? { version: uniqueToken(), json: JSON.stringify(after) }
      : { version: '', json: undefined };
    const args = after
      ? [
          version,
          written.version,
          written.json ?? '',
          after.wakeAt === undefined ? '' : Math.round(after.wakeAt),
          groupKey,
          adds.length,
        ]
      : [version, '', '', '', groupKey, adds.length];
    const ok = (await runScript(this.#redis, WRITE_SCRIPT, keys, args)) === 1;
    if (ok) this.#remember(groupKey, written);
    return ok;
  }
}
