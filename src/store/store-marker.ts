import { randomBytes } from 'node:crypto';
import { draft, EVENT } from '../events/catalogue.js';
import { toFleetEvent } from '../events/cloud-event.js';
import type { FleetEvent } from '../events/types.js';
import type { RedisClient } from '../lib/redis-connection.js';
import { DEFAULT_EVENT_LOG_CAP } from './event-log.js';
import { type IncidentRecord, incidentField, recordFields } from './incidents.js';
import { type StoreKeys, storeKeys } from './keys.js';
import { type LuaScript, runScript } from './scripts.js';
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
   */
  expect: 'absent' | 'fresh' | 'carry';
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
  redis.call('HSET', KEYS[1], 'epoch', ARGV[1], 'createdAt', ARGV[2], 'replaced', '')
end
return redis.call('HMGET', KEYS[1], 'epoch', 'createdAt', 'replaced')
`,
};

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
local carried = 0
i = 12
for _ = 1, n do
  local count = tonumber(ARGV[i + 2])
  if redis.call('HEXISTS', KEYS[4], ARGV[i]) == 0 then
    redis.call('HSET', ARGV[10] .. ARGV[i + 1], unpack(ARGV, i + 3, i + 2 + count))
    redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
    carried = carried + 1
  end
  i = i + 3 + count
end
for k = 6, #KEYS do
  local at = seeds + (k - 6) * 4
  redis.call('HSET', KEYS[k], 'v', string.format('%d', tonumber(ARGV[at]) + 1), 'state', ARGV[at + 1],
    'at', ARGV[at + 2], 'atMs', ARGV[at + 3])
end
redis.call('INCR', KEYS[5])
if expect ~= 'carry' then
  redis.call('XADD', KEYS[2], '*', 'id', ARGV[6], 'event', ARGV[9])
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[5], '*', 'id', ARGV[6], 'type', ARGV[7], 'subject', ARGV[8], 'event', ARGV[9])
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
    this.keys = storeKeys(options.prefix);
    this.#source = `fleetwatch/${options.installation}`;
    this.#cap = options.eventLogCap ?? DEFAULT_EVENT_LOG_CAP;
  }

  async read(): Promise<Marker | undefined> {
    const [epoch, createdAt, replaced] = await this.#redis.hmget(
      this.keys.storeMarker,
      'epoch',
      'createdAt',
      'replaced',
    );
    return markerOf(epoch ?? null, createdAt ?? null, replaced ?? null);
  }

  /** The marker, written first (`replaced` empty) when there is none. */
  async establish(now: number): Promise<Marker> {
    const [epoch, createdAt, replaced] = (await runScript(
      this.#redis,
      ESTABLISH_SCRIPT,
      [this.keys.storeMarker],
      [newEpoch(), new Date(now).toISOString()],
    )) as Array<string | null>;
    const marker = markerOf(epoch ?? null, createdAt ?? null, replaced ?? null);
    if (!marker) throw new Error('the store marker could not be read back');
    return marker;
  }

  /** Claims the loss of `request.lost`: see `ResetRequest` and the module comment. */
  async reset(request: ResetRequest): Promise<ResetOutcome> {
    const event = request.expect === 'carry' ? undefined : this.#resetEvent(request);
    const args: Array<string | number> = [
      request.expect,
      request.epoch,
      request.lost,
      request.at,
      this.#cap,
      event?.id ?? '',
      event?.type ?? '',
      event?.subject ?? '',
      event ? JSON.stringify(event) : '',
      this.keys.incidentPrefix,
      request.incidents.length,
    ];
    for (const record of request.incidents) {
      const fields = recordFields(record);
      args.push(incidentField(record.subject, record.key), record.id, fields.length, ...fields);
    }
    for (const seed of request.snapshots) {
      args.push(seed.expectedVersion, JSON.stringify(seed.state ?? null), seed.at, Date.parse(seed.at));
    }
    const reply = (await runScript(
      this.#redis,
      RESET_SCRIPT,
      [
        this.keys.storeMarker,
        this.keys.outbox,
        this.keys.events,
        this.keys.incidentsOpen,
        this.keys.incidentsRevision,
        ...request.snapshots.map((seed) => seed.key),
      ],
      args,
    )) as unknown[];
    if (reply[0] === 1) return { kind: 'done', carried: Number(reply[1]), ...(event ? { event } : {}) };
    if (reply[1] === 'retry') return { kind: 'retry' };
    const [, , epoch, createdAt, replaced] = reply as [number, string, string, string, string];
    return { kind: 'taken', marker: markerOf(epoch || null, createdAt, replaced) };
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
        id: eventId(`${this.keys.storeMarker}\n${request.epoch}`, 1, Date.parse(request.at), 0),
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
