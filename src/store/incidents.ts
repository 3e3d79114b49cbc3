import { createHash } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import { CATALOGUE, catalogueEntry, EVENT, isFleetEventType } from '../events/catalogue.js';
import { incidentStart } from '../events/incident-ref.js';
import type { FleetEvent, Severity } from '../events/types.js';
import type { RedisClient } from '../lib/redis-connection.js';
import { pipelineByShard } from './by-shard.js';
import { type ShardKeys, type StoreKeys, storeKeys } from './keys.js';
import { defineScript, type LuaScript, queueScript } from './scripts.js';

/**
 * Incidents as a read model kept by the commit itself. An incident is one firing state of one
 * subject: the catalogue pairs a firing and a resolving type per incident key, and `(subject, key)`
 * identifies the incident while it is open. The commit script (commit-script.ts) opens, updates,
 * closes and acknowledges incident records in the same Lua call that appends their events to the
 * outbox and the event log (Guarantee 1), so the records are exactly as exact as the events:
 *
 * - a firing event opens `(subject, key)`, or updates the open one (its latest event, severity);
 * - its resolving counterpart closes it; `vehicle.removed` / `robot.removed` close every open
 *   incident of the subject (a removed entity never resolves);
 * - `incident.acknowledged` records who acknowledged it, why and until when; the commit is refused
 *   when the incident is not open any more.
 *
 * Closed incidents are kept `CLOSED_RETENTION_MS` (7 days), at most `CLOSED_MAX` (10,000) of them,
 * then dropped (each commit that closes one drops at most `PRUNE_PER_COMMIT` of the oldest).
 *
 * Ids are stable and readable: `<key>-<entity>-<8 hex digits>` (`vpn-veh-0003-1f2e3d4c`), from the
 * incident key, the entity id (characters outside `[A-Za-z0-9._-]` become `_`, cut to 48) and a
 * hash of the event that opened it, so a later incident of the same entity gets another id.
 */

export const CLOSED_RETENTION_MS = 7 * 24 * 3_600_000;
export const CLOSED_MAX = 10_000;
export const PRUNE_PER_COMMIT = 50;

export interface Acknowledgement {
  by: string;
  comment: string;
  /** ISO 8601. */
  at: string;
  /** ISO 8601: the acknowledgement ends then, unless the incident resolves first. */
  until: string;
  /** The `incident.acknowledged` event. */
  eventId: string;
}

export interface IncidentRecord {
  id: string;
  /** `vehicle/<id>`, `robot/<id>`, `upstream/<name>`. */
  subject: string;
  /** Catalogue incident key: `vpn`, `health`, ... */
  key: string;
  /** The firing type. */
  type: string;
  severity: Severity;
  /** ISO 8601: when the condition began. */
  since: string;
  /** ISO 8601: the latest firing event's time, or when it closed. */
  changedAt: string;
  /** The event that opened it. */
  eventId: string;
  /** The latest firing event (what silences and maintenance windows are matched against). */
  event: FleetEvent;
  state: 'open' | 'closed';
  /** ISO 8601, once closed. */
  closedAt?: string;
  /** The event that closed it (its resolution, or the entity's removal). */
  closedBy?: string;
  /** The latest acknowledgement, expired or not. */
  ack?: Acknowledgement;
}

/** How an open incident is found: `<subject>#<key>` (keys never hold `#`). */
export function incidentField(subject: string, key: string): string {
  return `${subject}#${key}`;
}

/**
 * The subject whose shard holds an event's records (its order list, the incidents it changes):
 * for `incident.acknowledged` the acknowledged incident's entity, since the incident lives there;
 * for any other event its own subject.
 */
export function homeSubject(event: Pick<FleetEvent, 'type' | 'subject' | 'data'>): string {
  if (event.type === EVENT.incidentAcknowledged) {
    const entity = event.data.entity;
    if (typeof entity === 'string' && entity !== '') return entity;
  }
  return event.subject;
}

const ID_ENTITY_MAX = 48;
export const INCIDENT_ID_PATTERN = /^[A-Za-z0-9._-]{1,200}$/;

export function newIncidentId(subject: string, key: string, openingEventId: string): string {
  const entity = subject.slice(subject.indexOf('/') + 1).replace(/[^A-Za-z0-9._-]/g, '_');
  const hash = createHash('sha256').update(openingEventId).digest('hex').slice(0, 8);
  return `${key}-${entity.slice(0, ID_ENTITY_MAX) || '_'}-${hash}`;
}

