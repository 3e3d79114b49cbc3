import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { PrivateRedis, redisServerAvailable } from '../support/private-redis.js';
import { conclude, expectNothingLost } from './conclude.js';
import { stackPerFile } from './stack.js';

/**
 * The Redis that holds every snapshot, the outbox, the queues and the delivered markers is
 * SIGKILLed and started again, several times, while two replicas run and the fleet keeps changing
 * (also while Redis is away).
 *
 * The Redis keeps an append-only file fsynced before every reply, as a production Redis whose
 * state matters is run: it comes back with everything it acknowledged, and fleetwatch must then
 * lose and double nothing. (A Redis that comes back empty is another contract: fleetwatch survives
 * it, says so once and carries the open incidents over, and learns the rest of the fleet again as
 * a silent baseline, but what changed while its memory was gone and what was still on its way out
 * cannot be reported. test/system/integration/redis-restart.test.ts and store-reset.test.ts cover
 * that.)
 */

const RESTARTS = Math.max(1, Number(process.env.RESILIENCE_REDIS_RESTARTS ?? 3));
/** How long Redis stays away each time. */
const DOWN_MS = 2_000;

describe.skipIf(!redisServerAvailable())('resilience: Redis killed and restarted', () => {
  let redis: PrivateRedis | undefined;
  // Registered first so that it runs last (after hooks run in reverse), once the daemons are gone.
  afterAll(async () => {
    await redis?.dispose();
  });
  const stacks = stackPerFile();

  it('lose, double and invent nothing across restarts with the data kept', async (context) => {
    const server = await PrivateRedis.start(undefined, { persistence: 'aof' });
    redis = server;
    const current = await stacks.open(
      context,
      { seedOffset: 2, redisUrl: server.url, daemon: { batchSize: 5 } },
      () => `--- redis ---\n${server.output()}`,
    );
    const { random } = current;

    const ids = await current.learnFleet({ vehicles: 12, robots: 4 }, 2);
    const driver = current.driveChanges(ids);
    let changesWhileDown = 0;
    try {
      for (let i = 0; i < RESTARTS; i++) {
        await delay(2_000 + random() * 2_000);
        await server.stop('kill');
        const before = driver.changes;
        current.note(`redis SIGKILLed (${i + 1} of ${RESTARTS})`);
        await delay(DOWN_MS);
        await server.start();
        changesWhileDown += driver.changes - before;
        current.note(`redis back after ${DOWN_MS} ms; ${driver.changes - before} changes made meanwhile`);
      }
      await delay(2_000);
    } finally {
      await driver.stop();
    }
    // Data kept: the snapshots (and with them the baseline) survived every restart.
    expect(await current.admin.exists(`{${current.prefix}}:events`)).toBe(1);

    const conclusion = await conclude(current, {
      order: 2,
      scenario: 'Redis restart',
      description:
        `A private \`redis-server\` with an append-only file (\`appendfsync always\`) is SIGKILLed ${RESTARTS} ` +
        `times and started again on the same port after ${DOWN_MS / 1000} s, while 2 replicas run and ` +
        '12 vehicles and 4 robots keep changing, also while Redis is away. A Redis that comes back ' +
        'empty is not counted here: fleetwatch survives it, says so once and carries the open incidents ' +
        'over, but can only relearn the rest of the fleet as a silent baseline (see ' +
        'test/system/integration/store-reset.test.ts).',
      faults: `${RESTARTS} Redis SIGKILLs + restarts (${DOWN_MS / 1000} s down each)`,
      changes: driver.changes,
      timeoutMs: 90_000,
      notes: [`${changesWhileDown} changes made while Redis was away`],
    });
    expectNothingLost(conclusion);
  });
});
