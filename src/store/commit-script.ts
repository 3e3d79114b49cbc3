import type { LuaScript } from './scripts.js';

/**
 * The one atomic step behind Guarantee 1: compare-and-set a snapshot AND hand its events to the
 * outbox and the event log, in a single Lua call. Either the version matched and everything is
 * written, or nothing is.
 *
 * KEYS (all under one hash tag, so one Cluster slot):
 *   1 snapshot hash   2 outbox stream   3 event log stream   4 entity index zset
 *
 * ARGV:
 *   1 expected version (integer; an absent snapshot is version 0)
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
 *  12 number of events n, then n × (event id, type, subject, event JSON)
 *
 * Returns `{1, newVersion}` when committed, `{0, currentVersion, reason}` when not, where reason is
 * `version` (someone else committed first) or `stale` (the stored reading is newer than this one).
 *
 * Snapshot hash fields: v (version), state, at (ISO), atMs, seen (lastSeenAt ISO), err (JSON);
 * `polled` (ISO) is written outside the script by `SnapshotStore.touch`.
 */
export const COMMIT_LUA = `
local snap = KEYS[1]
local stored = redis.call('HMGET', snap, 'v', 'atMs')
local current = tonumber(stored[1]) or 0
if current ~= tonumber(ARGV[1]) then
  return {0, current, 'version'}
end
local storedAt = tonumber(stored[2])
if storedAt and storedAt > tonumber(ARGV[2]) then
  return {0, current, 'stale'}
end

local version = current + 1
redis.call('HSET', snap, 'v', string.format('%d', version), 'state', ARGV[4], 'at', ARGV[3], 'atMs', ARGV[2])
if ARGV[5] ~= '' then
  redis.call('HSET', snap, 'seen', ARGV[5])
end
if ARGV[6] == 'set' then
  redis.call('HSET', snap, 'err', ARGV[7])
elseif ARGV[6] == 'clear' then
  redis.call('HDEL', snap, 'err')
end

if ARGV[9] == 'add' then
  redis.call('ZADD', KEYS[4], 'NX', ARGV[11], ARGV[10])
elseif ARGV[9] == 'remove' then
  redis.call('ZREM', KEYS[4], ARGV[10])
end

local n = tonumber(ARGV[12])
for i = 0, n - 1 do
  local at = 13 + i * 4
  redis.call('XADD', KEYS[2], '*', 'id', ARGV[at], 'event', ARGV[at + 3])
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[8], '*',
    'id', ARGV[at], 'type', ARGV[at + 1], 'subject', ARGV[at + 2], 'event', ARGV[at + 3])
end
return {1, version}
`;

export const COMMIT_SCRIPT: LuaScript = {
  name: 'fleetwatchCommitSnapshot',
  lua: COMMIT_LUA,
  numberOfKeys: 4,
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

export type CommitKeys = [snapshot: string, outbox: string, events: string, index: string];

export type CommitReply = [1, number] | [0, number, 'version' | 'stale'];

/** Validates the script's reply shape. */
export function parseCommitReply(reply: unknown): CommitReply {
  if (Array.isArray(reply)) {
    const [flag, version, reason] = reply as unknown[];
    if (flag === 1 && typeof version === 'number') return [1, version];
    if (flag === 0 && typeof version === 'number' && (reason === 'version' || reason === 'stale')) {
      return [0, version, reason];
    }
  }
  throw new Error(`unexpected commit script reply: ${JSON.stringify(reply)}`);
}
