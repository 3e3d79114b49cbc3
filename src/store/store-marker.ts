import { randomBytes } from 'node:crypto';
import { draft, EVENT } from '../events/catalogue.js';
import { toFleetEvent } from '../events/cloud-event.js';
import type { FleetEvent } from '../events/types.js';
import type { RedisClient } from '../lib/redis-connection.js';
import { pipelineByShard } from './by-shard.js';
import { CHANGE_FEED_MAX } from './commit-script.js';
import { DEFAULT_EVENT_LOG_CAP } from './event-log.js';
import { type IncidentRecord, incidentField, recordFields } from './incidents.js';
import { type ShardKeys, type StoreKeys, storeKeys } from './keys.js';
import { defineScript, type LuaScript, queueScript, runScript } from './scripts.js';
import { eventId } from './snapshot-store.js';

/**
 * The store marker, `{p}:store:marker`: a hash of `epoch` (a random id), `createdAt` and `replaced`
 * (the epoch it replaced after a loss; empty when it was written at a start that found none). It is
 * written once, by the first replica that starts on an empty store, and stays; every replica
 * remembers the epoch it knows. When the store is emptied (Redis restarted without persistence, a
 * flush, a failover to an empty replica), the marker is gone with everything else: the first
 * commit after that is refused (the commit script compares the marker with the writer's epoch), and
 * the replica that then wins the marker's compare-and-set (`reset`) writes a new one, commits ONE
 * `monitor.store.reset` and re-seeds the incidents it knew were open — in the incident records and
 * in the facet snapshots — all in the same Lua call, so of several replicas exactly one does it and
 * none can commit against the emptied store before it is done.
 *
 * A replica that starts while the store is empty cannot tell a new installation from a lost store:
 * it writes a marker with `replaced` empty. A running replica that knew the old marker then finds
 * a different epoch that replaced nothing, and claims the loss itself (`reset` with `fresh`): it
 * announces it and carries over the incidents that are not open again already.
 */

export interface Marker {
  epoch: string;
  createdAt: string;
  /** The epoch this one replaced after a loss; '' when written at a start that found none. */
  replaced: string;
  /**
   * With shards: some shard's copy of the marker is gone or holds another epoch, so that shard's
   * data was lost (or a reset did not finish): the loss is claimed with `expect: 'damaged'`.
   */
  damaged?: boolean;
}

/** A facet snapshot re-seeded after a loss: written only if its version is still `expectedVersion`. */
export interface SnapshotSeed {
  key: string;
  expectedVersion: number;
  state: unknown;
  /** ISO 8601 observation time of the seeded state. */
  at: string;
}

export interface ResetRequest {
  /**
   * `absent`: the marker is gone. `fresh`: it is `epoch`, written by a start that replaced nothing.
   * `carry`: it is `epoch`, which replaced `lost` (another replica announced the loss): only carry
   * over what this replica knew and the announcing one did not (no event, no marker write).
   * `damaged` (shards only): it is still `lost`, but a shard's copy is gone: `epoch` replaces it.
   */
  expect: 'absent' | 'fresh' | 'carry' | 'damaged';
  /** The new marker's epoch (for `fresh`, the one found). */
  epoch: string;
  /** The epoch that was lost. */
  lost: string;
  /** When this replica last saw the lost marker (ISO 8601). */
  lastSeenAt: string;
  /** ISO 8601: the event's time and the marker's `createdAt`. */
  at: string;
  /**
   * Incidents to carry over: the caller leaves out those open in the store already (the event
   * counts these); the script skips any that opened meanwhile.
   */
  incidents: readonly IncidentRecord[];
  snapshots: readonly SnapshotSeed[];
}

export type ResetOutcome =
  /** This call wrote the marker, the event and the seeds (`carry`: the seeds only, no event). */
  | { kind: 'done'; event?: FleetEvent; carried: number }
  /** Someone else's marker is there: adopt it. */
  | { kind: 'taken'; marker: Marker | undefined }
  /** A seeded snapshot changed meanwhile: read again and retry. */
  | { kind: 'retry' };

