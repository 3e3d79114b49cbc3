import { describeReplicasExactlyOnce } from '../../support/exactly-once.js';
import { connect, redisUrl } from '../../support/redis.js';

/** Guarantee 1 with three replicas on the shared Redis (the scenario: test/support/exactly-once.ts). */
describeReplicasExactlyOnce('three replicas on one Redis prefix', async () => ({
  admin: connect(),
  url: redisUrl(),
}));
