import { hash, randomBytes } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import { toFleetEvent } from '../events/cloud-event.js';
import type { EntityKind, EventDraft, FleetEvent, ObservationError } from '../events/types.js';
import type { RedisClient } from '../lib/redis-connection.js';
import { slices } from '../lib/slices.js';
import { byShard, keysOf, pipelineByShard, type ShardGroup } from './by-shard.js';
import {
  CHANGE_FEED_MAX,
  COMMIT_SCRIPT,
  type CommitKeys,
  type CommitReply,
  parseCommitReply,
  SNAPSHOT_FIELDS,
} from './commit-script.js';
import { DEFAULT_EVENT_LOG_CAP } from './event-log.js';
import { CLOSED_MAX, CLOSED_RETENTION_MS, encodeIncidentOps, homeSubject, incidentOps } from './incidents.js';
import { type ShardKeys, type SnapshotKind, type StoreKeys, storeKeys } from './keys.js';
import { defineScript, type LuaScript, queueScript, runScript } from './scripts.js';

/**
 * Which snapshot: one facet (`power`, `link`, `health`, ...) of one entity, or a list-level one
 * (`fleet`: `{kind: 'fleet', id: 'vehicle', facet: 'membership'}`).
 *
 * The events a commit produces get their CloudEvents subject from `toFleetEvent`: the entity the
 * draft names in its data (`vehicleId`, `deviceId`, `upstream`), else, for a vehicle or robot ref,
 * `ref.id`. Drafts committed on a `fleet` ref must name their entity.
 */
export interface SnapshotRef {
  kind: SnapshotKind;
  id: string;
  facet: string;
  /**
   * The shard the snapshot lives in when it is not its subject's: each shard keeps its part of a
   * kind's membership list, whose events are about that shard's entities (keys.ts).
   */
  shard?: number;
}

export interface SnapshotRecord {
  /** 0 when there is no snapshot yet. */
  version: number;
  state: unknown | undefined;
  /** Observation time of the committed state. */
  observedAt?: string;
  /** The same time in epoch ms, as the store keeps it beside the text; only `readStamps` reads it. */
  observedAtMs?: number;
  /** Time of the last successful observation. */
  lastSeenAt?: string;
  /** The last observation error; cleared by a successful observation. */
  lastError?: ObservationError;
  /** Time of the last poll recorded by `touch` (a poll that changed nothing); see also `observedAt`. */
  lastPolledAt?: string;
}

/** A poll that changed nothing: record when it happened and how it went, without a new version. */
export interface TouchItem {
  ref: SnapshotRef;
  /** ISO 8601 time of the poll. */
  polledAt: string;
  /** Absent (or undefined): left as stored. */
  lastSeenAt?: string | undefined;
  /** Absent (or undefined): left as stored; `null`: cleared. */
  lastError?: ObservationError | null | undefined;
}

export interface SnapshotNext {
  state: unknown;
  /** ISO 8601; becomes the events' `time`. */
  observedAt: string;
  /** Absent (or undefined): left as stored. */
  lastSeenAt?: string | undefined;
  /** Absent (or undefined): left as stored; `null`: cleared. */
  lastError?: ObservationError | null | undefined;
}

/** Index maintenance for vehicle/robot refs, in the same atomic call. */
export type IndexOp = 'add' | 'remove';

export interface CommitItem {
  ref: SnapshotRef;
  expectedVersion: number;
  next: SnapshotNext;
  drafts: readonly EventDraft[];
  /** `add`: ZADD NX the id to `{p}:index:<kind>` (score = observedAt); `remove`: ZREM it. */
  index?: IndexOp;
}

export type CommitResult =
  | { committed: true; version: number; events: FleetEvent[] }
  | {
      committed: false;
      currentVersion: number;
      /**
       * `version-conflict`: another writer committed first — re-read, re-detect, retry. (Also
       * after the store was found emptied: the guard has sorted that out, and the retry reads the
       * store as it is now.)
       * `stale-observation`: the stored reading is newer than this one — drop this reading.
       * `incident-not-open`: an acknowledged incident is not open (any more).
       */
      reason: 'version-conflict' | 'stale-observation' | 'incident-not-open';
    };