/** Every incident key of the catalogue. */
export const INCIDENT_KEYS: readonly string[] = [
  ...new Set(CATALOGUE.flatMap((entry) => (entry.incident ? [entry.incident.key] : []))),
];

const REMOVED = new Set<string>([EVENT.vehicleRemoved, EVENT.robotRemoved]);

/** What a commit does to the incident records, derived from its events. */
export type IncidentOp =
  | { kind: 'open'; field: string; record: Omit<IncidentRecord, 'state' | 'closedAt' | 'closedBy' | 'ack'> }
  | { kind: 'close'; field: string; at: string; atMs: number; by: string }
  | { kind: 'ack'; field: string; id: string; ack: Acknowledgement };

function severityOf(event: FleetEvent): Severity {
  const severity = event.data.severity;
  return severity === 'info' || severity === 'warning' || severity === 'critical' ? severity : 'info';
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The incident bookkeeping of a commit's events, in event order. */
export function incidentOps(events: readonly FleetEvent[]): IncidentOp[] {
  const ops: IncidentOp[] = [];
  for (const event of events) {
    const at = event.time;
    const atMs = Date.parse(at);
    if (event.type === EVENT.incidentAcknowledged) {
      const data = event.data;
      ops.push({
        kind: 'ack',
        field: incidentField(text(data.entity), text(data.key)),
        id: text(data.incident),
        ack: {
          by: text(data.by),
          comment: text(data.comment),
          at,
          until: text(data.until),
          eventId: event.id,
        },
      });
      continue;
    }
    if (REMOVED.has(event.type)) {
      for (const key of INCIDENT_KEYS) {
        ops.push({ kind: 'close', field: incidentField(event.subject, key), at, atMs, by: event.id });
      }
      continue;
    }
    const incident = isFleetEventType(event.type) ? catalogueEntry(event.type).incident : null;
    if (!incident) continue;
    const field = incidentField(event.subject, incident.key);
    if (incident.role === 'resolves') {
      ops.push({ kind: 'close', field, at, atMs, by: event.id });
    } else {
      ops.push({
        kind: 'open',
        field,
        record: {
          id: newIncidentId(event.subject, incident.key, event.id),
          subject: event.subject,
          key: incident.key,
          type: event.type,
          severity: severityOf(event),
          since: incidentStart(event),
          changedAt: at,
          eventId: event.id,
          event,
        },
      });
    }
  }
  return ops;
}

/** The open incidents by `incidentField(subject, key)`: the guard's copy (store-guard.ts). */
export type OpenIncidentCopy = Map<string, IncidentRecord>;

/** A copy of `open`, keyed as the commit script keys the open incidents. */
export function openIncidentCopy(open: readonly IncidentRecord[]): OpenIncidentCopy {
  return new Map(open.map((record) => [incidentField(record.subject, record.key), record]));
}

/**
 * The same bookkeeping as the commit script, on a copy of the open incidents in memory (a
 * replica's own commits, applied at once: store-guard.ts). Changes `copy` in place, at a cost of
 * the ops alone: a commit must not pay for every open incident of the fleet.
 */
export function applyIncidentOps(copy: OpenIncidentCopy, ops: readonly IncidentOp[]): OpenIncidentCopy {
  for (const op of ops) {
    const current = copy.get(op.field);
    if (op.kind === 'open') {
      const { record } = op;
      copy.set(
        op.field,
        current
          ? {
              ...current,
              type: record.type,
              severity: record.severity,
              changedAt: record.changedAt,
              event: record.event,
            }
          : { ...record, state: 'open' },
      );
    } else if (op.kind === 'close') {
      copy.delete(op.field);
    } else if (current && current.id === op.id) {
      copy.set(op.field, { ...current, ack: op.ack });
    }
  }
  return copy;
}

/** Hash fields of a record as stored (`HSET` pairs). */
export function recordFields(record: IncidentRecord): string[] {
  const fields = [
    'id',
    record.id,
    'subject',
    record.subject,
    'key',
    record.key,
    'type',
    record.type,
    'severity',
    record.severity,
    'since',
    record.since,
    'changed',
    record.changedAt,
    'eventId',
    record.eventId,
    'event',
    JSON.stringify(record.event),
    'state',
    record.state,
  ];
  if (record.closedAt !== undefined) fields.push('closedAt', record.closedAt);
  if (record.closedBy !== undefined) fields.push('closedBy', record.closedBy);
  if (record.ack) fields.push(...ackFields(record.ack));
  return fields;
}

export function ackFields(ack: Acknowledgement): string[] {
  return [
    'ackBy',
    ack.by,
    'ackComment',
    ack.comment,
    'ackAt',
    ack.at,
    'ackUntil',
    ack.until,
    'ackEvent',
    ack.eventId,
  ];
}

/**
 * The ops as the commit script reads them: per op its kind, its argument count, its arguments.
 * `open`: field, then the record's fields (HSET pairs, used when nothing is open under the field)
 * and the fields that an update rewrites; `close`: field, time (ISO), time (ms), closing event;
 * `ack`: field, id, then the acknowledgement's fields (HSET pairs).
 */
export function encodeIncidentOps(ops: readonly IncidentOp[]): Array<string | number> {
  const args: Array<string | number> = [ops.length];
  for (const op of ops) {
    let list: Array<string | number>;
    if (op.kind === 'open') {
      const { record } = op;
      const create = recordFields({ ...record, state: 'open' });
      const update = [
        'type',
        record.type,
        'severity',
        record.severity,
        'changed',
        record.changedAt,
        'event',
        JSON.stringify(record.event),
      ];
      list = [op.field, record.id, create.length, ...create, ...update];
    } else if (op.kind === 'close') {
      list = [op.field, op.at, op.atMs, op.by];
    } else {
      list = [op.field, op.id, ...ackFields(op.ack)];
    }
    args.push(op.kind, list.length, ...list);
  }
  return args;
}

const SEVERITIES = new Set<string>(['info', 'warning', 'critical']);

/** A stored record; undefined for an empty hash. Throws on a record that is not fleetwatch's. */
export function decodeIncident(
  fields: Record<string, string> | null | undefined,
): IncidentRecord | undefined {
  if (!fields || fields.id === undefined) return undefined;
  let event: FleetEvent;
  try {
    event = JSON.parse(fields.event ?? '') as FleetEvent;
  } catch (error) {
    throw new Error(`incident ${fields.id} holds an invalid event: ${(error as Error).message}`);
  }
  const record: IncidentRecord = {
    id: fields.id,
    subject: fields.subject ?? event.subject,
    key: fields.key ?? '',
    type: fields.type ?? event.type,
    severity: SEVERITIES.has(fields.severity ?? '') ? (fields.severity as Severity) : 'info',
    since: fields.since ?? event.time,
    changedAt: fields.changed ?? event.time,
    eventId: fields.eventId ?? event.id,
    event,
    state: fields.state === 'closed' ? 'closed' : 'open',
  };
  if (fields.closedAt !== undefined) record.closedAt = fields.closedAt;
  if (fields.closedBy !== undefined) record.closedBy = fields.closedBy;
  if (fields.ackBy !== undefined && fields.ackUntil !== undefined) {
    record.ack = {
      by: fields.ackBy,
      comment: fields.ackComment ?? '',
      at: fields.ackAt ?? fields.ackUntil,
      until: fields.ackUntil,
      eventId: fields.ackEvent ?? '',
    };
  }
  return record;
}

/** True while the acknowledgement stands at `now` (the incident's resolution ends it too). */
export function acknowledgedAt(record: Pick<IncidentRecord, 'ack' | 'state'>, now: number): boolean {
  return record.state === 'open' && record.ack !== undefined && Date.parse(record.ack.until) > now;
}

/**
 * KEYS: marker, open, revision. ARGV: the revision the caller holds.
 * Returns {marker epoch or '', revision, ids}: the open incidents' ids when the revision differs
 * from the caller's, else none. One atomic read: the ids are those open at that revision. Their
 * records are read after it, a chunk per round trip (`IncidentStore.readOpen`): read in the
 * script, a 100,000-entity fleet's open incidents held Redis for up to 125 ms, and every other
 * client with it.
 */
const READ_OPEN_SCRIPT: LuaScript = {
  name: 'fleetwatchReadOpenIncidentIds',
  numberOfKeys: 3,
  lua: `
local epoch = redis.call('HGET', KEYS[1], 'epoch') or ''
local rev = redis.call('GET', KEYS[3]) or '0'
if rev == ARGV[1] then return {epoch, rev, {}} end
return {epoch, rev, redis.call('HVALS', KEYS[2])}
`,
};

/** Incident records read per round trip by `readOpen`: Redis serves the others in between. */
export const READ_OPEN_CHUNK = 500;

/** One shard's head of a read of the open incidents: no ids when its revision was the one held. */
interface OpenHead {
  epoch: string;
  revision: string;
  ids?: string[];
}

export interface OpenIncidents {
  /**
   * The store marker the records belong to ('' when there is none). With shards, the one epoch
   * every shard's marker copy holds; when they differ, a text no marker holds (a shard was emptied).
   */
  epoch: string;
  /** With shards, the shards' revisions joined by `.`. */
  revision: string;
  /** Undefined when the revision was the one asked about (nothing changed). */
  records?: IncidentRecord[];
}

/**
 * Reads the incident records (written only by the commit and reset scripts). With N shards each
 * subject's incidents are in its shard: lists read every shard (one round trip; on a Cluster one
 * call per shard, in parallel) and an id is looked up in every shard.
 */
export class IncidentStore {
  readonly keys: StoreKeys;
  readonly #redis: RedisClient;
  readonly #chunk: number;

  /** `openReadChunk`: records per round trip of `readOpen` (`READ_OPEN_CHUNK`; tests use fewer). */
  constructor(options: { redis: RedisClient; prefix?: string; shards?: number; openReadChunk?: number }) {
    this.#redis = options.redis;
    this.keys = storeKeys(options.prefix, options.shards);
    this.#chunk = Math.max(1, Math.floor(options.openReadChunk ?? READ_OPEN_CHUNK));
  }

  /** One incident, open or closed (kept 7 days), or undefined. */
  async get(id: string): Promise<IncidentRecord | undefined> {
    if (!INCIDENT_ID_PATTERN.test(id)) return undefined;
    if (this.keys.shards === 1) return decodeIncident(await this.#redis.hgetall(this.keys.incident(id)));
    const replies = await this.#eachShard((pipeline, shard) => pipeline.hgetall(shard.incident(id)));
    for (const [error, fields] of replies) {
      if (error) throw error;
      const record = decodeIncident(fields as Record<string, string>);
      if (record) return record;
    }
    return undefined;
  }

  /** The open incident of `(subject, key)`, if any. */
  async openOf(subject: string, key: string): Promise<IncidentRecord | undefined> {
    const shard = this.keys.shardKeys(this.keys.shardOf(subject));
    const id = await this.#redis.hget(shard.incidentsOpen, incidentField(subject, key));
    return id === null ? undefined : this.#many(shard, [id]).then(([record]) => record);
  }

  /** Every open incident. */
  async open(): Promise<IncidentRecord[]> {
    const replies = await this.#eachShard((pipeline, shard) => pipeline.hvals(shard.incidentsOpen));
    const found = await Promise.all(
      this.keys.allShards.map((shard, i) => {
        const [error, ids] = replies[i] ?? [new Error('missing pipeline reply'), null];
        if (error) throw error;
        return this.#many(shard, ids as string[]);
      }),
    );
    return found.flat();
  }

  /** The most recently closed incidents, newest first, at most `limit`. */
  async closed(limit: number): Promise<IncidentRecord[]> {
    if (limit <= 0) return [];
    if (this.keys.shards === 1) {
      return this.#many(this.keys, await this.#redis.zrevrange(this.keys.incidentsClosed, 0, limit - 1));
    }
    const replies = await this.#eachShard((pipeline, shard) =>
      pipeline.zrevrange(shard.incidentsClosed, 0, limit - 1, 'WITHSCORES'),
    );
    const newest: Array<{ shard: ShardKeys; id: string; at: number }> = [];
    this.keys.allShards.forEach((shard, i) => {
      const [error, flat] = replies[i] ?? [new Error('missing pipeline reply'), null];
      if (error) throw error;
      const list = flat as string[];
      for (let k = 0; k + 1 < list.length; k += 2)
        newest.push({ shard, id: list[k] as string, at: Number(list[k + 1]) });
    });
    const chosen = newest.sort((a, b) => b.at - a.at).slice(0, limit);
    const records = await Promise.all(chosen.map(({ shard, id }) => this.#many(shard, [id])));
    return records.flat();
  }

  /**
   * The open incidents and the marker they belong to; no records when `revision` is current. With
   * shards, a change in any shard reads every shard's records again.
   *
   * Which incidents are open is read atomically with the marker and the revision; their records
   * follow, `READ_OPEN_CHUNK` per round trip, so a large fleet's read does not hold Redis. A record
   * may then be newer than the revision (an incident closed meanwhile is left out; the next read
   * sees the revision moved). Should a reset replace the marker during the read, the records may
   * belong to either marker: the read then returns the new epoch and no records, and the guard
   * takes it as the loss it is.
   */
  async readOpen(revision = ''): Promise<OpenIncidents> {
    const shards = this.keys.allShards;
    const held = revision.split('.');
    let heads = await this.#readOpenIds(
      shards.map((_, i) => (shards.length === 1 ? revision : (held[i] ?? ''))),
    );
    if (heads.map((head) => head.revision).join('.') === revision) return { epoch: epochOf(heads), revision };
    if (heads.some((head) => !head.ids)) heads = await this.#readOpenIds(shards.map(() => ''));
    const records: IncidentRecord[] = [];
    for (const [i, head] of heads.entries()) {
      const shard = shards[i] as ShardKeys;
      const ids = head.ids ?? [];
      for (let start = 0; start < ids.length; start += this.#chunk) {
        for (const record of await this.#many(shard, ids.slice(start, start + this.#chunk))) {
          if (record.state === 'open') records.push(record);
        }
      }
    }
    const read = { epoch: epochOf(heads), revision: heads.map((head) => head.revision).join('.') };
    const after = await this.#epoch();
    return after === read.epoch ? { ...read, records } : { ...read, epoch: after };
  }

  /** The marker's epoch as `readOpen` reports it ('' when there is none). */
  async #epoch(): Promise<string> {
    const replies = await this.#eachShard((pipeline, shard) => pipeline.hget(shard.storeMarker, 'epoch'));
    return epochOf(
      replies.map(([error, epoch]) => {
        if (error) throw error;
        return { epoch: typeof epoch === 'string' ? epoch : '' };
      }),
    );
  }

  async #readOpenIds(revisions: readonly string[]): Promise<OpenHead[]> {
    defineScript(this.#redis, READ_OPEN_SCRIPT);
    const replies = await this.#eachShard((pipeline, shard) =>
      queueScript(
        pipeline,
        READ_OPEN_SCRIPT,
        [shard.storeMarker, shard.incidentsOpen, shard.incidentsRevision],
        [revisions[shard.shard] ?? ''],
      ),
    );
    return replies.map(([error, reply], i) => {
      if (error) throw error;
      const [epoch, current, ids] = reply as [string, string, string[]];
      return current === revisions[i] ? { epoch, revision: current } : { epoch, revision: current, ids };
    });
  }

  /** One command per shard, each queued by `queue`; the replies in shard order. */
  async #eachShard(
    queue: (pipeline: ChainableCommander, shard: ShardKeys) => void,
  ): Promise<Array<[Error | null, unknown]>> {
    const replies = await pipelineByShard(this.#redis, this.keys.allShards, (shard) => shard.shard, queue);
    return replies.map((reply) => reply[0] ?? [new Error('missing pipeline reply'), null]);
  }

  async #many(shard: ShardKeys, ids: readonly string[]): Promise<IncidentRecord[]> {
    if (ids.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const id of ids) pipeline.hgetall(shard.incident(id));
    const replies = (await pipeline.exec()) ?? [];
    const records: IncidentRecord[] = [];
    for (const [error, fields] of replies) {
      if (error) throw error;
      const record = decodeIncident(fields as Record<string, string>);
      if (record) records.push(record);
    }
    return records;
  }
}

/** The epoch every shard's marker copy holds, or a text no marker holds when they differ. */
function epochOf(reads: ReadonlyArray<{ epoch: string }>): string {
  const epochs = new Set(reads.map((read) => read.epoch));
  return epochs.size === 1 ? (reads[0]?.epoch ?? '') : `mixed:${[...epochs].join(',')}`;
}
