import { randomBytes } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, inject } from 'vitest';
import { isCluster, type RedisClient, scanKeys } from '../../src/lib/redis-connection.js';

/** The Redis URL from the global setup; fails the test with the setup's explanation when there is none. */
export function redisUrl(): string {
  const url = inject('redisUrl');
  if (!url) throw new Error(inject('redisProblem') || 'no Redis available for tests');
  return url;
}

/** A prefix no other test file (or run) shares: keys become `{<start>-<random>}:...` (`t-` unless given). */
export function uniquePrefix(start = 't'): string {
  return `${start}-${randomBytes(5).toString('hex')}`;
}

/** A plain connection for assertions and setup; errors are swallowed (tests assert on results). */
export function connect(options: RedisOptions = {}): Redis {
  const redis = new Redis(redisUrl(), { maxRetriesPerRequest: 2, ...options });
  redis.on('error', () => {});
  return redis;
}

/**
 * A connection for the suite (file or `describe`) it is called in: connected now, and after the
 * suite's last test every key under `{prefix}` deleted (`deletePrefixKeys`) and the connection
 * closed.
 */
export function suiteConnection(prefix: string): Redis {
  const redis = connect();
  afterAll(async () => {
    await deletePrefixKeys(redis, prefix);
    redis.disconnect();
  });
  return redis;
}

/**
 * Deletes every key under `{prefix}`, its shard tags `{prefix.<n>-<salt>}` and the prefixes a test
 * derives from it (`{prefix-<name>}`): SCAN MATCH on every master + UNLINK. Never FLUSHDB: the
 * server is shared.
 */
export async function deletePrefixKeys(redis: RedisClient, prefix: string): Promise<number> {
  // Sub-prefixes a test derives from its own (`<prefix>.shard`, `<prefix>-marks`) go with it.
  const patterns = [`{${prefix}}*`, `{${prefix}.*`, `{${prefix}-*`];
  const keys = (await Promise.all(patterns.map((pattern) => scanKeys(redis, pattern)))).flat();
  let deleted = 0;
  // A Cluster refuses one UNLINK of keys in several slots: one key a command there.
  const batch = isCluster(redis) ? 1 : 1_000;
  for (let at = 0; at < keys.length; at += batch * 50) {
    const slices: string[][] = [];
    for (let i = at; i < Math.min(keys.length, at + batch * 50); i += batch)
      slices.push(keys.slice(i, i + batch));
    const counts = await Promise.all(slices.map((slice) => redis.unlink(...slice)));
    deleted += counts.reduce((sum, n) => sum + n, 0);
  }
  return deleted;
}

/** Resolves once `predicate` holds, polling every `intervalMs`; rejects after `timeoutMs`. */
export async function eventually<T>(
  probe: () => Promise<T>,
  predicate: (value: T) => boolean,
  { timeoutMs = 10_000, intervalMs = 25 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (predicate(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms (last: ${JSON.stringify(value)})`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Kills one of our own connections server-side by its client name (simulates Redis dropping it). */
export async function killClientByName(admin: Redis, name: string): Promise<number> {
  const list = (await admin.client('LIST')) as string;
  let killed = 0;
  for (const line of list.split('\n')) {
    const fields = Object.fromEntries(line.split(' ').map((pair) => pair.split('=', 2) as [string, string]));
    if (fields.name === name && fields.id) {
      killed += Number(await admin.client('KILL', 'ID', fields.id));
    }
  }
  return killed;
}
