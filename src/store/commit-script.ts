import type { LuaScript } from './scripts.js';

/**
 * The one atomic step behind Guarantee 1: compare-and-set a snapshot AND hand its events to the
 * outbox and the event log, AND keep the incident records (incidents.ts) in step with those events,
 * in a single Lua call. Either the version matched and everything is written, or nothing is.
 *
 * KEYS (all under one hash tag, so one Cluster slot):
 *   1 snapshot hash   2 outbox stream   3 event log stream   4 entity index zset
 *   5 store marker    6 open incidents hash   7 closed incidents zset   8 incidents revision
 *   9 change feed stream (each committed snapshot's key, capped at `CHANGE_FEED_MAX` per shard)
 * Incident records are `ARGV[13] .. <id>`: their ids are read from KEYS[6], so they cannot be
 * declared (they share the hash tag, so the call stays in one slot).
 *
 * ARGV:
 *   1 expected version (integer; an absent snapshot is version 0), or '-' for events that belong
 *     to no snapshot (an acknowledgement: only the events and their incident bookkeeping)
 *   2 observedAt as epoch ms (integer)
 *   3 observedAt as ISO text (stored for readers, never compared)
 *   4 state JSON (stored as is; Lua never decodes it)
 *   5 lastSeenAt ISO text, '' = leave as is
 *   6 lastError mode: 'keep' | 'clear' | 'set'
 *   7 lastError JSON (when mode is 'set')
 *   8 event log cap (XADD MAXLEN ~)
 *   9 index op: '' | 'add' | 'remove'
 *  10 index member (the raw entity id)
 *  11 index score (first seen, epoch ms; ZADD NX keeps the first one)
 *  12 the store marker's epoch this writer knows ('' = not checked; see store-marker.ts)
 *  13 incident record key prefix
 *  14 closed incidents older than this (epoch ms) are dropped
 *  15 closed incidents kept at most
 *  16 number of events n, then n × (event id, type, subject, event JSON, order list key)
 *  then the incident ops (`encodeIncidentOps`): their number m, then m × (kind, argc, args…)
 *
 * Returns `{1, newVersion}` when committed, `{0, currentVersion, reason}` when not, where reason is
 * `version` (someone else committed first), `stale` (the stored reading is newer than this one),
 * `reset` (the store marker is not the one this writer knows: the store was emptied) or `closed`
 * (an acknowledged incident is not open any more).
 *
 * Snapshot hash fields: v (version), state, at (ISO), atMs, seen (lastSeenAt ISO), err (JSON);
 * `polled` (ISO) is written outside the script by `SnapshotStore.touch`.
 */
/**
 * Each event's id also goes to the end of its subject's order list (`{p}:order:<subject>`), which
 * the events worker reads to dispatch a subject's events in commit order (Guarantee 6). Bounded:
 * the newest 1,000 ids per subject, dropped a day after the subject's last event.
 */
export const ORDER_LIST_MAX = 1_000;
export const ORDER_LIST_TTL_MS = 24 * 60 * 60 * 1_000;

/**
 * Entries the change feed keeps per shard (`MAXLEN ~`): a reader that falls further behind (a
 * storm of changes, the first cycle of a large fleet) reads everything instead.
 */
export const CHANGE_FEED_MAX = 20_000;

