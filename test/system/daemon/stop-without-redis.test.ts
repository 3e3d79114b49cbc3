import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import {
  type DaemonProcess,
  printOnFailure,
  removeConfigFiles,
  startDaemon,
  within,
  writeDaemonConfig,
} from '../../support/daemon-process.js';
import { PrivateRedis, redisServerAvailable } from '../../support/private-redis.js';
import { uniquePrefix } from '../../support/redis.js';
import { waitFor, waitForPollRound } from '../../support/scenario.js';

/**
 * A container whose Redis went away first (the stack is torn down in the wrong order, or Redis
 * died) must still stop when told: SIGTERM ends `fleetwatch run` within its shutdown grace even
 * though nothing it would flush can reach Redis, instead of hanging until the orchestrator's kill.
 */

/** What the daemon logs (at warn) once it finds Redis gone. */
const NO_REDIS = /Redis is unreachable/;
const GRACE_MS = 3_000;

describe.skipIf(!redisServerAvailable())('stopping while Redis is gone', () => {
  let sim: Simulator;
  let redis: PrivateRedis | undefined;
  let daemon: DaemonProcess | undefined;

  beforeAll(async () => {
    sim = await startSimulator({ vehicles: 5, robots: 5, seed: 23, behaviours: false });
    redis = await PrivateRedis.start();
  });

  afterAll(async () => {
    await daemon?.kill();
    await redis?.stop('kill');
    await sim?.close();
    removeConfigFiles();
  });

  it('exits on SIGTERM within the shutdown grace', async (context) => {
    const prefix = uniquePrefix();
    const fw = startDaemon(
      writeDaemonConfig({
        upstreamUrl: sim.url,
        redisUrl: redis!.url,
        prefix,
        logLevel: 'info',
        shutdownGrace: `${GRACE_MS / 1000}s`,
      }),
    );
    daemon = fw;
    printOnFailure(context, () => `${fw.output(300)}\n${redis?.output() ?? ''}`);
    await within(fw.whenRunning, 30_000);
    expect(fw.isRunning).toBe(true);
    const admin = new Redis(redis!.url, { maxRetriesPerRequest: 1 });
    admin.on('error', () => {});
    try {
      // Polls, events and notification groups under way, as in a daemon that has been up a while.
      await waitForPollRound(admin, prefix);
      await waitForPollRound(admin, prefix);
    } finally {
      admin.disconnect();
    }

    await redis!.stop('kill');
    await waitFor(
      'the daemon to notice that Redis is gone',
      async () => fw.linesMatching(NO_REDIS).length,
      (count) => (count > 0 ? undefined : 'not logged yet'),
      { timeoutMs: 20_000, intervalMs: 100 },
    );

    const sent = Date.now();
    const exit = await fw.stop(GRACE_MS + 15_000);
    expect(exit.code).toBe(0);
    // Polls under way get the grace and 2 s more once aborted (lib/shutdown.ts); nothing that
    // waits on the missing Redis may hold the stop beyond that.
    const [stopped] = fw.linesMatching(/"msg":"fleetwatch stopped"/);
    expect(stopped).toBeDefined();
    const durationMs = Number(/"durationMs":(\d+)/.exec(stopped ?? '')?.[1]);
    expect(durationMs).toBeLessThanOrEqual(GRACE_MS + 2_500);
    // And nothing is left holding the process once it has stopped: the exit comes without the
    // entry point's last resort (src/cli/run.ts), which would say so on stderr.
    expect(fw.linesMatching(/something still held the process/)).toEqual([]);
    expect(exit.at - sent).toBeLessThan(GRACE_MS + 15_000);
  }, 90_000);
});