const ESTABLISH_SCRIPT: LuaScript = {
  name: 'fleetwatchEstablishMarker',
  numberOfKeys: 1,
  lua: `
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'epoch', ARGV[1], 'createdAt', ARGV[2], 'replaced', '', 'shards', ARGV[3])
  if tonumber(ARGV[3]) > 1 then redis.call('HSET', KEYS[1], 'laidOut', '0') end
end
return redis.call('HMGET', KEYS[1], 'epoch', 'createdAt', 'replaced', 'laidOut')
`,
};

/**
 * With shards: records on the control marker (KEYS[1]) that every shard has its copy, unless the
 * marker was replaced meanwhile. ARGV: the epoch whose copies were written.
 */
const LAID_OUT_SCRIPT: LuaScript = {
  name: 'fleetwatchMarkerLaidOut',
  numberOfKeys: 1,
  lua: `
if redis.call('HGET', KEYS[1], 'epoch') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'laidOut', '1')
  return 1
end
return 0
`,
};

/**
 * Lua shared by the reset scripts (same KEYS and ARGV layout): writes each carried incident
 * (ARGV 12…: field, id, count, HSET arguments) that is not open yet; leaves `carried` (how many)
 * and `i` (the first argument past them). Needs `n`, the number of incidents.
 */
const CARRY_INCIDENTS_LUA = `local i = 12
local carried = 0
for _ = 1, n do
  local count = tonumber(ARGV[i + 2])
  if redis.call('HEXISTS', KEYS[4], ARGV[i]) == 0 then
    redis.call('HSET', ARGV[10] .. ARGV[i + 1], unpack(ARGV, i + 3, i + 2 + count))
    redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
    carried = carried + 1
  end
  i = i + 3 + count
end`;

/**
 * Lua: a seeded snapshot (KEYS[k]) to the shard's change feed, as a commit's goes (commit-script.ts):
 * the feed's key is the last ARGV (in the shard's slot, as the incident records are).
 */
const FEED_LUA = `redis.call('XADD', ARGV[#ARGV], 'MAXLEN', '~', ${CHANGE_FEED_MAX}, '*', 'k', KEYS[k])`;

/** Lua: the reset's event (ARGV 6–9) to the outbox (KEYS[2]) and the capped event log (KEYS[3]). */
const APPEND_EVENT_LUA = `  redis.call('XADD', KEYS[2], '*', 'id', ARGV[6], 'event', ARGV[9])
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[5], '*', 'id', ARGV[6], 'type', ARGV[7], 'subject', ARGV[8], 'event', ARGV[9])`;

/**
 * KEYS: 1 marker, 2 outbox, 3 event log, 4 open incidents, 5 incidents revision, 6… seeded snapshots.
 * ARGV: 1 expect ('absent' | 'fresh' | 'carry'), 2 epoch, 3 lost epoch, 4 at (ISO), 5 event log cap,
 * 6 event id, 7 type, 8 subject, 9 event JSON (unused for 'carry'), 10 incident key prefix,
 * 11 number of incidents, then per incident: field, id, count, count HSET arguments;
 * then per seeded snapshot (KEYS 6…, in order): expected version, state JSON, at (ISO), at (ms).
 * Returns {1, carried} when done, {0, 'taken', epoch, createdAt, replaced} when the marker is not
 * as expected, {0, 'retry'} when a snapshot's version moved.
 */