export interface SnapshotStoreOptions {
  /** A producer-style connection (see `createProducerConnection`); the store does not close it. */
  redis: RedisClient;
  prefix?: string;
  /** Becomes the events' `source`: `fleetwatch/<installation>`. */
  installation: string;
  /** Event log cap (XADD MAXLEN ~), split evenly over the shards. Default 100,000. */
  eventLogCap?: number;
  /** How many shards the per-entity keys are spread over (`redis.shards`; keys.ts). Default 1. */
  shards?: number;
  /**
   * Commits only while the store marker is the one the guard knows (store-marker.ts): a store
   * emptied under a running daemon is then noticed by the first commit, which nothing writes
   * until the guard has carried the open incidents over. Without it, commits are not checked.
   */
  guard?: StoreGuard;
}

/** A commit moved shard `shard`'s incidents revision to `revision` (the store guard follows it). */
export interface IncidentsMoved {
  shard: number;
  revision: number;
}

/** What the snapshot store asks of whoever guards it (the store marker's guard: store-marker.ts, pollers/store-guard.ts). */
export interface StoreGuard {
  /** The marker epoch this process knows; establishes one first when it knows none. */
  epoch(): Promise<string>;
  /**
   * A commit found a marker other than the known one (or none): the store was emptied. Resolves
   * once this process knows the marker again (it announced the loss, or adopted the new marker).
   */
  lost(): Promise<void>;
  /**
   * A commit of this process changed incident records: these events did, and moved the incidents
   * revision of shard `shard` to `revision`.
   */
  incidentsChanged?(events: readonly FleetEvent[], moved?: IncidentsMoved): void;
}

/** Thrown by `commitMany` when Redis rejected some items; `results` holds every item's outcome. */
export class CommitBatchError extends Error {
  constructor(readonly results: ReadonlyArray<CommitResult | Error>) {
    const failed = results.filter((result) => result instanceof Error);
    super(`${failed.length} of ${results.length} snapshot commits failed: ${(failed[0] as Error).message}`);
    this.name = 'CommitBatchError';
  }
}

const EVENT_ID_LENGTH = 26;

/** The state of a record as Redis held it (JSON text), for `storedStateJson`. */
const storedJson = new WeakMap<SnapshotRecord, string>();

/**
 * The JSON text a record's state was decoded from, if it came from `read`. A caller that has the
 * next state as JSON can tell "unchanged" by comparing text, without decoding or deep comparison.
 */
export function storedStateJson(record: SnapshotRecord): string | undefined {
  return storedJson.get(record);
}

/**
 * Stable event id from the snapshot key, the version the commit creates, the observation time and
 * the draft's position. Computed before the commit, so the outbox entry, the log entry, the BullMQ
 * job id and every retried hand-off carry the same id. The observation time guards against a
 * snapshot that was deleted and recreated reusing old ids. `evt_` + base64url: no `:`, never all
 * digits (BullMQ job id rules).
 */
export function eventId(snapshotKey: string, version: number, observedAtMs: number, index: number): string {
  const digest = hash('sha256', `${snapshotKey}\n${version}\n${observedAtMs}\n${index}`, 'base64url');
  return `evt_${digest}`.slice(0, EVENT_ID_LENGTH);
}

function parseTime(value: string, what: string): number {
  const ms = Date.parse(value);
  if (!Number.isFinite(ms))
    throw new RangeError(`${what} is not a valid ISO 8601 time: ${JSON.stringify(value)}`);
  return ms;
}

function isEntityKind(kind: SnapshotKind): kind is EntityKind {
  return kind === 'vehicle' || kind === 'robot';
}

