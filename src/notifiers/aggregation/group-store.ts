import { setTimeout as sleep } from 'node:timers/promises';
import type { FleetEvent } from '../../events/types.js';
import { extendingInPlace, frozenLength, noteFrozen, startsWith } from '../../lib/appended.js';
import { PersistentMap } from '../../lib/persistent-map.js';
import { RecentMap } from '../../lib/recent-map.js';
import type { RedisClient } from '../../lib/redis-connection.js';
import { uniqueToken } from '../../lib/unique-token.js';
import { type NotifyKeys, notifyKeys } from '../../store/keys.js';
import { defineScript, type LuaScript, runScript } from '../../store/scripts.js';
import type { GroupRecord } from './group-record.js';
import type { IncidentState, Incidents } from './groups.js';

/**
 * Aggregation groups in Redis, shared by every replica. A group is stored in parts, so that a
 * change writes what it changed, not the whole group: a group of 5,000 open incidents and 5,000
 * pending events is megabytes of JSON, and a storm into it (a site going dark) used to rewrite all
 * of it for every event, which made the storm quadratic (4,000 robots down and back up into one
 * group: 3.0 GB written to Redis and 357 s of CPU; `npm run bench -- storm`).
 *
 * - `{p}:notify:group:<groupKey>` (hash): `v`, a version token (unique across replicas:
 *   lib/unique-token.ts); `h`, the record's JSON without the parts below; `i:<incident id>`, each
 *   open incident's JSON.
 * - Three lists beside it, each appended to between flushes (`LISTS`): `…:pending`, the pending
 *   events' JSON in arrival order; `…:closing`, the ids of pending resolutions of announced
 *   incidents; `…:recent`, the ids of the events taken lately (groups.ts, "Exactly once": those
 *   of the redelivery window, and at least the last 512; the oldest go as new ones come, and a
 *   write trims and appends instead of rewriting the list).
 *
 * A group written before the parts (the whole record's JSON in `s`) is read as it is and stored in
 * parts by its next change.
 *
 * Every change is a read-modify-write that commits only if the version is still the one read (a
 * Lua compare-and-set), retried with jittered back-off up to `maxAttempts` times; the same script
 * keeps the wake set (`{p}:notify:wake`, score = `record.wakeAt`) and the subject sets
 * (`{p}:notify:subject:<s>`, the groups holding an open incident of `s`) in step with the record,
 * so a group is never stored without its wake time. All keys share the `{p}` hash tag: one slot on
 * Redis Cluster.
 *
 * What a change writes is found by identity: mutators are pure (they return new objects and leave
 * their input alone, as groups.ts does), so an incident object or a pending array prefix that is
 * the same object as in the version read is unchanged. Every record the store hands to a mutator
 * is deep-frozen, so a mutator that modifies its input throws instead of leaving Redis and the
 * store's copy apart; but for the lists' arrays of a version the store wrote itself, which the
 * batch grows in place through `appended` (see `Stored`: a storm's pending events are copied
 * neither per event nor per write).
 *
 * Versions are tokens never used before, not counters: a group deleted and created again never
 * matches a version read from its previous life.
 *
 * Within one process, changes to the same group are queued and committed together (group commit):
 * a burst of 40 events into one group costs a few writes, not 40 contended ones. Across replicas
 * the compare-and-set orders them.
 *
 * Round trips and decoding: the store remembers the version and the decoded record it last read or
 * wrote of each group (`KNOWN_GROUPS` of them, the most recently used, none used longer than
 * `KNOWN_IDLE_MS` ago: lib/recent-map.ts), and a change's first
 * attempt starts from that instead of reading again. A group is typically read or written moments
 * before its next change (the dispatcher warms its groups while it records the incident; a flush
 * follows the dispatch that scheduled it; the hand-off's second write follows the first), so most
 * changes cost one round trip, not two, and no decoding. A remembered version another replica has
 * replaced fails the compare-and-set like any contention, and the next attempt reads: it costs a
 * round trip, never a lost change. An attempt from memory that changes nothing is not trusted
 * either (no compare-and-set checked it): it is made again on a fresh read.
 */