const RESET_SCRIPT: LuaScript = {
  name: 'fleetwatchResetStore',
  lua: `
local found = redis.call('HMGET', KEYS[1], 'epoch', 'createdAt', 'replaced')
local epoch = found[1]
local expect = ARGV[1]
if expect == 'absent' then
  if epoch then return {0, 'taken', epoch, found[2] or '', found[3] or ''} end
elseif epoch ~= ARGV[2] or (found[3] or '') ~= (expect == 'carry' and ARGV[3] or '') then
  return {0, 'taken', epoch or '', found[2] or '', found[3] or ''}
end
local n = tonumber(ARGV[11])
local i = 12
for _ = 1, n do i = i + 3 + tonumber(ARGV[i + 2]) end
local seeds = i
for k = 6, #KEYS do
  local at = seeds + (k - 6) * 4
  if (tonumber(redis.call('HGET', KEYS[k], 'v')) or 0) ~= tonumber(ARGV[at]) then return {0, 'retry'} end
end

if expect ~= 'carry' then
  redis.call('HSET', KEYS[1], 'epoch', ARGV[2], 'createdAt', ARGV[4], 'replaced', ARGV[3])
end
${CARRY_INCIDENTS_LUA}
for k = 6, #KEYS do
  local at = seeds + (k - 6) * 4
  redis.call('HSET', KEYS[k], 'v', string.format('%d', tonumber(ARGV[at]) + 1), 'state', ARGV[at + 1],
    'at', ARGV[at + 2], 'atMs', ARGV[at + 3])
  ${FEED_LUA}
end
redis.call('INCR', KEYS[5])
if expect ~= 'carry' then
${APPEND_EVENT_LUA}
end
return {1, carried}
`,
};

/**
 * With shards: a shard's copy of the marker, written with the control marker when that was new.
 * KEYS: the copy. ARGV: epoch, createdAt, replaced, '1' to write it when absent. Returns the copy.
 */
const COPY_SCRIPT: LuaScript = {
  name: 'fleetwatchCopyMarker',
  numberOfKeys: 1,
  lua: `
if ARGV[4] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'epoch', ARGV[1], 'createdAt', ARGV[2], 'replaced', ARGV[3])
end
return redis.call('HMGET', KEYS[1], 'epoch', 'createdAt', 'replaced')
`,
};

/**
 * With shards: the compare-and-set of a reset on the control marker (KEYS[1]). ARGV: expect, epoch,
 * lost epoch, at (ISO), shard count. Returns {1} when this call wrote it, else {0, 'taken', epoch, createdAt,
 * replaced}. The shards' parts follow (SHARD_RESET_SCRIPT).
 */
const CONTROL_RESET_SCRIPT: LuaScript = {
  name: 'fleetwatchResetControl',
  numberOfKeys: 1,
  lua: `
local found = redis.call('HMGET', KEYS[1], 'epoch', 'createdAt', 'replaced')
local epoch = found[1]
local expect = ARGV[1]
if expect == 'absent' then
  if epoch then return {0, 'taken', epoch, found[2] or '', found[3] or ''} end
elseif expect == 'damaged' then
  if epoch ~= ARGV[3] then return {0, 'taken', epoch or '', found[2] or '', found[3] or ''} end
elseif epoch ~= ARGV[2] or (found[3] or '') ~= (expect == 'carry' and ARGV[3] or '') then
  return {0, 'taken', epoch or '', found[2] or '', found[3] or ''}
end
if expect ~= 'carry' then
  redis.call('HSET', KEYS[1], 'epoch', ARGV[2], 'createdAt', ARGV[4], 'replaced', ARGV[3], 'shards', ARGV[5])
end
return {1}
`,
};

/**
 * With shards: one shard's part of a reset, after the control marker's. KEYS: 1 the shard's copy,
 * 2 outbox, 3 event log, 4 open incidents, 5 incidents revision, 6… the shard's seeded snapshots.
 * ARGV as RESET_SCRIPT's, but 1 is 'write' (copy the new marker: epoch, lost, at) or 'carry'
 * (leave it), 6 is '' when the event is not this shard's, and a seed whose snapshot moved
 * meanwhile is left out (a newer observation was committed: nothing to re-seed). Returns {1, carried}.
 */
