import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keySlot, shardTags } from '../../../src/store/shards.js';
import {
  type RedisCluster,
  redisClusterUnavailable,
  startRedisCluster,
} from '../../support/redis-cluster.js';

/**
 * The shard layout (store/shards.ts) against a real Redis Cluster of 3 masters as
 * `redis-cli --cluster create` lays it out: the slot fleetwatch computes for a shard tag is the one
 * the cluster answers, and each master owns the same number of shards.
 */

const unavailable = redisClusterUnavailable();

describe.skipIf(unavailable !== undefined)('shard tags on a Redis Cluster of 3 masters', () => {
  let cluster: RedisCluster;
  let node: Redis;

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    node = new Redis(cluster.nodes[0] ?? '', { maxRetriesPerRequest: 1 });
    node.on('error', () => {});
  });

  afterAll(async () => {
    node?.disconnect();
    await cluster?.stop();
  });

  it.each([3, 6, 12, 48])('gives each master a third of %i shards', async (shards) => {
    // [[first slot, last slot, [host, port, id]], ...] of each master.
    const ranges = (await node.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number, string]]>;
    const owner = (slot: number) =>
      ranges.find(([first, last]) => slot >= first && slot <= last)?.[2][1] ?? 'nobody';
    const perMaster = new Map<string | number, number>();
    for (const tag of shardTags('hc-spread', shards)) {
      const slot = Number(await node.call('CLUSTER', 'KEYSLOT', `${tag}:snap:vehicle:veh-0001:link`));
      expect(slot).toBe(keySlot(`${tag}:snap:vehicle:veh-0001:link`));
      perMaster.set(owner(slot), (perMaster.get(owner(slot)) ?? 0) + 1);
    }
    expect([...perMaster.values()]).toEqual([shards / 3, shards / 3, shards / 3]);
    expect(perMaster.has('nobody')).toBe(false);
  });
});