const READ_FIELDS = [
  SNAPSHOT_FIELDS.version,
  SNAPSHOT_FIELDS.state,
  SNAPSHOT_FIELDS.observedAt,
  SNAPSHOT_FIELDS.lastSeenAt,
  SNAPSHOT_FIELDS.lastError,
  SNAPSHOT_FIELDS.lastPolledAt,
] as const;

const HEADER_FIELDS = READ_FIELDS.filter((field) => field !== SNAPSHOT_FIELDS.state);
/** The time in ms, not its text: a reader comparing stamps every scrape need not parse 100,000 times. */
const STAMP_FIELDS = [SNAPSHOT_FIELDS.version, SNAPSHOT_FIELDS.observedAtMs] as const;
/** Every field a read can ask for, in the order `#decode` takes them. */
const DECODED_FIELDS = [...READ_FIELDS, SNAPSHOT_FIELDS.observedAtMs] as const;

/**
 * Reads and touches go as one script call per shard for up to this many snapshots: one command
 * instead of one per snapshot is about half the client's CPU per snapshot (encoding, reply
 * objects), and a call this size keeps Redis busy for about a millisecond.
 */
export const SCRIPT_BATCH = 500;

/** HMGET of the fields (ARGV) for each key; one flat reply, `#ARGV` values per key. */
const READ_LUA = `
local out = {}
local n = 0
for _, key in ipairs(KEYS) do
  local values = redis.call('HMGET', key, unpack(ARGV))
  for j = 1, #ARGV do
    n = n + 1
    out[n] = values[j]
  end
end
return out
`;

/**
 * Per key three ARGV: the poll time (always set), the last-seen time ('' leaves it) and the error
 * ('' leaves it, '-' clears it, else its JSON, which is an object).
 */
const TOUCH_LUA = `
for i, key in ipairs(KEYS) do
  local at = 3 * i - 2
  if ARGV[at + 1] == '' then redis.call('HSET', key, '${SNAPSHOT_FIELDS.lastPolledAt}', ARGV[at])
  else redis.call('HSET', key, '${SNAPSHOT_FIELDS.lastPolledAt}', ARGV[at], '${SNAPSHOT_FIELDS.lastSeenAt}', ARGV[at + 1]) end
  local err = ARGV[at + 2]
  if err == '-' then redis.call('HDEL', key, '${SNAPSHOT_FIELDS.lastError}')
  elseif err ~= '' then redis.call('HSET', key, '${SNAPSHOT_FIELDS.lastError}', err) end
end
return #KEYS
`;

export const READ_SCRIPT: LuaScript = { name: 'fleetwatchSnapshotRead', lua: READ_LUA };
export const TOUCH_SCRIPT: LuaScript = { name: 'fleetwatchSnapshotTouch', lua: TOUCH_LUA };

/** Splits items into script calls: per shard, at most `SCRIPT_BATCH` each, with their batch positions. */
function scriptCalls<T>(items: readonly T[], shardOf: (item: T) => number): ShardGroup<T>[] {
  const calls: ShardGroup<T>[] = [];
  for (const group of byShard(items, shardOf)) {
    for (let start = 0; start < group.items.length; start += SCRIPT_BATCH) {
      calls.push({
        shard: group.shard,
        items: group.items.slice(start, start + SCRIPT_BATCH),
        positions: group.positions.slice(start, start + SCRIPT_BATCH),
      });
    }
  }
  return calls;
}

interface PreparedCommit {
  keys: CommitKeys;
  args: Array<string | number>;
  events: FleetEvent[];
  /** The events change incident records. */
  incidents: boolean;
  /** The shard the commit runs in. */
  shard: number;
}

/** Events that belong to no snapshot (an acknowledgement), for `SnapshotStore.commitEvents`. */
export interface EventsItem {
  drafts: readonly EventDraft[];
  /** ISO 8601; becomes the events' `time`. */
  at: string;
}

export class SnapshotStore {
  readonly keys: StoreKeys;
  readonly #redis: RedisClient;
  readonly #source: string;
  readonly #cap: number;
  readonly #guard: StoreGuard | undefined;

