import { z } from 'zod';
import { catalogueEntry, EVENT, type IncidentKey, isFleetEventType } from '../../events/catalogue.js';
import type { FleetEvent, Severity } from '../../events/types.js';
import { hashPages } from '../../lib/hash-scan.js';
import type { RedisClient } from '../../lib/redis-connection.js';
import { uniqueToken } from '../../lib/unique-token.js';
import { incidentField } from '../../store/incidents.js';
import { type NotifyKeys, notifyKeys } from '../../store/keys.js';
import { type LuaScript, runScript } from '../../store/scripts.js';
import { incidentOf, isSeverity, severityOf } from '../routing/labels.js';
import { decodeStored } from './stored-json.js';

/**
 * The incidents of the whole installation as the notification step saw them fire and resolve:
 * the sources of the inhibition rules, shared by every replica through one Redis hash
 * (`{p}:notify:firing`, field `<subject>#<incident key>`), with a revision every change replaces
 * (`{p}:notify:firing:rev`), so a reader knows when nothing changed. The dispatcher records every
 * event that fires or resolves an incident, or removes an entity, before routing it (so an
 * unrouted incident still inhibits). Events may reach the dispatcher out of order (retries,
 * replicas): a record is only replaced by one of a later event time, so a late firing event cannot
 * reopen an incident that resolved after it. A resolved incident stays as a tombstone
 * (`firing: false`, with when it resolved) for `keepResolvedMs`, which tells what a target of its
 * time was caused by and keeps the order; then it is pruned. Size: one field per incident of the
 * fleet, so bounded by the fleet's size times the incident keys.
 */

/** Read-only: `list` hands out the same record again while its stored JSON is unchanged. */
export interface IncidentRecord {
  readonly subject: string;
  readonly key: string;
  /** The type that fires it (`robot.health.down`). */
  readonly type: string;
  readonly severity: Severity;
  readonly firing: boolean;
  /** Epoch ms the incident started (the events' `since`, else the firing event's time). */
  readonly since: number;
  /** Epoch ms of the event this record is from: the firing one, or the one that closed it. */
  readonly at: number;
}

/**
 * Keeps the newer of the stored record and this one (by event time). Every script that changes the
 * hash (KEYS[1]) sets its revision (KEYS[2]) to a new token, so a reader knows when nothing changed.
 */
const SET_LUA = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  local ok, old = pcall(cjson.decode, current)
  if ok and type(old) == 'table' and tonumber(old.t) and tonumber(old.t) > tonumber(ARGV[2]) then
    return 0
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('SET', KEYS[2], ARGV[4])
return 1
`;

/**
 * Closes the listed incidents (ARGV[3..]) that fire and are older than ARGV[1] (a removed entity
 * never resolves); ARGV[2] is the new revision.
 */
const CLOSE_LUA = `
local closed = 0
for i = 3, #ARGV do
  local current = redis.call('HGET', KEYS[1], ARGV[i])
  if current then
    local ok, old = pcall(cjson.decode, current)
    if ok and type(old) == 'table' and old.f == 1 and (tonumber(old.t) or 0) <= tonumber(ARGV[1]) then
      old.f = 0
      old.t = tonumber(ARGV[1])
      redis.call('HSET', KEYS[1], ARGV[i], cjson.encode(old))
      closed = closed + 1
    end
  end
end
if closed > 0 then redis.call('SET', KEYS[2], ARGV[2]) end
return closed
`;

/** Deletes fields still holding the value read (ARGV[2..] pairs: field, value); ARGV[1] the new revision. */
const PRUNE_LUA = `
local pruned = 0
for i = 2, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    pruned = pruned + 1
  end
