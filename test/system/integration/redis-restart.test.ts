import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import { EventLog } from '../../../src/store/event-log.js';
import {
  type DaemonProcess,
  printOnFailure,
  removeConfigFiles,
  startDaemon,
  writeDaemonConfig,
} from '../../support/daemon-process.js';
import { PrivateRedis, redisServerAvailable } from '../../support/private-redis.js';
import { uniquePrefix } from '../../support/redis.js';
import {
  addQuietFleet,
  discoveredEvents,
  fleetIds,
  longLease,
  robotSubject,
  Scenario,
  vehicleSubject,
  waitFor,
  waitForEntityBaseline,
  waitForHandOff,
  waitForMembershipBaseline,
  waitForPollRound,
} from '../../support/scenario.js';

/**
 * Redis goes away and comes back empty (no persistence): the daemon keeps running, reconnects,
 * notices that the store was emptied (the store marker is gone), says so once
 * (`monitor.store.reset`, and an error in its log), carries the incident that was open over
 * without announcing it again, rebuilds its baseline from the next polls silently, and reports the
 * next change as usual.
 */

/** What the daemon logs (at warn) when a beat of its scheduler finds no Redis. */
const NO_REDIS = /could not enqueue poll jobs/;

describe.skipIf(!redisServerAvailable())('Redis restarting without its data', () => {
  const prefix = uniquePrefix();
  let sim: Simulator;
  let redis: PrivateRedis | undefined;
  let admin: Redis | undefined;
  let daemon: DaemonProcess | undefined;

  beforeAll(async () => {
    sim = await startSimulator({ vehicles: 0, robots: 0, seed: 17, powerDelayMs: 3_000, behaviours: false });
    redis = await PrivateRedis.start();
    admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    admin.on('error', () => {});
  });

  afterAll(async () => {
    await daemon?.kill();
    admin?.disconnect();
    await redis?.stop('kill');
    await sim?.close();
    removeConfigFiles();
  });

  it('is survived and said once; the open incident is not announced again; the next change is detected', {
    timeout: 120_000,
  }, async (context) => {
    const server = redis!;
    const client = admin!;
    const config = writeDaemonConfig({ upstreamUrl: sim.url, redisUrl: server.url, prefix, batchSize: 5 });
    const fw = startDaemon(config, 'daemon');
    daemon = fw;
    const log = new EventLog({ redis: client, prefix });
    printOnFailure(
      context,
      () => `--- daemon output ---\n${fw.output(300)}\n--- redis output ---\n${server.output()}`,
    );

    await waitForMembershipBaseline(client, prefix);
    const shape = { vehicles: 6, robots: 2 };
    const ids = fleetIds(shape);
    const before = new Scenario(log, { intervalMs: 50 });
    await before.step('discover the fleet', () => addQuietFleet(sim.control, shape), discoveredEvents(ids));
    // A poll round planned after the discovery has polled every entity: the baseline is complete.
    await waitForPollRound(client, prefix);
    await waitForEntityBaseline(client, prefix, ids, { stableMs: 0 });
    await before.step(
      'a change before the restart',
      () => sim.control.updateVehicle('veh-0001', { vpnConnected: false }),
      [{ type: 'vehicle.vpn.disconnected', subject: vehicleSubject('veh-0001') }],
    );
    expect(await before.diff()).toEqual({ missing: [], duplicated: [], unexpected: [] });

    await server.stop('shutdown');
    // Away until the daemon has found out: its next beat cannot enqueue the tick's polls.
    await waitFor(
      'the daemon noticing that Redis is away',
      async () => fw.linesMatching(NO_REDIS),
      (lines) => (lines.length > 0 || !fw.alive ? undefined : 'no "could not enqueue poll jobs" logged'),
      { timeoutMs: 15_000 },
    );
    expect(fw.alive).toBe(true);
    await server.start();

    // Everything is gone, including the snapshots: the next lists and polls are a fresh, silent baseline.
    await waitForMembershipBaseline(client, prefix, { timeoutMs: 45_000 });
    await waitForPollRound(client, prefix, { timeoutMs: 45_000 });
    await waitForEntityBaseline(client, prefix, ids, { stableMs: 0 });
    expect(fw.alive).toBe(true);

    const after = new Scenario(log, { intervalMs: 50 });
    await after.step(
      'VPN drop after the restart',
      () => sim.control.updateVehicle('veh-0002', { vpnConnected: false }),
      [{ type: 'vehicle.vpn.disconnected', subject: vehicleSubject('veh-0002') }],
    );
    await after.step(
      'power change after the restart',
      () => sim.control.updateVehicle('veh-0003', { state: 'on' }),
      [{ type: 'vehicle.power.changed', subject: vehicleSubject('veh-0003') }],
    );
    await after.step(
      'lease taken after the restart',
      () => sim.control.updateRobot('rb-0001', { lease: longLease('teleop-9') }),
      [{ type: 'robot.lease.changed', subject: robotSubject('rb-0001') }],
    );
    // Nothing polled before is still on its way, and every poller has read the final state once more.
    await waitForPollRound(client, prefix);
    // veh-0001 has been disconnected all along: its incident was carried over, not announced again.
    // The loss itself is said once.
    after.expect([{ type: 'monitor.store.reset', subject: 'store/redis' }]);
    expect(await after.diff()).toEqual({ missing: [], duplicated: [], unexpected: [] });
    expect(fw.linesMatching(/the Redis store was emptied/)).toHaveLength(1);

    // The relay found its (recreated) outbox and consumer group: the events reached the queue too.
    await waitForHandOff(client, log, prefix, { timeoutMs: 20_000 });
    expect(fw.alive).toBe(true);
    expect(fw.exitedUnexpectedly).toBe(false);
    const exit = await fw.stop(15_000);
    expect(exit.code).toBe(0);
  });
});
