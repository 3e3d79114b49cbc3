import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetEvent } from '../../../src/events/types.js';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import { EventLog } from '../../../src/store/event-log.js';
import {
  type DaemonProcess,
  FLEET_POLLERS,
  type PollerSettings,
  printOnFailure,
  removeConfigFiles,
  startDaemon,
  within,
  writeDaemonConfig,
} from '../../support/daemon-process.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../../support/redis.js';
import { addQuietFleet, readAllEvents, waitFor } from '../../support/scenario.js';

/**
 * A fleetwatch short of workers says so, once, and again once it keeps its pace: `fleetwatch run`
 * polls 30 robots' health every second, one robot per job, with one worker. While the simulated
 * gateway takes 150 ms per answer, a tick asks for 4.5 s of polling, so jobs of earlier ticks are
 * still waiting for the worker when the next tick comes: `monitor.polling.behind` for
 * `poller/robot_health`. Answers at loopback speed make every tick's jobs done within the tick:
 * `monitor.polling.caught_up`. Slow answers are no failures, so the gateway is never degraded.
 */

const ROBOTS = 30;

describe('the polling pace, end to end', () => {
  let sim: Simulator;
  let admin: Redis;
  let daemon: DaemonProcess | undefined;
  const prefix = uniquePrefix();

  beforeAll(async () => {
    sim = await startSimulator({ vehicles: 0, robots: 0, seed: 31, behaviours: false });
    addQuietFleet(sim.control, { vehicles: 0, robots: ROBOTS });
    admin = connect();
  });

  afterAll(async () => {
    await daemon?.stop().catch(() => daemon?.kill());
    await sim?.close();
    if (admin) {
      await deletePrefixKeys(admin, prefix);
      admin.disconnect();
    }
    removeConfigFiles();
  });

  const paceEvents = async (): Promise<FleetEvent[]> =>
    (await readAllEvents(new EventLog({ redis: admin, prefix })))
      .map((entry) => entry.event)
      .filter((event) => event.subject.startsWith('poller/'));
  const named = (events: readonly FleetEvent[]) => events.map((event) => `${event.type} ${event.subject}`);
  /** The poller events logged once `line` (`type subject`) is among them (at most 60 s). */
  const untilLogged = (line: string): Promise<FleetEvent[]> =>
    waitFor(
      line,
      paceEvents,
      (events) => (named(events).includes(line) ? undefined : named(events).join(', ')),
      {
        timeoutMs: 60_000,
      },
    );

  it('raises monitor.polling.behind while the workers fall behind, and caught_up once they keep up', async (context) => {
    const pollers: Partial<Record<(typeof FLEET_POLLERS)[number], PollerSettings>> = {};
    for (const name of FLEET_POLLERS) pollers[name] = { enabled: false };
    pollers.robots = { enabled: true, interval: '2s' };
    pollers.robot_health = { enabled: true, interval: '1s', batch_size: 1 };
    const fw = startDaemon(
      writeDaemonConfig({
        upstreamUrl: sim.url,
        redisUrl: redisUrl(),
        prefix,
        pollers,
        concurrency: 1,
        logLevel: 'info',
        extra: { detectors: { pace: { failure_threshold: 2, success_threshold: 2 } } },
      }),
      'pace',
    );
    daemon = fw;
    printOnFailure(context, () => fw.output(200));
    await within(fw.whenRunning, 30_000);

    sim.control.setFaults({ latencyMs: 150, scope: 'robots' });
    const behind = await untilLogged('monitor.polling.behind poller/robot_health');
    const event = behind.find(
      (e) => e.subject === 'poller/robot_health' && e.type === 'monitor.polling.behind',
    );
    expect(event?.data).toMatchObject({ severity: 'warning', poller: 'robot_health', intervalMs: 1_000 });
    expect(Number(event?.data.waiting)).toBeGreaterThan(0);

    sim.control.clearFaults();
    const after = await untilLogged('monitor.polling.caught_up poller/robot_health');
    // One incident per poller, however many ticks it was behind.
    const ofHealth = named(after).filter((line) => line.endsWith('poller/robot_health'));
    expect(ofHealth).toEqual([
      'monitor.polling.behind poller/robot_health',
      'monitor.polling.caught_up poller/robot_health',
    ]);
    // Slow answers are no failures: the gateway was never judged degraded, no robot went down.
    const all = (await readAllEvents(new EventLog({ redis: admin, prefix }))).map(
      (entry) => entry.event.type,
    );
    expect(
      all.filter((type) => type.startsWith('monitor.upstream') || type.startsWith('robot.health')),
    ).toEqual([]);
  }, 150_000);
});