const SHARD_RESET_SCRIPT: LuaScript = {
  name: 'fleetwatchResetShard',
  lua: `
if ARGV[1] == 'write' then
  redis.call('HSET', KEYS[1], 'epoch', ARGV[2], 'createdAt', ARGV[4], 'replaced', ARGV[3])
end
local n = tonumber(ARGV[11])
${CARRY_INCIDENTS_LUA}
local seeds = i
for k = 6, #KEYS do
  local at = seeds + (k - 6) * 4
  if (tonumber(redis.call('HGET', KEYS[k], 'v')) or 0) == tonumber(ARGV[at]) then
    redis.call('HSET', KEYS[k], 'v', string.format('%d', tonumber(ARGV[at]) + 1), 'state', ARGV[at + 1],
      'at', ARGV[at + 2], 'atMs', ARGV[at + 3])
    ${FEED_LUA}
  end
end
redis.call('INCR', KEYS[5])
if ARGV[6] ~= '' then
${APPEND_EVENT_LUA}
end
return {1, carried}
`,
};

/** The subject id of `monitor.store.reset`: `store/redis`. */
export const STORE_SUBJECT_ID = 'redis';

export interface StoreMarkerOptions {
  redis: RedisClient;
  prefix?: string;
  /** Becomes the event's `source`: `fleetwatch/<installation>`. */
  installation: string;
  eventLogCap?: number;
  /** How many shards the store is kept over (keys.ts): each holds a copy of the marker. Default 1. */
  shards?: number;
}

/**
 * Why a daemon configured with `shards` must not use the store under `prefix` (one line, saying
 * what to do), or undefined when it may: the control marker records the shard count the store is
 * laid out with (a marker without it is a store of one shard); a store without a marker is new or
 * emptied, and is laid out by whoever establishes it.
 */
export async function shardCountProblem(
  redis: RedisClient,
  prefix: string,
  shards: number,
): Promise<string | undefined> {
  const [epoch, recorded] = await redis.hmget(storeKeys(prefix).controlMarker, 'epoch', 'shards');
  if (!epoch) return undefined;
  const has = recorded ? Number(recorded) : 1;
  if (has === shards) return undefined;
  return `the Redis store under prefix "${prefix}" is laid out over ${has} shard(s) but redis.shards is ${shards}: set redis.shards to ${has}, or reset the store (delete its keys) or use a new redis.prefix to start over with ${shards}`;
}

export function newEpoch(): string {
  return randomBytes(9).toString('base64url');
}

export class StoreMarker {
  readonly keys: StoreKeys;
  readonly #redis: RedisClient;
  readonly #source: string;
  readonly #cap: number;

  constructor(options: StoreMarkerOptions) {
    this.#redis = options.redis;
    this.keys = storeKeys(options.prefix, options.shards);
    this.#source = `fleetwatch/${options.installation}`;
    // Each shard keeps its share of the log (snapshot-store.ts).
    this.#cap = Math.ceil((options.eventLogCap ?? DEFAULT_EVENT_LOG_CAP) / this.keys.shards);
  }