export const COMMIT_LUA = `
local snap = KEYS[1]
if ARGV[12] ~= '' and redis.call('HGET', KEYS[5], 'epoch') ~= ARGV[12] then
  return {0, 0, 'reset'}
end
local n = tonumber(ARGV[16])
local opsAt = 17 + n * 5
local m = tonumber(ARGV[opsAt])
local i = opsAt + 1
for _ = 1, m do
  if ARGV[i] == 'ack' and redis.call('HGET', KEYS[6], ARGV[i + 2]) ~= ARGV[i + 3] then
    return {0, 0, 'closed'}
  end
  i = i + 2 + tonumber(ARGV[i + 1])
end

local version = 0
if ARGV[1] ~= '-' then
  local stored = redis.call('HMGET', snap, 'v', 'atMs')
  local current = tonumber(stored[1]) or 0
  if current ~= tonumber(ARGV[1]) then
    return {0, current, 'version'}
  end
  local storedAt = tonumber(stored[2])
  if storedAt and storedAt > tonumber(ARGV[2]) then
    return {0, current, 'stale'}
  end
  version = current + 1
  redis.call('HSET', snap, 'v', string.format('%d', version), 'state', ARGV[4], 'at', ARGV[3], 'atMs', ARGV[2])
  redis.call('XADD', KEYS[9], 'MAXLEN', '~', ${CHANGE_FEED_MAX}, '*', 'k', snap)
  if ARGV[5] ~= '' then
    redis.call('HSET', snap, 'seen', ARGV[5])
  end
  if ARGV[6] == 'set' then
    redis.call('HSET', snap, 'err', ARGV[7])
  elseif ARGV[6] == 'clear' then
    redis.call('HDEL', snap, 'err')
  end
end

if ARGV[9] == 'add' then
  redis.call('ZADD', KEYS[4], 'NX', ARGV[11], ARGV[10])
elseif ARGV[9] == 'remove' then
  redis.call('ZREM', KEYS[4], ARGV[10])
end

for e = 0, n - 1 do
  local at = 17 + e * 5
  redis.call('XADD', KEYS[2], '*', 'id', ARGV[at], 'event', ARGV[at + 3])
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[8], '*',
    'id', ARGV[at], 'type', ARGV[at + 1], 'subject', ARGV[at + 2], 'event', ARGV[at + 3])
  redis.call('RPUSH', ARGV[at + 4], ARGV[at])
  redis.call('LTRIM', ARGV[at + 4], -${ORDER_LIST_MAX}, -1)
  redis.call('PEXPIRE', ARGV[at + 4], ${ORDER_LIST_TTL_MS})
end

local changed = false
local closed = false
i = opsAt + 1
for _ = 1, m do
  local kind = ARGV[i]
  local a = i + 2
  if kind == 'open' then
    local open = redis.call('HGET', KEYS[6], ARGV[a])
    local count = tonumber(ARGV[a + 2])
    if open then
      redis.call('HSET', ARGV[13] .. open, unpack(ARGV, a + 3 + count, i + 1 + tonumber(ARGV[i + 1])))
    else
      redis.call('HSET', ARGV[13] .. ARGV[a + 1], unpack(ARGV, a + 3, a + 2 + count))
      redis.call('HSET', KEYS[6], ARGV[a], ARGV[a + 1])
    end
    changed = true
  elseif kind == 'close' then
    local open = redis.call('HGET', KEYS[6], ARGV[a])
    if open then
      redis.call('HDEL', KEYS[6], ARGV[a])
      redis.call('HSET', ARGV[13] .. open, 'state', 'closed', 'changed', ARGV[a + 1],
        'closedAt', ARGV[a + 1], 'closedBy', ARGV[a + 3])
      redis.call('ZADD', KEYS[7], ARGV[a + 2], open)
      changed = true
      closed = true
    end
  elseif kind == 'ack' then
    redis.call('HSET', ARGV[13] .. ARGV[a + 1], unpack(ARGV, a + 2, i + 1 + tonumber(ARGV[i + 1])))
    changed = true
  end
  i = i + 2 + tonumber(ARGV[i + 1])
end
if closed then
  local drop = redis.call('ZRANGEBYSCORE', KEYS[7], '-inf', '(' .. ARGV[14], 'LIMIT', 0, 50)
  local over = redis.call('ZCARD', KEYS[7]) - tonumber(ARGV[15])
  if over > 0 then
    for _, id in ipairs(redis.call('ZRANGE', KEYS[7], 0, math.min(over, 50) - 1)) do
      table.insert(drop, id)
    end
  end
  for _, id in ipairs(drop) do
    redis.call('DEL', ARGV[13] .. id)
    redis.call('ZREM', KEYS[7], id)
  end
end
if changed then
  return {1, version, redis.call('INCR', KEYS[8])}
end
return {1, version}
`;

export const COMMIT_SCRIPT: LuaScript = {
  name: 'fleetwatchCommitSnapshot',
  lua: COMMIT_LUA,
  numberOfKeys: 9,
};

/** Snapshot hash field names, shared by the script and the reader. */
export const SNAPSHOT_FIELDS = {
  version: 'v',
  state: 'state',
  observedAt: 'at',
  observedAtMs: 'atMs',
  lastSeenAt: 'seen',
  lastError: 'err',
  /** Last poll that changed nothing (written by `SnapshotStore.touch`, never by the script). */
  lastPolledAt: 'polled',
} as const;

export type CommitKeys = [
  snapshot: string,
  outbox: string,
  events: string,
  index: string,
  marker: string,
  openIncidents: string,
  closedIncidents: string,
  incidentsRevision: string,
  changes: string,
];

export type CommitRefusal = 'version' | 'stale' | 'reset' | 'closed';

/**
 * Committed: the version, and the shard's incidents revision when the commit moved it (what the
 * store guard needs to tell its own change from another writer's); refused: the stored version and why.
 */
export type CommitReply = [1, number] | [1, number, number] | [0, number, CommitRefusal];

const REFUSALS = new Set<unknown>(['version', 'stale', 'reset', 'closed']);

/** Validates the script's reply shape. */
export function parseCommitReply(reply: unknown): CommitReply {
  if (Array.isArray(reply)) {
    const [flag, version, reason] = reply as unknown[];
    if (flag === 1 && typeof version === 'number')
      return typeof reason === 'number' ? [1, version, reason] : [1, version];
    if (flag === 0 && typeof version === 'number' && REFUSALS.has(reason)) {
      return [0, version, reason as CommitRefusal];
    }
  }
  throw new Error(`unexpected commit script reply: ${JSON.stringify(reply)}`);
}
