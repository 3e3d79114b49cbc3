import { afterAll, describe, it } from 'vitest';
import { createWorkerConnection } from '../../../src/lib/redis-connection.js';
import { describeReplicasExactlyOnce } from '../../support/exactly-once.js';
import {
  type RedisCluster,
  redisClusterUnavailable,
  startRedisCluster,
} from '../../support/redis-cluster.js';

/**
 * Guarantee 1 on a real Redis Cluster of 3 masters (started and stopped here): three replicas,
 * every connection a cluster client, the scenario of the integration suite (exactly once, nothing
 * else; test/support/exactly-once.ts).
 */

const unavailable = redisClusterUnavailable();
let cluster: RedisCluster | undefined;

afterAll(async () => {
  await cluster?.stop();
});

if (unavailable) {
  describe('three replicas on a Redis Cluster of 3 masters', () => {
    it.skip(`needs a Redis Cluster: ${unavailable}`, () => {});
  });
} else {
  describeReplicasExactlyOnce('three replicas on a Redis Cluster of 3 masters', async () => {
    cluster = await startRedisCluster(3);
    const admin = createWorkerConnection({ cluster: cluster.nodes }, { name: 'test-admin' });
    admin.on('error', () => {});
    return { admin, url: cluster.nodes[0] ?? '', cluster: cluster.nodes };
  });
}