  constructor(options: SnapshotStoreOptions) {
    this.#redis = options.redis;
    this.keys = storeKeys(options.prefix, options.shards);
    this.#source = `fleetwatch/${options.installation}`;
    const cap = options.eventLogCap ?? DEFAULT_EVENT_LOG_CAP;
    this.#guard = options.guard;
    if (!Number.isInteger(cap) || cap < 1) throw new RangeError('eventLogCap must be a positive integer');
    // Each shard keeps its share of the log: together they hold about `eventLogCap` events.
    this.#cap = Math.ceil(cap / this.keys.shards);
    defineScript(this.#redis, COMMIT_SCRIPT);
    defineScript(this.#redis, READ_SCRIPT);
    defineScript(this.#redis, TOUCH_SCRIPT);
  }

  keyOf(ref: SnapshotRef): string {
    return this.keys.snapshot(ref.kind, ref.id, ref.facet, ref.shard);
  }

  /** The shard holding a snapshot: the one it names, else its subject's (keys.ts `subjectOf`). */
  shardOf(ref: SnapshotRef): number {
    return ref.shard ?? this.keys.shardOf(this.keys.subjectOf(ref.kind, ref.id, ref.facet));
  }

  // Made once: a callback made per call is optimized anew per call (ARCHITECTURE.md, *Hot paths*).
  readonly #shardOfRef = (ref: SnapshotRef): number => this.shardOf(ref);
  readonly #keyOfRef = (ref: SnapshotRef): string => this.keyOf(ref);
  readonly #shardOfItem = (item: TouchItem): number => this.shardOf(item.ref);
  readonly #queueTouch = (pipeline: ChainableCommander, call: ShardGroup<TouchItem>): void => {
    const args: string[] = [];
    const keys = new Array<string>(call.items.length);
    for (let i = 0; i < call.items.length; i += 1) {
      const item = call.items[i] as TouchItem;
      const error = item.lastError === null ? '-' : item.lastError ? JSON.stringify(item.lastError) : '';
      args.push(item.polledAt, item.lastSeenAt ?? '', error);
      keys[i] = this.keyOf(item.ref);
    }
    queueScript(pipeline, TOUCH_SCRIPT, keys, args);
  };

  /**
   * Reads many snapshots in one round trip (one script call per shard and `SCRIPT_BATCH`
   * snapshots, all in one pipeline; on a Cluster one pipeline per shard, in parallel); results in
   * `refs` order.
   */
  read(refs: readonly SnapshotRef[]): Promise<SnapshotRecord[]> {
    return this.#read(refs, READ_FIELDS);
  }

  /**
   * Like `read`, without the state (always undefined): what a caller needs to tell whether the
   * copy it decoded earlier is still current, without moving a large state over the wire.
   */
  readHeaders(refs: readonly SnapshotRef[]): Promise<SnapshotRecord[]> {
    return this.#read(refs, HEADER_FIELDS);
  }

  /**
   * Only the version and the observation time in ms (`observedAtMs`) of each snapshot, the rest
   * undefined: what tells a reader that keeps decoded states whether a state changed, for the least
   * Redis and client work.
   */
  readStamps(refs: readonly SnapshotRef[]): Promise<SnapshotRecord[]> {
    return this.#read(refs, STAMP_FIELDS);
  }

  /**
   * Where each shard's change feed ends now (its last entry's id; '' when it has none): a reader
   * that reads everything takes these first, then follows the feed from them (`changesSince`).
   */
  async changeCursors(): Promise<string[]> {
    const replies = await pipelineByShard(
      this.#redis,
      this.keys.allShards,
      (shard) => shard.shard,
      (pipeline, shard) => pipeline.xrevrange(shard.changes, '+', '-', 'COUNT', 1),
    );
    return replies.map(([[error, reply] = [null, null]]) => {
      if (error) throw error;
      const [last] = (reply ?? []) as Array<[string, string[]]>;
      return last?.[0] ?? '';
    });
  }

  /**
   * The snapshots committed in each shard after `cursors` (one per shard, from `changeCursors` or
   * an earlier answer), at most `max` per shard, with the cursors to follow on from; a snapshot
   * committed several times is there once. Undefined when a shard's feed does not reach back to
   * its cursor (trimmed past it, emptied with the store, never started: cursor ''), or holds
   * more than `max` changes since: the reader then reads everything. A change the answer misses is
   * not lost: the cursors stop at the last entry read.
   */
  async changesSince(
    cursors: readonly string[],
    max = CHANGE_FEED_MAX,
  ): Promise<{ refs: SnapshotRef[]; cursors: string[] } | undefined> {
    const shards = this.keys.allShards;
    if (cursors.length !== shards.length || cursors.some((cursor) => cursor === '')) return undefined;
    // From the cursor's own entry: finding it first proves nothing before it was trimmed away.
    const replies = await pipelineByShard(
      this.#redis,
      shards,
      (shard) => shard.shard,
      (pipeline, shard) => pipeline.xrange(shard.changes, cursors[shard.shard]!, '+', 'COUNT', max + 1),
    );
    const seen = new Set<string>();
    const refs: SnapshotRef[] = [];
    const next: string[] = [];
    for (const [index, [[error, reply] = [null, null]]] of replies.entries()) {
      if (error) throw error;
      const entries = (reply ?? []) as Array<[string, string[]]>;
      if (entries[0]?.[0] !== cursors[index] || entries.length > max) return undefined;
      next.push(entries.at(-1)![0]);
      for (let at = 1; at < entries.length; at += 1) {
        const fields = entries[at]![1];
        const key = fields[fields.indexOf('k') + 1];
        if (key === undefined || seen.has(key)) continue;
        seen.add(key);
        const ref = this.keys.snapshotOf(key);
        if (ref) refs.push({ ...ref, kind: ref.kind as SnapshotKind });
      }
    }
    return { refs, cursors: next };
  }

  async #read(refs: readonly SnapshotRef[], fields: readonly string[]): Promise<SnapshotRecord[]> {
    if (refs.length === 0) return [];
    const calls = scriptCalls(refs, this.#shardOfRef);
    const replies = await pipelineByShard(
      this.#redis,
      calls,
      (call) => call.shard,
      (pipeline, call) => queueScript(pipeline, READ_SCRIPT, keysOf(call.items, this.#keyOfRef), fields),
    );
    const records: SnapshotRecord[] = new Array(refs.length);
    const width = fields.length;
    // Where each asked field goes in the record's fields; those not asked stay null.
    const slots = fields.map((field) => DECODED_FIELDS.indexOf(field as (typeof DECODED_FIELDS)[number]));
    const byField: Array<string | null> = new Array(DECODED_FIELDS.length).fill(null);
    for (let i = 0; i < calls.length; i += 1) {
      const call = calls[i] as ShardGroup<SnapshotRef>;
      const [error, reply] = replies[i]?.[0] ?? [new Error('missing pipeline reply'), null];
      if (error) throw error;
      const values = reply as Array<string | null>;
      for (let k = 0; k < call.items.length; k += 1) {
        for (let f = 0; f < width; f += 1) byField[slots[f] as number] = values[k * width + f] ?? null;
        records[call.positions[k] as number] = this.#decode(call.items[k] as SnapshotRef, byField);
      }
    }
    return records;
  }

  #decode(ref: SnapshotRef, values: Array<string | null>): SnapshotRecord {
    const [version, state, observedAt, lastSeenAt, lastError, lastPolledAt, observedAtMs] = values;
    const record: SnapshotRecord = { version: version ? Number.parseInt(version, 10) : 0, state: undefined };
    try {
      if (state != null) {
        record.state = JSON.parse(state);
        storedJson.set(record, state);
      }
      if (lastError != null) record.lastError = JSON.parse(lastError) as ObservationError;
    } catch (error) {
      throw new Error(`snapshot ${this.keyOf(ref)} holds invalid JSON: ${(error as Error).message}`);
    }
    if (observedAt != null) record.observedAt = observedAt;
    if (observedAtMs != null) record.observedAtMs = Number(observedAtMs);
    if (lastSeenAt != null) record.lastSeenAt = lastSeenAt;
    if (lastPolledAt != null) record.lastPolledAt = lastPolledAt;
    return record;
  }

  /**
   * Records polls that changed nothing, in one round trip: sets `polled` (and `seen` / `err` as
   * asked) with HSET/HDEL, one script call per shard and `SCRIPT_BATCH` polls. Never touches the
   * version, the state or the observation time, so it cannot race a commit into a lost update; it
   * exists so an unchanged entity costs no commit (no version check, no new version).
   */
  async touch(items: readonly TouchItem[]): Promise<void> {
    if (items.length === 0) return;
    for (const item of items) {
      parseTime(item.polledAt, 'polledAt');
      if (item.lastSeenAt !== undefined) parseTime(item.lastSeenAt, 'lastSeenAt');
    }
    const calls = scriptCalls(items, this.#shardOfItem);
    const replies = await pipelineByShard(this.#redis, calls, (call) => call.shard, this.#queueTouch);
    for (const itemReplies of replies) {
      for (const [error] of itemReplies) if (error) throw error;
    }
  }

  /**
   * Atomically: if the stored version equals `expectedVersion` (absent = 0) and the stored reading
   * is not newer than `next.observedAt`, write `next` as version + 1 and append one CloudEvent per
   * draft to the outbox and the event log. Otherwise nothing is written.
   */
  async commit(
    ref: SnapshotRef,
    expectedVersion: number,
    next: SnapshotNext,
    drafts: readonly EventDraft[],
    options: { index?: IndexOp } = {},
  ): Promise<CommitResult> {
    const epoch = await this.#guard?.epoch();
    const prepared = this.#prepare({ ref, expectedVersion, next, drafts, ...options }, epoch);
    const result = await this.#runOne(prepared);
    this.committed([result]);
    return result;
  }

  /**
   * Commits events that belong to no snapshot (an operator's acknowledgement of an incident),
   * atomically with their incident bookkeeping, under the same store guard. Ids are random: each
   * call is one event (a retried hand-off still carries the id written here).
   */
  async commitEvents(item: EventsItem): Promise<CommitResult> {
    const epoch = await this.#guard?.epoch();
    const prepared = this.#prepare(
      {
        ref: { kind: 'fleet', id: 'events', facet: randomBytes(8).toString('hex') },
        expectedVersion: 0,
        next: { state: null, observedAt: item.at },
        drafts: item.drafts,
      },
      epoch,
      'no-snapshot',
    );
    const result = await this.#runOne(prepared);
    this.committed([result]);
    return result;
  }

  async #runOne(prepared: PreparedCommit): Promise<CommitResult> {
    const reply = parseCommitReply(await runScript(this.#redis, COMMIT_SCRIPT, prepared.keys, prepared.args));
    if (refusedByReset(reply)) await this.#guard?.lost();
    return this.#settle(reply, prepared);
  }

  /**
   * The result of a commit's reply; the guard is told what a commit changed of the incidents and
   * the revision it moved them to. A refusal because the store was emptied (the guard has been
   * told, and has sorted it out) becomes a conflict, so the caller re-reads the store as it is now
   * and tries again.
   */
  #settle(reply: CommitReply, prepared: PreparedCommit): CommitResult {
    if (reply[0] === 0) {
      if (reply[2] === 'reset') return { committed: false, currentVersion: 0, reason: 'version-conflict' };
      return { committed: false, currentVersion: reply[1], reason: REASONS[reply[2]] };
    }
    const result: CommitResult = { committed: true, version: reply[1], events: prepared.events };
    if (prepared.incidents) {
      const moved = reply.length === 3 ? { shard: prepared.shard, revision: reply[2] } : undefined;
      this.#guard?.incidentsChanged?.(result.events, moved);
    }
    return result;
  }

  /**
   * Many commits in one round trip (on a Cluster, one pipeline per shard, in parallel). Each item
   * is its own atomic script run (items do not see each other's outcome). Resolves with one result per item, in order; if Redis rejected any item,
   * rejects with a `CommitBatchError` holding all outcomes (committed items stay committed).
   */
  async commitMany(items: readonly CommitItem[]): Promise<CommitResult[]> {
    if (items.length === 0) return [];
    const epoch = await this.#guard?.epoch();
    const prepared = items.map((item) => this.#prepare(item, epoch));
    const replies = await pipelineByShard(
      this.#redis,
      prepared,
      (item) => item.shard,
      (pipeline, item) => queueScript(pipeline, COMMIT_SCRIPT, item.keys, item.args),
    );
    const parsed = prepared.map((_, i): CommitReply | Error => {
      const [error, reply] = replies[i]?.[0] ?? [new Error('missing pipeline reply'), null];
      if (error) return error;
      try {
        return parseCommitReply(reply);
      } catch (failure) {
        return failure as Error;
      }
    });
    if (parsed.some((reply) => !(reply instanceof Error) && refusedByReset(reply))) await this.#guard?.lost();
    const results = parsed.map((reply, i) =>
      reply instanceof Error ? reply : this.#settle(reply, prepared[i] as PreparedCommit),
    );
    // Items Redis accepted stay committed even when others failed: they are reported all the same.
    this.committed(results);
    if (results.some((result) => result instanceof Error)) throw new CommitBatchError(results);
    return results as CommitResult[];
  }

  /**
   * Told about the outcome of every commit call that reached Redis, before it returns: a subclass
   * counts the events of the ones that went through. Must not throw.
   */
  protected committed(_results: ReadonlyArray<CommitResult | Error>): void {}

  /** Deletes snapshots (one round trip, an UNLINK per shard and `ITEMS_PER_CALL` keys; absent ones are fine). */
  async forget(refs: readonly SnapshotRef[]): Promise<void> {
    if (refs.length === 0) return;
    const groups = new Map<number, string[]>();
    for (const ref of refs) {
      const shard = this.shardOf(ref);
      const keys = groups.get(shard) ?? [];
      if (keys.length === 0) groups.set(shard, keys);
      keys.push(this.keyOf(ref));
    }
    const calls = [...groups].flatMap(([shard, keys]) =>
      slices(keys).map((slice) => [shard, slice] as const),
    );
    const replies = await pipelineByShard(
      this.#redis,
      calls,
      ([shard]) => shard,
      (pipeline, [, keys]) => pipeline.unlink(keys),
    );
    for (const itemReplies of replies) {
      for (const [error] of itemReplies) if (error) throw error;
    }
  }

  /** Ids in the shards' `{s}:index:<kind>`, oldest first seen first. */
  async listIds(kind: EntityKind): Promise<string[]> {
    const shards = this.keys.allShards;
    if (shards.length === 1) return this.#redis.zrange(this.keys.index(kind), '0', '-1');
    const replies = await pipelineByShard(
      this.#redis,
      shards,
      (shard) => shard.shard,
      (pipeline, shard) => pipeline.zrange(shard.index(kind), '0', '-1', 'WITHSCORES'),
    );
    const entries: Array<[id: string, score: number]> = [];
    for (const [[error, flat]] of replies as Array<[[Error | null, string[]]]>) {
      if (error) throw error;
      for (let i = 0; i < flat.length; i += 2) entries.push([flat[i] as string, Number(flat[i + 1])]);
    }
    return entries.sort((a, b) => a[1] - b[1]).map(([id]) => id);
  }

  #prepare(item: CommitItem, epoch: string | undefined, mode?: 'no-snapshot'): PreparedCommit {
    const { ref, expectedVersion, next, drafts, index } = item;
    if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 0) {
      throw new RangeError(`expectedVersion must be a non-negative integer, got ${expectedVersion}`);
    }
    if (index && !isEntityKind(ref.kind)) throw new TypeError(`no entity index for kind ${ref.kind}`);
    const observedAtMs = parseTime(next.observedAt, 'observedAt');
    if (next.lastSeenAt !== undefined) parseTime(next.lastSeenAt, 'lastSeenAt');

    const snapshotKey = this.keyOf(ref);
    const version = expectedVersion + 1;
    const entityId = isEntityKind(ref.kind) ? ref.id : undefined;
    const events: FleetEvent[] = drafts.map((draft, i) =>
      toFleetEvent(draft, {
        id: eventId(snapshotKey, version, observedAtMs, i),
        source: this.#source,
        time: next.observedAt,
        entityId,
      }),
    );
    // Events that belong to no snapshot go to their home shard (an acknowledgement: its incident's).
    const shard = this.#commitShard(ref, events, mode);

    const errorMode = next.lastError === undefined ? 'keep' : next.lastError === null ? 'clear' : 'set';
    const ops = incidentOps(events);
    const args: Array<string | number> = [
      mode === 'no-snapshot' ? '-' : expectedVersion,
      observedAtMs,
      next.observedAt,
      JSON.stringify(next.state ?? null),
      next.lastSeenAt ?? '',
      errorMode,
      next.lastError ? JSON.stringify(next.lastError) : '',
      this.#cap,
      index ?? '',
      ref.id,
      observedAtMs,
      epoch ?? '',
      shard.incidentPrefix,
      observedAtMs - CLOSED_RETENTION_MS,
      // Each shard keeps its share of the closed incidents.
      Math.ceil(CLOSED_MAX / this.keys.shards),
      events.length,
    ];
    for (const event of events) {
      args.push(event.id, event.type, event.subject, JSON.stringify(event), shard.order(event.subject));
    }
    args.push(...encodeIncidentOps(ops));

    const indexKey = index && isEntityKind(ref.kind) ? shard.index(ref.kind) : snapshotKey;
    const keys: CommitKeys = [
      // An event-only commit names no snapshot: the marker stands in (the script reads no snapshot then).
      mode === 'no-snapshot' ? shard.storeMarker : snapshotKey,
      shard.outbox,
      shard.events,
      mode === 'no-snapshot' ? shard.storeMarker : indexKey,
      shard.storeMarker,
      shard.incidentsOpen,
      shard.incidentsClosed,
      shard.incidentsRevision,
      shard.changes,
    ];
    return { keys, args, events, incidents: ops.length > 0, shard: shard.shard };
  }

  /**
   * The shard a commit runs in: its snapshot's, or for events without a snapshot their home
   * subject's (incidents.ts `homeSubject`). Every event must belong to that shard, since its order
   * list and incident records live there and the commit is one atomic call in one slot: anything
   * else is a programming error, refused here on any Redis rather than by a Cluster only.
   */
  #commitShard(ref: SnapshotRef, events: readonly FleetEvent[], mode?: 'no-snapshot'): ShardKeys {
    const first = events[0];
    const shard = mode === 'no-snapshot' && first ? this.keys.shardOf(homeSubject(first)) : this.shardOf(ref);
    for (const event of events) {
      const own = this.keys.shardOf(homeSubject(event));
      if (own !== shard) {
        throw new RangeError(
          `the commit of ${this.keys.subjectOf(ref.kind, ref.id, ref.facet)} (shard ${shard} of ${this.keys.shards}) carries an event of ${homeSubject(event)}, which belongs to shard ${own}: a commit's events must share its shard`,
        );
      }
    }
    return this.keys.shardKeys(shard);
  }
}

const REASONS = {
  version: 'version-conflict',
  stale: 'stale-observation',
  closed: 'incident-not-open',
} as const;

/** The commit found the store emptied (its marker gone or another). */
function refusedByReset(reply: CommitReply): boolean {
  return reply[0] === 0 && reply[2] === 'reset';
}