end
if pruned > 0 then redis.call('SET', KEYS[2], ARGV[1]) end
return pruned
`;

const SET: LuaScript = { name: 'fleetwatchFiringSet', lua: SET_LUA, numberOfKeys: 2 };
const CLOSE: LuaScript = { name: 'fleetwatchFiringClose', lua: CLOSE_LUA, numberOfKeys: 2 };
const PRUNE: LuaScript = { name: 'fleetwatchFiringPrune', lua: PRUNE_LUA, numberOfKeys: 2 };

/** The longest a reading is handed out again without reading the hash in full (see `list`). */
export const FULL_READ_MS = 60_000;

const REMOVED = new Set<string>([EVENT.vehicleRemoved, EVENT.robotRemoved]);

const INCIDENT_KEYS: readonly IncidentKey[] = [
  ...new Set(
    Object.values(EVENT).flatMap((type) => {
      const incident = catalogueEntry(type).incident;
      return incident ? [incident.key] : [];
    }),
  ),
];

function timeOf(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The JSON of a field: `t` the event time, `f` firing (1) or not, the firing type, its severity, since. */
const storedSchema = z.object({
  t: z.number(),
  f: z.union([z.literal(0), z.literal(1)]),
  type: z.string(),
  sev: z.string(),
  since: z.number(),
});

type Stored = z.output<typeof storedSchema>;

/** A stored record, or undefined when the field or its JSON is not one (then it is pruned). */
function decode(field: string, json: string): IncidentRecord | undefined {
  const hash = field.lastIndexOf('#');
  const stored = decodeStored(storedSchema, json);
  if (hash <= 0 || !stored) return undefined;
  return {
    subject: field.slice(0, hash),
    key: field.slice(hash + 1),
    type: stored.type,
    severity: isSeverity(stored.sev) ? stored.sev : 'info',
    firing: stored.f === 1,
    since: stored.since,
    at: stored.t,
  };
}

export interface FiringIncidentsOptions {
  /** Any connection; not closed here. */
  redis: RedisClient;
  prefix?: string;
  /** How long a resolved incident is kept (a tombstone); 1 hour by default. */
  keepResolvedMs?: number;
}

export class FiringIncidents {
  readonly keys: NotifyKeys;
  readonly #redis: RedisClient;
  readonly #keepResolvedMs: number;
  /**
   * What the last `list` decoded, by field: the stored JSON and its record. A list is read every
   * second or two while events flow, and almost every field is as it was: its record is reused,
   * not parsed and validated again (at 40,000 entities that decoding held the event loop for up to
   * 17 ms at a time). Holds what the hash held at the last read, so it is bounded as the hash is.
   */
  #decoded = new Map<string, { json: string; record: IncidentRecord | undefined }>();
  /** The hash and its revision, as every script that changes the hash takes them. */
  readonly #keys: readonly [string, string];
  /**
   * The last reading: the revision read before it, its records, when the first resolved one it
   * holds ages out (epoch ms), and when it was made.
   */
  #reading:
    | { revision: string | null; records: readonly IncidentRecord[]; expires: number; at: number }
    | undefined;

  constructor(options: FiringIncidentsOptions) {
    this.#redis = options.redis;
    this.keys = notifyKeys(options.prefix);
    this.#keys = [this.keys.firing, this.keys.firingRevision];
    this.#keepResolvedMs = options.keepResolvedMs ?? 3_600_000;
  }

  /** Records what `event` says about incidents (nothing for an event of no incident). */
  async record(event: FleetEvent): Promise<void> {
    const time = timeOf(event.time);
    if (time === undefined) return;
    if (REMOVED.has(event.type)) {
      const fields = INCIDENT_KEYS.map((key) => incidentField(event.subject, key));
      await runScript(this.#redis, CLOSE, this.#keys, [time, uniqueToken(), ...fields]);
      return;
    }
    const incident = incidentOf(event.type);
    if (!incident) return;
    const fires = incident.role === 'fires';
    const type = fires ? event.type : incident.counterpart;
    const stored: Stored = {
      t: time,
      f: fires ? 1 : 0,
      type,
      sev: fires ? severityOf(event) : isFleetEventType(type) ? catalogueEntry(type).severity : 'info',
      since: timeOf(event.data.since) ?? time,
    };
    await runScript(this.#redis, SET, this.#keys, [
      incidentField(event.subject, incident.key),
      time,
      JSON.stringify(stored),
      uniqueToken(),
    ]);
  }

  /**
   * Every incident recorded (firing, or resolved less than `keepResolvedMs` ago); prunes older ones.
   *
   * Unchanged since the last reading (the revision is the same, and no resolved record it holds
   * has aged out since), the last reading's array is handed out again, the same object: one `GET`
   * instead of reading thousands of records every second or two while events flow (the muting's
   * cache, mutes.ts), and the muting keeps its labelling as it is. A full read is made at least
   * every `FULL_READ_MS` all the same, in case something changed the hash without a revision (a
   * replica of an older version during an upgrade); when it finds every record as it was, it
   * hands out the last reading's array too.
   *
   * A full read takes a page of fields per round trip (`hashPages`): one `HGETALL` of a large
   * fleet's record held Redis for up to 10 ms. A record written during the scan may be missed, and
   * is then seen at the next read, as one written just after a whole read would be: the revision
   * is read before the scan, so such a write has moved it.
   */
  async list(now: number): Promise<readonly IncidentRecord[]> {
    const revision = await this.#redis.get(this.keys.firingRevision);
    const last = this.#reading;
    if (last && last.revision === revision && now < last.expires && Math.abs(now - last.at) < FULL_READ_MS)
      return last.records;
    const out: IncidentRecord[] = [];
    const prune: string[] = [];
    const known = this.#decoded;
    const decoded = new Map<string, { json: string; record: IncidentRecord | undefined }>();
    let expires = Number.POSITIVE_INFINITY;
    // Whether every field came back with the JSON it had at the last reading.
    let same = last !== undefined;
    for await (const page of hashPages(this.#redis, this.keys.firing)) {
      for (const [field, json] of page) {
        // A scan may return a field twice.
        if (decoded.has(field)) continue;
        const before = known.get(field);
        const reused = before !== undefined && before.json === json;
        if (!reused) same = false;
        const record = reused ? before.record : decode(field, json);
        decoded.set(field, { json, record });
        if (record && (record.firing || now - record.at <= this.#keepResolvedMs)) {
          out.push(record);
          if (!record.firing) expires = Math.min(expires, record.at + this.#keepResolvedMs + 1);
        } else prune.push(field, json);
      }
    }
    this.#decoded = decoded;
    // Pruning moves the revision: the next reading reads in full, and sees what it left.
    if (prune.length > 0) await runScript(this.#redis, PRUNE, this.#keys, [uniqueToken(), ...prune]);
    // Every record as it was (the minute's full read, most of the time): the last reading's array
    // again, so the muting keeps its labelling and indexes (mutes.ts) instead of rebuilding them
    // for every incident of the fleet.
    const records =
      same && last && prune.length === 0 && decoded.size === known.size && out.length === last.records.length
        ? last.records
        : out;
    this.#reading = { revision, records, expires, at: now };
    return records;
  }
}
