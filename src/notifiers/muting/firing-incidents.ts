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
 * (`{p}:notify:firing`, field `<subject>#<incident key>`), with a revision every change moves on
 * (`{p}:notify:firing:rev`) and a log of the fields each change changed (`{p}:notify:firing:log`,
 * the latest `CHANGE_LOG_ENTRIES`), so a reader knows when nothing changed and otherwise reads only
 * what did. The dispatcher records every
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

/** Changes the change log keeps (`{p}:notify:firing:log`): a reader further behind reads in full. */
export const CHANGE_LOG_ENTRIES = 1_000;

/** Changed fields a reader takes from the log in one read; more, and it reads in full. */
export const CHANGED_FIELDS_MAX = 1_000;

/**
 * Every script that changes the hash (KEYS[1]) calls this with the fields it changed: the revision
 * (KEYS[2]) becomes `<base>:<sequence>`, one more than before, and the change log (KEYS[3], a
 * list, the newest last) gets one entry: the fields, as a JSON array. A revision that is not of
 * that form (none yet, or a token an older version wrote) starts a new sequence from `base` and an
 * empty log, which sends every reader to a full read.
 */
const CHANGED_LUA = `
local function changed(base, fields)
  local revision = redis.call('GET', KEYS[2])
  local current, sequence
  if revision then current, sequence = string.match(revision, '^(.+):(%d+)$') end
  if current then
    base = current
    sequence = tonumber(sequence) + 1
  else
    sequence = 1
    redis.call('DEL', KEYS[3])
  end
  redis.call('SET', KEYS[2], base .. ':' .. sequence)
  redis.call('RPUSH', KEYS[3], cjson.encode(fields))
  redis.call('LTRIM', KEYS[3], -${CHANGE_LOG_ENTRIES}, -1)
end
`;

/** Keeps the newer of the stored record and this one (by event time); ARGV[4] a new revision base. */
const SET_LUA = `${CHANGED_LUA}
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  local ok, old = pcall(cjson.decode, current)
  if ok and type(old) == 'table' and tonumber(old.t) and tonumber(old.t) > tonumber(ARGV[2]) then
    return 0
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
changed(ARGV[4], { ARGV[1] })
return 1
`;

/**
 * Closes the listed incidents (ARGV[3..]) that fire and are older than ARGV[1] (a removed entity
 * never resolves); ARGV[2] is a new revision base.
 */
const CLOSE_LUA = `${CHANGED_LUA}
local closed = {}
for i = 3, #ARGV do
  local current = redis.call('HGET', KEYS[1], ARGV[i])
  if current then
    local ok, old = pcall(cjson.decode, current)
    if ok and type(old) == 'table' and old.f == 1 and (tonumber(old.t) or 0) <= tonumber(ARGV[1]) then
      old.f = 0
      old.t = tonumber(ARGV[1])
      redis.call('HSET', KEYS[1], ARGV[i], cjson.encode(old))
      closed[#closed + 1] = ARGV[i]
    end
  end
end
if #closed > 0 then changed(ARGV[2], closed) end
return #closed
`;

/** Deletes fields still holding the value read (ARGV[2..] pairs: field, value); ARGV[1] a new revision base. */
const PRUNE_LUA = `${CHANGED_LUA}
local pruned = {}
for i = 2, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    pruned[#pruned + 1] = ARGV[i]
  end
end
if #pruned > 0 then changed(ARGV[1], pruned) end
return #pruned
`;

/**
 * What changed since the revision a reader holds (ARGV[1]), in one step: `{revision}` when it is
 * still the same; `{revision, 'full'}` when the log cannot say (another sequence, entries trimmed
 * away, more than ARGV[2] fields); else `{revision, 'changes', field, value, ...}` with each field
 * changed since and its value now (nil: deleted).
 */
const CHANGES_LUA = `
local revision = redis.call('GET', KEYS[2]) or ''
if revision == ARGV[1] then return { revision } end
local base, sequence = string.match(revision, '^(.+):(%d+)$')
local seenBase, seenSequence = string.match(ARGV[1], '^(.+):(%d+)$')
if not base or base ~= seenBase then return { revision, 'full' } end
local count = tonumber(sequence) - tonumber(seenSequence)
if count <= 0 then return { revision, 'full' } end
local entries = redis.call('LRANGE', KEYS[3], -count, -1)
if #entries ~= count then return { revision, 'full' } end
local fields, seen = {}, {}
for _, entry in ipairs(entries) do
  for _, field in ipairs(cjson.decode(entry)) do
    if not seen[field] then
      if #fields >= tonumber(ARGV[2]) then return { revision, 'full' } end
      seen[field] = true
      fields[#fields + 1] = field
    end
  end
end
local values = redis.call('HMGET', KEYS[1], unpack(fields))
local out = { revision, 'changes' }
for i, field in ipairs(fields) do
  out[#out + 1] = field
  out[#out + 1] = values[i]
end
return out
`;

const SET: LuaScript = { name: 'fleetwatchFiringSet', lua: SET_LUA, numberOfKeys: 3 };
const CLOSE: LuaScript = { name: 'fleetwatchFiringClose', lua: CLOSE_LUA, numberOfKeys: 3 };
const PRUNE: LuaScript = { name: 'fleetwatchFiringPrune', lua: PRUNE_LUA, numberOfKeys: 3 };
const CHANGES: LuaScript = { name: 'fleetwatchFiringChanges', lua: CHANGES_LUA, numberOfKeys: 3 };