/** A mutator's answer: `next` undefined = no change, null = delete the group. */
export interface GroupChange<R> {
  result: R;
  next?: GroupRecord | null;
}

/**
 * Pure with respect to its input (it may run several times: once per attempt). The changes of one
 * batch run inside `extendingInPlace` (lib/appended.ts): an array the previous change appended to
 * may grow in place, so a change keeps nothing of its input's arrays past its return.
 */
export type GroupMutator<R> = (current: GroupRecord | undefined) => GroupChange<R>;

export class GroupContentionError extends Error {
  constructor(groupKey: string, attempts: number) {
    super(`group ${groupKey} changed under us ${attempts} times in a row; giving up for now`);
    this.name = 'GroupContentionError';
  }
}

/** Pending events per RPUSH in the write script. */
const PUSH_SLICE = 1_000;

/**
 * KEYS: group, wake, the three lists (`LISTS` order), then `ARGV[6]` subject sets to add the group
 * to, then subject sets to remove it from. ARGV: expected version ('' = must not exist), new
 * version ('' = delete), header JSON, wake score ('' = none), group key (the wake and subject set
 * member), number of sets to add to; then per list how it changes (`keep`, `append`, `replace`,
 * or `drop:<n>`: the first n items go, then the items are appended), a count N and N items; then the counts of incident fields to set S and to delete D, S pairs of
 * field and JSON, and D fields. Returns 1 when written, 0 when the version did not match.
 */
const WRITE_LUA = `
local current = redis.call('HGET', KEYS[1], 'v')
if (current or '') ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1], KEYS[3], KEYS[4], KEYS[5])
  redis.call('ZREM', KEYS[2], ARGV[5])
else
  redis.call('HSET', KEYS[1], 'v', ARGV[2], 'h', ARGV[3])
  redis.call('HDEL', KEYS[1], 's')
  if ARGV[4] == '' then
    redis.call('ZREM', KEYS[2], ARGV[5])
  else
    redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
  end
  local at = 7
  for list = 3, 5 do
    local mode, count = ARGV[at], tonumber(ARGV[at + 1])
    at = at + 2
    if mode == 'replace' then redis.call('DEL', KEYS[list]) end
    if string.sub(mode, 1, 5) == 'drop:' then
      redis.call('LTRIM', KEYS[list], tonumber(string.sub(mode, 6)), -1)
    end
    -- In slices: unpack is bounded by Lua's stack.
    local done = 0
    while done < count do
      local n = math.min(count - done, ${PUSH_SLICE})
      redis.call('RPUSH', KEYS[list], unpack(ARGV, at + done, at + done + n - 1))
      done = done + n
    end
    at = at + count
  end
  local sets, deletes = tonumber(ARGV[at]), tonumber(ARGV[at + 1])
  at = at + 2
  for j = 0, sets - 1 do redis.call('HSET', KEYS[1], ARGV[at + 2 * j], ARGV[at + 2 * j + 1]) end
  at = at + 2 * sets
  for j = 0, deletes - 1 do redis.call('HDEL', KEYS[1], ARGV[at + j]) end
end
local adds = tonumber(ARGV[6])
for i = 6, #KEYS do
  if i < 6 + adds then
    redis.call('SADD', KEYS[i], ARGV[5])
  else
    redis.call('SREM', KEYS[i], ARGV[5])
  end
end
return 1
`;

/** KEYS: group, the three lists. The group's hash (flat) and its lists, read together. */
const READ_LUA = `
return {
  redis.call('HGETALL', KEYS[1]),
  redis.call('LRANGE', KEYS[2], 0, -1),
  redis.call('LRANGE', KEYS[3], 0, -1),
  redis.call('LRANGE', KEYS[4], 0, -1),
}
`;

