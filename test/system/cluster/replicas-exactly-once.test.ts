import { afterAll, describe, expect, it } from 'vitest';
import { createWorkerConnection, masters, type RedisClient } from '../../../src/lib/redis-connection.js';
import { describeReplicasExactlyOnce } from '../../support/exactly-once.js';
import {
  type RedisCluster,
  redisClusterUnavailable,
  startRedisCluster,
} from '../../support/redis-cluster.js';

/**
 * Guarantee 1 on a real Redis Cluster of 3 masters (started and stopped here): three replicas,
 * every connection a cluster client, the scenario of the integration suite (exactly once, nothing
 * else, each entity's events in commit order; test/support/exactly-once.ts), with the keys spread
 * over 12 shards (`redis.shards`): each master holds a fair share of the fleet's snapshots.
 */

const unavailable = redisClusterUnavailable();
const SHARDS = 12;
let cluster: RedisCluster | undefined;

afterAll(async () => {
  await cluster?.stop();
});

/** The snapshot keys of `prefix` on each master (SCAN of every master). */
async function snapshotsPerMaster(admin: RedisClient, prefix: string): Promise<number[]> {
  return Promise.all(
    masters(admin).map(async (node) => {
      let count = 0;
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `{${prefix}.*}:snap:*`, 'COUNT', 1_000);
        count += keys.length;
        cursor = next;
      } while (cursor !== '0');
      return count;
    }),
  );
}

if (unavailable) {
  describe(`three replicas on a Redis Cluster of 3 masters, ${SHARDS} shards`, () => {
    it.skip(`needs a Redis Cluster: ${unavailable}`, () => {});
  });
} else {
  describeReplicasExactlyOnce(
    `three replicas on a Redis Cluster of 3 masters, ${SHARDS} shards`,
    async () => {
      cluster = await startRedisCluster(3);
      const admin = createWorkerConnection({ cluster: cluster.nodes }, { name: 'test-admin' });
      admin.on('error', () => {});
      return {
        admin,
        url: cluster.nodes[0] ?? '',
        cluster: cluster.nodes,
        settings: { shards: SHARDS },
        afterRun: async (prefix) => {
          const counts = await snapshotsPerMaster(admin, prefix);
          const total = counts.reduce((sum, n) => sum + n, 0);
          expect(counts).toHaveLength(3);
          expect(total).toBeGreaterThan(30);
          // Every master holds between a fifth and a half of the snapshots.
          for (const count of counts) {
            expect(count / total).toBeGreaterThanOrEqual(0.2);
            expect(count / total).toBeLessThanOrEqual(0.5);
          }
          // Nothing per entity is left under the installation's own tag.
          expect(await admin.exists(`{${prefix}}:snap:vehicle:veh-0001:link`)).toBe(0);
        },
      };
    },
  );
}