/** The longest a reading is handed out again without reading the hash in full (see `list`). */
export const FULL_READ_MS = 600_000;

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
  /** The hash, its revision and its change log, as every script on the hash takes them. */
  readonly #keys: readonly [string, string, string];
  /**
   * The last reading: the revision it is of, its records, when the first resolved one it holds
   * ages out (epoch ms), and when the hash was last read in full.
   */
  #reading: { revision: string; records: readonly IncidentRecord[]; expires: number; at: number } | undefined;
  /** The reading under way: one at a time, so each applies the changes after the one before. */
  #listing: Promise<unknown> = Promise.resolve();

  constructor(options: FiringIncidentsOptions) {
    this.#redis = options.redis;
    this.keys = notifyKeys(options.prefix);
    this.#keys = [this.keys.firing, this.keys.firingRevision, this.keys.firingLog];
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
   * Read every second or two while events flow (the muting's cache, mutes.ts), it reads only what
   * changed: one step (`CHANGES_LUA`) compares the revision with the reading's, and when it moved
   * takes the fields the change log names since and their values now. Unchanged (no field
   * changed, no resolved record aged out), the last reading's array is handed out again, the same
   * object, and the muting keeps the inhibition it built from it; changed, a record whose stored
   * JSON is the same is the same object as before, and keeps its labels. At 100,000 entities the
   * hash holds about 8,500 incidents: read in full at every change, 17 round trips and every
   * record walked, it held the event loop for 40–80 ms each time an incident moved.
   *
   * The hash is read in full (a page of fields per round trip, `hashPages`: one `HGETALL` of a
   * large fleet's record held Redis for up to 10 ms) at the first reading, when the log cannot say
   * (another sequence, as after an older version's write; a reader more than
   * `CHANGE_LOG_ENTRIES` changes behind; more than `CHANGED_FIELDS_MAX` fields changed), and at
   * least every `FULL_READ_MS` (ten minutes), in case something changed the hash outside these
   * scripts; when it finds every record as it was, it hands out the last reading's array too. A
   * record written during the scan may be missed, and is then seen at the next read: the revision
   * is read before the scan, so such a write is in the log after it.
   */
  list(now: number): Promise<readonly IncidentRecord[]> {
    const reading = this.#listing.then(() =>
      this.#list(now).catch((error: unknown) => {
        // Changes may have been applied without the reading that says so: start afresh.
        this.#reading = undefined;
        throw error;
      }),
    );
    this.#listing = reading.catch(() => undefined);
    return reading;
  }

  async #list(now: number): Promise<readonly IncidentRecord[]> {
    const last = this.#reading;
    if (!last || Math.abs(now - last.at) >= FULL_READ_MS) return this.#readAll(now, last);
    const reply = (await runScript(this.#redis, CHANGES, this.#keys, [
      last.revision,
      CHANGED_FIELDS_MAX,
    ])) as Array<string | null>;
    const revision = reply[0] ?? '';
    if (reply[1] === 'full') return this.#readAll(now, last);
    let changed = false;
    for (let i = 2; i + 1 < reply.length; i += 2) {
      const field = reply[i] as string;
      const json = reply[i + 1];
      const before = this.#decoded.get(field);
      if (json === null || json === undefined) {
        changed = this.#decoded.delete(field) || changed;
      } else if (before?.json !== json) {
        this.#decoded.set(field, { json, record: decode(field, json) });
        changed = true;
      }
    }
    if (!changed && now < last.expires) {
      this.#reading = { ...last, revision };
      return last.records;
    }
    return this.#settle(now, revision, last.at, changed ? undefined : last);
  }

  /** Reads the hash in full; records whose stored JSON is unchanged are the same objects as before. */
  async #readAll(
    now: number,
    last: { records: readonly IncidentRecord[] } | undefined,
  ): Promise<readonly IncidentRecord[]> {
    const revision = (await this.#redis.get(this.keys.firingRevision)) ?? '';
    const known = this.#decoded;
    const decoded = new Map<string, { json: string; record: IncidentRecord | undefined }>();
    // Whether every field came back with the JSON it had at the last reading.
    let same = last !== undefined;
    for await (const page of hashPages(this.#redis, this.keys.firing)) {
      for (const [field, json] of page) {
        // A scan may return a field twice.
        if (decoded.has(field)) continue;
        const before = known.get(field);
        if (before !== undefined && before.json === json) decoded.set(field, before);
        else {
          same = false;
          decoded.set(field, { json, record: decode(field, json) });
        }
      }
    }
    this.#decoded = decoded;
    return this.#settle(now, revision, now, same && decoded.size === known.size ? last : undefined);
  }

  /**
   * The reading of what `#decoded` holds at `revision`: the records firing or resolved within
   * `keepResolvedMs`, the rest pruned. `unchanged`: the last reading, when `#decoded` holds exactly
   * its records; handed out again if no record aged out.
   */
  async #settle(
    now: number,
    revision: string,
    at: number,
    unchanged: { records: readonly IncidentRecord[] } | undefined,
  ): Promise<readonly IncidentRecord[]> {
    const out: IncidentRecord[] = [];
    const prune: string[] = [];
    let expires = Number.POSITIVE_INFINITY;
    for (const [field, { json, record }] of this.#decoded) {
      if (record && (record.firing || now - record.at <= this.#keepResolvedMs)) {
        out.push(record);
        if (!record.firing) expires = Math.min(expires, record.at + this.#keepResolvedMs + 1);
      } else prune.push(field, json);
    }
    if (prune.length > 0) {
      // Deleted only where it still holds what was read; one rewritten since is in the log after
      // `revision`, and the next reading takes it from there.
      await runScript(this.#redis, PRUNE, this.#keys, [uniqueToken(), ...prune]);
      for (let i = 0; i < prune.length; i += 2) this.#decoded.delete(prune[i]!);
    }
    const records =
      unchanged && prune.length === 0 && out.length === unchanged.records.length ? unchanged.records : out;
    this.#reading = { revision, records, expires, at };
    return records;
  }
}
