import { Redis } from 'ioredis';
import { PrivateRedis } from '../test/support/private-redis.js';
import { startRedisCluster } from '../test/support/redis-cluster.js';
import { track } from './cleanup.js';

/**
 * The Redis a size runs against, started for it alone: one `redis-server` (`--redis single`, the
 * default) or a Redis Cluster of 3 masters on loopback ports (`--redis cluster`), each measured
 * as its own process.
 */

export const REDIS_KINDS = ['single', 'cluster'] as const;
export type RedisKind = (typeof REDIS_KINDS)[number];

/** Masters of the benchmark's cluster. */
export const CLUSTER_MASTERS = 3;
/** `redis.shards` on the cluster: four per master (a multiple of the masters, see the README). */
export const CLUSTER_SHARDS = 12;

export interface BenchRedis {
  readonly kind: RedisKind;
  /** Each server's (each master's) `redis://` URL. */
  readonly urls: readonly string[];
  /** fleetwatch's `redis:` section for it, without the prefix. */
  readonly section: Record<string, unknown>;
  stop(): Promise<void>;
}

/** Starts the Redis of a size, registered with cleanup.ts (an interrupted benchmark stops it too). */
export async function startBenchRedis(kind: RedisKind): Promise<BenchRedis> {
  const started =
    kind === 'cluster'
      ? await startRedisCluster(CLUSTER_MASTERS).then((cluster) => ({
          urls: cluster.nodes,
          section: { cluster: { nodes: [...cluster.nodes] }, shards: CLUSTER_SHARDS },
          stop: () => cluster.stop(),
        }))
      : await PrivateRedis.start().then((redis) => ({
          urls: [redis.url],
          section: { url: redis.url },
          stop: () => redis.stop(),
        }));
  const pids = await Promise.all(started.urls.map((url) => redisPid(url).catch(() => undefined)));
  const untrack = pids.map((pid, i) =>
    // One entry per server, so the exit hook can SIGKILL each; stopping one stops them all.
    track(kind === 'cluster' ? `redis-server (cluster master ${i + 1})` : 'redis-server', started.stop, pid),
  );
  let stopping: Promise<void> | undefined;
  return {
    kind,
    urls: started.urls,
    section: started.section,
    stop: () => {
      stopping ??= started.stop().finally(() => {
        for (const forget of untrack) forget();
      });
      return stopping;
    },
  };
}

/** The process id of the server at `url` (`INFO server`). */
export async function redisPid(url: string): Promise<number> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    const info = await client.info('server');
    const pid = Number(/^process_id:(\d+)/m.exec(info)?.[1]);
    if (!Number.isInteger(pid)) throw new Error('INFO server named no process_id');
    return pid;
  } finally {
    client.disconnect();
  }
}