  /** The control marker; with shards, `damaged` when a shard's copy is gone or holds another epoch. */
  async read(): Promise<Marker | undefined> {
    const [epoch, createdAt, replaced] = await this.#redis.hmget(
      this.keys.controlMarker,
      'epoch',
      'createdAt',
      'replaced',
    );
    const marker = markerOf(epoch ?? null, createdAt ?? null, replaced ?? null);
    if (!marker || this.keys.shards === 1) return marker;
    const copies = await this.#copies(marker, false);
    return copies.every((copy) => copy?.epoch === marker.epoch) ? marker : { ...marker, damaged: true };
  }

  /**
   * The marker, written first (`replaced` empty) when there is none. With shards, a new control
   * marker says `laidOut: 0` until its copies are on every shard: whoever starts while it says so
   * (the replica that wrote it, or one starting at the same moment, or after that one died) writes
   * the missing copies (the same marker, so idempotent) and then sets it. Once a store is laid out,
   * a missing copy is a shard's lost data: it is not written here, so the guard's first commit
   * there is refused and claims the loss. A marker without the field predates it and is laid out.
   */
  async establish(now: number): Promise<Marker> {
    const [epoch, createdAt, replaced, laidOut] = (await runScript(
      this.#redis,
      ESTABLISH_SCRIPT,
      [this.keys.controlMarker],
      [newEpoch(), new Date(now).toISOString(), this.keys.shards],
    )) as Array<string | null>;
    const marker = markerOf(epoch ?? null, createdAt ?? null, replaced ?? null);
    if (!marker) throw new Error('the store marker could not be read back');
    if (this.keys.shards > 1 && laidOut === '0') {
      await this.#copies(marker, true);
      await runScript(this.#redis, LAID_OUT_SCRIPT, [this.keys.controlMarker], [marker.epoch]);
    }
    return marker;
  }

  /** Every shard's copy of the marker (in shard order), written from `marker` where absent when `write`. */
  async #copies(marker: Marker, write: boolean): Promise<Array<Marker | undefined>> {
    defineScript(this.#redis, COPY_SCRIPT);
    const replies = await pipelineByShard(
      this.#redis,
      this.keys.allShards,
      (shard) => shard.shard,
      (pipeline, shard) =>
        queueScript(
          pipeline,
          COPY_SCRIPT,
          [shard.storeMarker],
          [marker.epoch, marker.createdAt, marker.replaced, write ? '1' : '0'],
        ),
    );
    return replies.map((reply) => {
      const [error, values] = reply[0] ?? [new Error('missing pipeline reply'), null];
      if (error) throw error;
      const [epoch, createdAt, replaced] = values as Array<string | null>;
      return markerOf(epoch ?? null, createdAt ?? null, replaced ?? null);
    });
  }

  /**
   * The KEYS and ARGV of a reset script (RESET_SCRIPT, or one shard's SHARD_RESET_SCRIPT): their
   * layout is the same, on the keys of the store (one shard) or of the shard given.
   */
  #resetCall(
    mode: string,
    request: ResetRequest,
    event: FleetEvent | undefined,
    keys: Pick<
      ShardKeys,
      | 'storeMarker'
      | 'outbox'
      | 'events'
      | 'incidentsOpen'
      | 'incidentsRevision'
      | 'incidentPrefix'
      | 'changes'
    >,
    incidents: readonly IncidentRecord[],
    seeds: readonly SnapshotSeed[],
  ): { keys: string[]; args: Array<string | number> } {
    const args: Array<string | number> = [
      mode,
      request.epoch,
      request.lost,
      request.at,
      this.#cap,
      event?.id ?? '',
      event?.type ?? '',
      event?.subject ?? '',
      event ? JSON.stringify(event) : '',
      keys.incidentPrefix,
      incidents.length,
    ];
    for (const record of incidents) {
      const fields = recordFields(record);
      args.push(incidentField(record.subject, record.key), record.id, fields.length, ...fields);
    }
    for (const seed of seeds) {
      args.push(seed.expectedVersion, JSON.stringify(seed.state ?? null), seed.at, Date.parse(seed.at));
    }
    // Last: the change feed, where a seeded snapshot is announced as a committed one is.
    args.push(keys.changes);
    return {
      keys: [
        keys.storeMarker,
        keys.outbox,
        keys.events,
        keys.incidentsOpen,
        keys.incidentsRevision,
        ...seeds.map((seed) => seed.key),
      ],
      args,
    };
  }

  /** Claims the loss of `request.lost`: see `ResetRequest` and the module comment. */
  async reset(request: ResetRequest): Promise<ResetOutcome> {
    if (this.keys.shards > 1) return this.#resetShards(request);
    if (request.expect === 'damaged') throw new Error('a store of one shard has no shard to be damaged');
    const event = request.expect === 'carry' ? undefined : this.#resetEvent(request);
    const { keys, args } = this.#resetCall(
      request.expect,
      request,
      event,
      this.keys,
      request.incidents,
      request.snapshots,
    );
    const reply = (await runScript(this.#redis, RESET_SCRIPT, keys, args)) as unknown[];
    if (reply[0] === 1) return { kind: 'done', carried: Number(reply[1]), ...(event ? { event } : {}) };
    if (reply[1] === 'retry') return { kind: 'retry' };
    const [, , epoch, createdAt, replaced] = reply as [number, string, string, string, string];
    return { kind: 'taken', marker: markerOf(epoch || null, createdAt, replaced) };
  }

  /**
   * A reset over shards: the control marker's compare-and-set decides who claims the loss (at most
   * one replica), then each shard's part in one call of its own: its copy of the new marker, the
   * incidents it held that are carried over, its seeded snapshots, and (in the shard of
   * `store/redis`) the event. A commit in a shard is refused until that shard's part is written (its
   * copy holds another epoch), so none lands on a shard's emptied data before its carry-over.
   */
  async #resetShards(request: ResetRequest): Promise<ResetOutcome> {
    const control = (await runScript(
      this.#redis,
      CONTROL_RESET_SCRIPT,
      [this.keys.controlMarker],
      [request.expect, request.epoch, request.lost, request.at, this.keys.shards],
    )) as unknown[];
    if (control[0] !== 1) {
      const [, , epoch, createdAt, replaced] = control as [number, string, string, string, string];
      return { kind: 'taken', marker: markerOf(epoch || null, createdAt, replaced) };
    }
    const event = request.expect === 'carry' ? undefined : this.#resetEvent(request);
    const eventShard = event ? this.keys.shardOf(event.subject) : -1;
    const shardOfKey = (key: string) =>
      this.keys.allShards.find((shard) => key.startsWith(shard.tag))?.shard ?? 0;
    defineScript(this.#redis, SHARD_RESET_SCRIPT);
    const replies = await pipelineByShard(
      this.#redis,
      this.keys.allShards,
      (shard) => shard.shard,
      (pipeline, shard) => {
        const incidents = request.incidents.filter(
          (record) => this.keys.shardOf(record.subject) === shard.shard,
        );
        const seeds = request.snapshots.filter((seed) => shardOfKey(seed.key) === shard.shard);
        const mine = shard.shard === eventShard ? event : undefined;
        const { keys, args } = this.#resetCall(
          request.expect === 'carry' ? 'carry' : 'write',
          request,
          mine,
          shard,
          incidents,
          seeds,
        );
        queueScript(pipeline, SHARD_RESET_SCRIPT, keys, args);
      },
    );
    let carried = 0;
    for (const reply of replies) {
      const [error, result] = reply[0] ?? [new Error('missing pipeline reply'), null];
      if (error) throw error;
      carried += Number((result as unknown[])[1]);
    }
    return { kind: 'done', carried, ...(event ? { event } : {}) };
  }

  #resetEvent(request: ResetRequest): FleetEvent {
    return toFleetEvent(
      draft(EVENT.storeReset, {
        store: STORE_SUBJECT_ID,
        epoch: request.epoch,
        previousEpoch: request.lost,
        carriedOver: request.incidents.length,
        lastSeenAt: request.lastSeenAt,
      }),
      {
        id: eventId(`${this.keys.controlMarker}\n${request.epoch}`, 1, Date.parse(request.at), 0),
        source: this.#source,
        time: request.at,
      },
    );
  }
}

function markerOf(
  epoch: string | null,
  createdAt: string | null,
  replaced: string | null,
): Marker | undefined {
  if (epoch === null || epoch === '') return undefined;
  return { epoch, createdAt: createdAt ?? '', replaced: replaced ?? '' };
}
