import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import {
  type DaemonProcess,
  printOnFailure,
  removeConfigFiles,
  startDaemon,
  writeDaemonConfig,
} from '../../support/daemon-process.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../../support/redis.js';
import { waitFor, waitForMembershipBaseline } from '../../support/scenario.js';

/**
 * SIGTERM (what `docker stop` and Kubernetes send) stops the daemon cleanly: in-flight polls may
 * finish, nothing is left running, exit status 0, and all of it within `worker.shutdown_grace`.
 */

const GRACE_MS = 4_000;
/** Process start-up of the signal handler aside, how much later than the grace the exit may come. */
const SLACK_MS = 2_000;

/** pino levels: 50 error, 60 fatal. */
function errorLines(daemon: DaemonProcess): string[] {
  return daemon.linesMatching(/"level":(50|60)\b/);
}

describe('graceful stop', () => {
  const prefixes: string[] = [];
  let sim: Simulator;
  let admin: Redis;
  let daemon: DaemonProcess | undefined;

  beforeAll(async () => {
    sim = await startSimulator({ vehicles: 25, robots: 4, seed: 21, powerDelayMs: 3_000, behaviours: false });
    admin = connect();
  });

  afterEach(async () => {
    await daemon?.kill();
    daemon = undefined;
    sim.control.clearFaults();
  });

  afterAll(async () => {
    await sim?.close();
    if (admin) {
      for (const prefix of prefixes) await deletePrefixKeys(admin, prefix);
      admin.disconnect();
    }
    removeConfigFiles();
  });

  async function startWorking(name: string): Promise<{ fw: DaemonProcess; prefix: string }> {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const config = writeDaemonConfig({
      upstreamUrl: sim.url,
      redisUrl: redisUrl(),
      prefix,
      batchSize: 5,
      shutdownGrace: `${GRACE_MS}ms`,
    });
    const fw = startDaemon(config, name);
    daemon = fw;
    await waitForMembershipBaseline(admin, prefix);
    return { fw, prefix };
  }

  it('exits 0 within the grace time with polls in flight', { timeout: 60_000 }, async (context) => {
    const { fw } = await startWorking('busy');
    printOnFailure(context, () => `--- daemon output ---\n${fw.output()}`);
    // Every request now takes 0.3-0.9 s: at any moment some polls are waiting for an answer.
    sim.control.resetStats();
    sim.control.setFaults({ latencyMs: 300, latencyJitterMs: 600 });
    await waitFor(
      'polls held up by latency',
      async () => sim.control.stats().faults.delayed,
      (delayed) => (delayed >= 10 ? undefined : `${delayed} delayed requests`),
      { timeoutMs: 15_000 },
    );

    const sent = Date.now();
    const exit = await fw.stop(GRACE_MS + 10_000);
    const took = exit.at - sent;
    expect(exit.signal).toBeNull();
    expect(exit.code).toBe(0);
    expect(took).toBeLessThan(GRACE_MS + SLACK_MS);
    expect(errorLines(fw)).toEqual([]);
  });

  it('exits within the grace time when the upstream never answers', { timeout: 60_000 }, async (context) => {
    const { fw } = await startWorking('stuck');
    printOnFailure(context, () => `--- daemon output ---\n${fw.output()}`);
    // Requests hang until the 2 s request time-out, and are retried: a poll now takes far longer
    // than the grace, so the daemon has to give up on it.
    sim.control.resetStats();
    sim.control.setFaults({ timeoutRate: 1, scope: ['v1', 'robots'] });
    await waitFor(
      'polls hanging',
      async () => sim.control.stats().faults.timeout,
      (hanging) => (hanging >= 5 ? undefined : `${hanging} hanging requests`),
      { timeoutMs: 15_000 },
    );

    const sent = Date.now();
    const exit = await fw.stop(GRACE_MS + 10_000);
    const took = exit.at - sent;
    expect(exit.signal).toBeNull();
    expect(took).toBeLessThan(GRACE_MS + SLACK_MS);
    expect(exit.code).toBe(0);
  });
});
