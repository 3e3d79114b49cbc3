/**
 * The slot-group layout of per-entity keys: how N shard hash tags are chosen so that they spread
 * evenly over a Redis Cluster's masters, and which shard a subject belongs to.
 *
 * Redis Cluster puts a key in one of 16384 slots, CRC16-XMODEM of its hash tag (the text between
 * the first `{` and the next `}`) mod 16384, and `redis-cli --cluster create` gives M masters M
 * contiguous, equal slot ranges. Shard i of N gets the tag `{<prefix>.<i>-<salt>}`, with the
 * smallest salt whose slot lies in the middle half of the i-th of N equal slot ranges (the middle,
 * so that the rounding of a master's range boundaries never moves it): when M divides N each
 * master holds N / M shards. Same prefix and N, same tags, forever. With N = 1 the one shard is
 * the installation's own tag `{<prefix>}`, so a store of one shard is laid out exactly as one
 * without shards.
 */

const PREFIX_PATTERN = /^[A-Za-z0-9_-]+$/;

/** Throws when `prefix` could break the hash tag (same rule as the config schema). */
export function assertPrefix(prefix: string): void {
  if (!PREFIX_PATTERN.test(prefix)) {
    throw new TypeError(`invalid Redis key prefix ${JSON.stringify(prefix)}: use letters, digits, _ or -`);
  }
}

/** `{<prefix>}`: the installation's own hash tag (every key's when there is one shard). */
export function hashTag(prefix: string): string {
  assertPrefix(prefix);
  return `{${prefix}}`;
}

/** Redis Cluster's number of hash slots. */
export const CLUSTER_SLOTS = 16_384;
/** The most shards `redis.shards` allows: each still spans 64 slots. */
export const MAX_SHARDS = 256;

const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[byte] = crc;
  }
  return table;
})();

/** CRC16-XMODEM (polynomial 0x1021, initial value 0) of the UTF-8 bytes of `text`: Redis' key hash. */
export function crc16(text: string): number {
  let crc = 0;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc = ((crc << 8) & 0xffff) ^ (CRC16_TABLE[((crc >> 8) ^ byte) & 0xff] ?? 0);
  }
  return crc;
}

/** The Redis Cluster slot of `key` (`CLUSTER KEYSLOT`): its hash tag's when it has a non-empty one. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) return crc16(key.slice(open + 1, close)) % CLUSTER_SLOTS;
  }
  return crc16(key) % CLUSTER_SLOTS;
}

/** Throws unless `shards` is a whole number from 1 to MAX_SHARDS. */
export function assertShardCount(shards: number): void {
  if (!Number.isInteger(shards) || shards < 1 || shards > MAX_SHARDS) {
    throw new RangeError(`expected a shard count from 1 to ${MAX_SHARDS}; got ${shards}`);
  }
}

const TAG_CACHE = new Map<string, readonly string[]>();

/** The hash tags of the N shards of `prefix`, in shard order (`{p}` alone when N = 1). */
export function shardTags(prefix: string, shards: number): readonly string[] {
  assertShardCount(shards);
  const own = hashTag(prefix);
  if (shards === 1) return [own];
  // Every store class builds its key layout: the salt search runs once per (prefix, N).
  const cacheKey = `${prefix}/${shards}`;
  const cached = TAG_CACHE.get(cacheKey);
  if (cached) return cached;
  const tags = Object.freeze(searchTags(prefix, shards));
  TAG_CACHE.set(cacheKey, tags);
  return tags;
}

function searchTags(prefix: string, shards: number): string[] {
  return Array.from({ length: shards }, (_, shard) => {
    const from = (shard * CLUSTER_SLOTS) / shards;
    const width = CLUSTER_SLOTS / shards;
    const low = Math.ceil(from + width / 4);
    const high = Math.floor(from + (3 * width) / 4);
    // A slot range of 64 or more slots is hit within a few thousand salts; the bound is a guard.
    for (let salt = 0; salt < 1_000_000; salt++) {
      const tag = `${prefix}.${shard}-${salt}`;
      const slot = crc16(tag) % CLUSTER_SLOTS;
      if (slot >= low && slot < high) return `{${tag}}`;
    }
    throw new Error(`no salt puts shard ${shard} of ${shards} of prefix ${prefix} in slots ${low}-${high}`);
  });
}

/** FNV-1a (32 bits) of the UTF-8 bytes of `text`: cheap, stable across processes and versions. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** The shard (0 … N - 1) of a subject (`vehicle/veh-0003`, `fleet/vehicle`): FNV-1a mod N. */
export function subjectShard(subject: string, shards: number): number {
  return shards === 1 ? 0 : fnv1a(subject) % shards;
}