/**
 * KEYS: groups. ARGV: an incident field. Per group: 1 if it holds that incident open, 2 if it is
 * stored whole (written before the parts: the caller reads it), else 0.
 */
const HOLDS_LUA = `
local out = {}
for i, key in ipairs(KEYS) do
  if redis.call('HEXISTS', key, ARGV[1]) == 1 then out[i] = 1
  elseif redis.call('HEXISTS', key, 's') == 1 then out[i] = 2
  else out[i] = 0 end
end
return out
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

/**
 * How long the store remembers a group's version after it last read or wrote it. The changes that
 * follow one another (a dispatch, the flush `group_wait` later, the hand-off) come within it; a
 * group's next change after that (a reminder hours later, the next event) costs one read. Without
 * it, the groups of one storm stayed in memory for good: a site dark at 100,000 entities opens
 * thousands of groups of about 2.6 KB each.
 */
export const KNOWN_IDLE_MS = 120_000;

const WRITE_SCRIPT: LuaScript = { name: 'fleetwatchNotifyGroupWrite', lua: WRITE_LUA };
const READ_SCRIPT: LuaScript = { name: 'fleetwatchNotifyGroupRead', lua: READ_LUA, numberOfKeys: 4 };
const HOLDS_SCRIPT: LuaScript = { name: 'fleetwatchNotifyGroupHolds', lua: HOLDS_LUA };
const CLAIM_SCRIPT: LuaScript = { name: 'fleetwatchNotifyClaim', lua: CLAIM_LUA, numberOfKeys: 1 };
const CLAIM_ONE_SCRIPT: LuaScript = { name: 'fleetwatchNotifyClaimOne', lua: CLAIM_ONE_LUA, numberOfKeys: 1 };
const FORGET_SCRIPT: LuaScript = { name: 'fleetwatchNotifyForget', lua: FORGET_LUA, numberOfKeys: 2 };

export interface GroupStoreOptions {
  /** A producer connection; not closed by the store. */
  redis: RedisClient;
  prefix?: string;
  /** Compare-and-set attempts before `GroupContentionError` (the caller's job is retried). */
  maxAttempts?: number;
  /** Clock (epoch ms) for how long a remembered version is kept (`KNOWN_IDLE_MS`); `Date.now` by default. */
  now?: () => number;
}

interface Waiter {
  mutate: GroupMutator<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * A group as the store last read or wrote it: its version ('' = absent), its record (deep-frozen),
 * and how Redis holds it (`parts`; `whole`: the record's JSON in `s`, written before the parts;
 * `none`: nothing).
 *
 * A version this store wrote keeps its lists' arrays unfrozen (their items are frozen) and owns
 * them (`own`): the next batch grows them in place instead of copying them (`extendingInPlace`,
 * lib/appended.ts), so a storm's pending events are not copied once per write. `lengths` says how
 * long each list was when stored, which is what a write compares against; a batch that grew them
 * and did not write leaves the version unusable, and it is forgotten.
 */
interface Stored {
  version: string;
  record: GroupRecord | undefined;
  layout: 'parts' | 'whole' | 'none';
  lengths: Readonly<Record<ListField, number>>;
  own: boolean;
}

const INCIDENT_FIELD = 'i:';

/**
 * The state's arrays stored as lists beside the group's hash, in the write script's order: each
 * grows by appends between two flushes, so a change sends only what it appended.
 */
const LISTS = [
  { field: 'pending', list: 'pending', json: true },
  { field: 'closing', list: 'closing', json: false },
  { field: 'recentIds', list: 'recent', json: false },
] as const;

type ListField = (typeof LISTS)[number]['field'];

function listOf(record: GroupRecord | undefined, field: ListField): readonly unknown[] | undefined {
  return record?.state[field];
}

/** How long each list of `record` is now. */
function lengthsOf(record: GroupRecord | undefined): Record<ListField, number> {
  return {
    pending: record?.state.pending.length ?? 0,
    closing: record?.state.closing?.length ?? 0,
    recentIds: record?.state.recentIds.length ?? 0,
  };
}

/** The lists' arrays of a record (the ones a batch may grow in place when the store owns them). */
function listsOf(record: GroupRecord | undefined): Array<readonly unknown[]> {
  return LISTS.map(({ field }) => listOf(record, field)).filter((list) => list !== undefined);
}

/** Deep-freezes `record` but its lists' arrays themselves (their items are frozen): see `Stored`. */
function freezeKeepingLists(record: GroupRecord): GroupRecord {
  const lists = new Set(listsOf(record));
  for (const list of lists) {
    for (let index = frozenLength(list); index < list.length; index += 1) deepFreeze(list[index]);
    noteFrozen(list);
  }
  for (const value of Object.values(record.state))
    if (!lists.has(value as readonly unknown[])) deepFreeze(value);
  Object.freeze(record.state);
  for (const value of Object.values(record)) deepFreeze(value);
  return Object.freeze(record);
}

/**
 * Freezes `value` and everything in it, stopping at what is frozen already (shared with an older
 * version). An array appended to a frozen one (lib/appended.ts) has only its new items to freeze.
 */
function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (let index = frozenLength(value); index < value.length; index += 1) deepFreeze(value[index]);
    noteFrozen(value);
  } else for (const key in value) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}

/** The record without its incidents and lists: the `h` field. */
function headerJson(record: GroupRecord): string {
  const {
    pending: _pending,
    incidents: _incidents,
    closing: _closing,
    recentIds: _recent,
    ...state
  } = record.state;
  return JSON.stringify({ ...record, state });
}

/**
 * What to write of one list: only the new items when the stored list is a prefix of the next one
 * (the same objects), or when the next one is the stored one with items dropped from its front
 * and items appended (a window sliding forward: the recent ids); else all of them;
 * nothing when it is the same array.
 */
function listChange(before: Stored, after: GroupRecord, field: ListField, json: boolean): unknown[] {
  const next = listOf(after, field) ?? [];
  const old = before.layout === 'parts' ? (listOf(before.record, field) ?? []) : undefined;
  // What Redis holds is the first `stored` items of `old` (a batch may have grown it since).
  const stored = before.lengths[field];
  const encode = (items: readonly unknown[]) =>
    items.map((item) => (json ? JSON.stringify(item) : String(item)));
  if (old && next.length === stored && (old === next || stored === 0)) return ['keep', 0];
  if (old && startsWith(next, old, stored)) {
    const added = encode(next.slice(stored));
    return ['append', added.length, ...added];
  }
  const dropped = old ? slidBy(old, stored, next) : undefined;
  if (old && dropped !== undefined) {
    const added = encode(next.slice(stored - dropped));
    return [`drop:${dropped}`, added.length, ...added];
  }
  return ['replace', next.length, ...encode(next)];
}

/**
 * How many items `next` dropped from the front of the first `length` items of `old` when the rest
 * of them begins it (the same items in the same order); undefined when it is not so.
 */
function slidBy(old: readonly unknown[], length: number, next: readonly unknown[]): number | undefined {
  if (next.length === 0) return undefined;
  const dropped = old.indexOf(next[0]);
  if (dropped <= 0 || dropped >= length) return undefined;
  const kept = length - dropped;
  if (kept > next.length) return undefined;
  for (let index = 0; index < kept; index += 1) if (next[index] !== old[dropped + index]) return undefined;
  return dropped;
}

/** What a write does to the group's incidents and to the subject sets that list the group. */
interface IncidentWrite {
  /** Field, JSON, field, JSON, …: new or changed incidents. */
  set: string[];
  /** Fields of incidents closed. */
  deleted: string[];
  /** Subjects whose set gains the group, and whose set loses it. */
  adds: string[];
  removes: string[];
}

/**
 * Per incident map, how many of its incidents each subject has. Maps are immutable, so the counts
 * of the map a write replaces are known from when it was read or written, and a write carries
 * them over by what changed (`incidentWrite`) instead of walking the new map.
 */
const subjectCounts = new WeakMap<Incidents, PersistentMap<number>>();

function countsOf(incidents: Incidents): PersistentMap<number> {
  const known = subjectCounts.get(incidents);
  if (known) return known;
  let counts = PersistentMap.empty<number>();
  incidents.forEach(({ subject }) => {
    counts = counts.set(subject, (counts.get(subject) ?? 0) + 1);
  });
  subjectCounts.set(incidents, counts);
  return counts;
}

const NO_INCIDENTS: Incidents = PersistentMap.empty<IncidentState>();
Object.freeze(NO_INCIDENTS);

/**
 * What changed between the stored incidents and the next ones (`PersistentMap.diff`, which skips
 * what the two versions share): the fields to set (new or changed incidents, frozen here) and to
 * delete, and the subject sets to change.
 */
function incidentWrite(before: Stored, after: GroupRecord | undefined): IncidentWrite {
  // A group stored whole has no incident fields yet: all are written.
  const stored = before.layout === 'parts' ? (before.record?.state.incidents ?? NO_INCIDENTS) : NO_INCIDENTS;
  // The subject sets follow the record whatever its layout: a group stored whole is in them too.
  const listed = before.record?.state.incidents ?? NO_INCIDENTS;
  const next = after?.state.incidents ?? NO_INCIDENTS;
  const write: IncidentWrite = { set: [], deleted: [], adds: [], removes: [] };
  PersistentMap.diff(stored, next, (id, _was, now) => {
    if (now === undefined) write.deleted.push(INCIDENT_FIELD + id);
    else write.set.push(INCIDENT_FIELD + id, JSON.stringify(deepFreeze(now)));
  });
  const listedCounts = countsOf(listed);
  let counts = listedCounts;
  const touched = new Set<string>();
  PersistentMap.diff(listed, next, (_id, was, now) => {
    if (was?.subject === now?.subject) return;
    if (was) {
      const left = (counts.get(was.subject) ?? 1) - 1;
      counts = left === 0 ? counts.delete(was.subject) : counts.set(was.subject, left);
      touched.add(was.subject);
    }
    if (now) {
      counts = counts.set(now.subject, (counts.get(now.subject) ?? 0) + 1);
      touched.add(now.subject);
    }
  });
  if (!subjectCounts.has(next)) subjectCounts.set(next, counts);
  for (const subject of touched) {
    if (counts.has(subject) && !listedCounts.has(subject)) write.adds.push(subject);
    else if (!counts.has(subject) && listedCounts.has(subject)) write.removes.push(subject);
  }
  return write;
}

function parse<T>(groupKey: string, json: string): T {
  try {
    return JSON.parse(json) as T;
  } catch {
    throw new Error(`group ${groupKey}: stored state is not valid JSON`);
  }
}

/** A group from its hash (flat field/value pairs) and lists, as the read script returns them. */
function decodeStored(
  groupKey: string,
  flat: readonly string[],
  lists: ReadonlyArray<readonly string[]>,
): Stored {
  let version = '';
  let whole: string | undefined;
  let header: string | undefined;
  let incidents: Incidents = PersistentMap.empty();
  for (let index = 0; index + 1 < flat.length; index += 2) {
    const field = flat[index]!;
    const value = flat[index + 1]!;
    if (field === 'v') version = value;
    else if (field === 's') whole = value;
    else if (field === 'h') header = value;
    else if (field.startsWith(INCIDENT_FIELD)) {
      incidents = incidents.set(field.slice(INCIDENT_FIELD.length), parse<IncidentState>(groupKey, value));
    }
  }
  if (whole !== undefined) {
    const record = parse<GroupRecord>(groupKey, whole);
    // Written as JSON, the incidents are a plain object.
    const open = record.state.incidents as unknown as Record<string, IncidentState> | undefined;
    record.state = { ...record.state, incidents: PersistentMap.from(Object.entries(open ?? {})) };
    return {
      version,
      record: deepFreeze(record),
      layout: 'whole',
      lengths: lengthsOf(undefined),
      own: false,
    };
  }
  if (header === undefined) {
    return { version, record: undefined, layout: 'none', lengths: lengthsOf(undefined), own: false };
  }
  const record = parse<GroupRecord>(groupKey, header);
  const [pending = [], closing = [], recent = []] = lists;
  record.state = {
    ...record.state,
    pending: pending.map((json) => parse<FleetEvent>(groupKey, json)),
    incidents,
    // Absent rather than empty, as the state machine leaves it.
    ...(closing.length > 0 ? { closing: [...closing] } : {}),
    recentIds: [...recent],
  };
  return { version, record: deepFreeze(record), layout: 'parts', lengths: lengthsOf(record), own: false };
}

export class GroupStore {
  readonly keys: NotifyKeys;
  readonly #redis: RedisClient;
  readonly #maxAttempts: number;
  readonly #waiting = new Map<string, Waiter[]>();
  readonly #draining = new Set<string>();
  /** The last version read or written of recently used groups (see `KNOWN_GROUPS`, `KNOWN_IDLE_MS`). */
  readonly #known: RecentMap<string, Stored>;

  constructor(options: GroupStoreOptions) {
    this.#redis = options.redis;
    this.keys = notifyKeys(options.prefix);
    this.#maxAttempts = options.maxAttempts ?? 30;
    this.#known = new RecentMap({
      maxEntries: KNOWN_GROUPS,
      maxIdleMs: KNOWN_IDLE_MS,
      ...(options.now ? { now: options.now } : {}),
    });
    for (const script of [WRITE_SCRIPT, READ_SCRIPT, HOLDS_SCRIPT]) defineScript(this.#redis, script);
  }

  /** The group as stored now (a fresh read); deep-frozen. */
  async get(groupKey: string): Promise<GroupRecord | undefined> {
    return (await this.#read(groupKey)).record;
  }

  /**
   * Reads the group unless the store remembers a version of it: what the next `update` starts
   * from. A dispatch warms its groups while it records the incident, so its change costs one
   * round trip.
   */
  async warm(groupKey: string): Promise<void> {
    if (!this.#known.has(groupKey)) await this.#read(groupKey);
  }

  /**
   * Of `groupKeys`, those holding `incident` open (`<subject>#<key>`), asked of Redis without
   * reading the groups (a resolution asks it of every group of its subject).
   */
  async holding(groupKeys: readonly string[], incident: string): Promise<string[]> {
    if (groupKeys.length === 0) return [];
    const answers = (await runScript(
      this.#redis,
      HOLDS_SCRIPT,
      groupKeys.map((key) => this.keys.group(key)),
      [INCIDENT_FIELD + incident],
    )) as number[];
    const holders: string[] = [];
    for (const [index, key] of groupKeys.entries()) {
      const answer = Number(answers[index]);
      if (answer === 1) holders.push(key);
      else if (answer === 2 && (await this.get(key))?.state.incidents.has(incident)) holders.push(key);
    }
    return holders;
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

  async #read(groupKey: string): Promise<Stored> {
    const [flat, ...lists] = (await runScript(this.#redis, READ_SCRIPT, this.#groupKeys(groupKey), [])) as [
      string[],
      ...string[][],
    ];
    let stored: Stored;
    try {
      stored = decodeStored(groupKey, flat, lists);
    } catch (error) {
      this.#known.delete(groupKey);
      throw error;
    }
    this.#remember(groupKey, stored);
    return stored;
  }

  #remember(groupKey: string, stored: Stored): void {
    this.#known.set(groupKey, stored);
  }

  async #apply(groupKey: string, mutators: readonly GroupMutator<unknown>[]): Promise<Outcome[]> {
    let known = this.#known.get(groupKey);
    for (let attempt = 1; ; attempt += 1) {
      // The first attempt starts from the remembered version when there is one (class comment).
      const stored = known ?? (await this.#read(groupKey));
      const fromMemory = known !== undefined;
      known = undefined;
      const record = stored.record;
      let current = record;
      let changed = false;
      // One batch, one write: the arrays one change appended to, the next extends in place, and
      // those of a version this store wrote too (`Stored`).
      const grows = stored.own ? listsOf(record) : [];
      const outcomes: Outcome[] = extendingInPlace(
        () =>
          mutators.map((mutate): Outcome => {
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
          }),
        grows,
      );
      // No change (or a mutator's error) is only an answer when seen on a fresh read: no
      // compare-and-set verifies it. Nor is deleting a group memory says is absent (`#write` has
      // nothing to write, so nothing checks the version: the group may exist by now).
      const unverified = !changed || (!record && !current) || outcomes.some((outcome) => !outcome.ok);
      // Unless this batch writes, a version whose lists it may have grown is no longer what Redis
      // holds: forgotten, so the next change reads.
      if (stored.own && unverified) this.#known.delete(groupKey);
      if (fromMemory && unverified) continue;
      if (!changed) return outcomes;
      let written: boolean;
      try {
        written = await this.#write(groupKey, stored, current);
      } catch (error) {
        if (stored.own) this.#known.delete(groupKey);
        throw error;
      }
      if (written) return outcomes;
      this.#known.delete(groupKey);
      // A remembered version replaced meanwhile is not contention: read and try again at once.
      if (fromMemory) continue;
      if (attempt >= this.#maxAttempts) throw new GroupContentionError(groupKey, attempt);
      await sleep(Math.random() * Math.min(100, 2 ** attempt));
    }
  }

  /** The group's hash and its lists (`LISTS` order). */
  #groupKeys(groupKey: string): string[] {
    return [this.keys.group(groupKey), ...LISTS.map(({ list }) => this.keys.groupList(groupKey, list))];
  }

  /** Writes `after` over `before` (what the compare-and-set expects), sending only what changed. */
  async #write(groupKey: string, before: Stored, after: GroupRecord | undefined): Promise<boolean> {
    if (!before.record && !after) return true;
    const incidents = incidentWrite(before, after);
    const [group, ...lists] = this.#groupKeys(groupKey);
    const keys = [
      group!,
      this.keys.wake,
      ...lists,
      ...incidents.adds.map((subject) => this.keys.subject(subject)),
      ...incidents.removes.map((subject) => this.keys.subject(subject)),
    ];
    let args: Array<string | number>;
    let written: Stored;
    if (after) {
      written = {
        version: uniqueToken(),
        record: freezeKeepingLists(after),
        layout: 'parts',
        lengths: lengthsOf(after),
        own: true,
      };
      args = [
        before.version,
        written.version,
        headerJson(after),
        after.wakeAt === undefined ? '' : Math.round(after.wakeAt),
        groupKey,
        incidents.adds.length,
        ...LISTS.flatMap(
          ({ field, json }) => listChange(before, after, field, json) as Array<string | number>,
        ),
        incidents.set.length / 2,
        incidents.deleted.length,
        ...incidents.set,
        ...incidents.deleted,
      ];
    } else {
      written = { version: '', record: undefined, layout: 'none', lengths: lengthsOf(undefined), own: false };
      args = [before.version, '', '', '', groupKey, incidents.adds.length];
    }
    const ok = (await runScript(this.#redis, WRITE_SCRIPT, keys, args)) === 1;
    if (ok) this.#remember(groupKey, written);
    return ok;
  }
}
