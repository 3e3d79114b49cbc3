import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { EventLog } from '../../src/store/event-log.js';
import {
  type DaemonProcess,
  printOnFailure,
  removeConfigFiles,
  startDaemon,
  writeDaemonConfig,
} from '../support/daemon-process.js';
import { PrivateRedis, redisServerAvailable } from '../support/private-redis.js';
import { uniquePrefix } from '../support/redis.js';
import {
  addQuietFleet,
  discoveredEvents,
  fleetIds,
  longLease,
  robotSubject,
  Scenario,
  vehicleSubject,
  waitForEntityBaseline,
  waitForHandOff,
  waitForMembershipBaseline,
} from '../support/scenario.js';

/**
 * Redis goes away and comes back empty (no persistence): the daemon keeps running, reconnects,
 * rebuilds its baseline from the next polls (silently: it cannot know what changed while its
 * memory was gone) and reports the next change as usual.
 */

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

  it('is survived; the next change is detected', { timeout: 120_000 }, async (context) => {
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
    const before = new Scenario(log);
    await before.step('discover the fleet', () => addQuietFleet(sim.control, shape), discoveredEvents(ids));
    await waitForEntityBaseline(client, prefix, ids);
    await before.step(
      'a change before the restart',
      () => sim.control.updateVehicle('veh-0001', { vpnConnected: false }),
      [{ type: 'vehicle.vpn.disconnected', subject: vehicleSubject('veh-0001') }],
    );
    expect(await before.diff()).toEqual({ missing: [], duplicated: [], unexpected: [] });

    await server.stop('shutdown');
    // Deliberately away for a while: the daemon's polls, commits and queue reads all fail meanwhile.
    await delay(3_000);
    expect(fw.alive).toBe(true);
    await server.start();

    // Everything is gone, including the snapshots: the next lists and polls are a fresh, silent baseline.
    await waitForMembershipBaseline(client, prefix, { timeoutMs: 45_000 });
    await waitForEntityBaseline(client, prefix, ids, { timeoutMs: 45_000 });
    expect(fw.alive).toBe(true);

    const after = new Scenario(log);
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
    await after.waitForQuiet({ quietMs: 3_000 });
    // veh-0001 has been disconnected all along: on the new baseline it is (again) reported once the
    // threshold is met, with `previous: null`, since fleetwatch never saw it connected since.
    after.expect([{ type: 'vehicle.vpn.disconnected', subject: vehicleSubject('veh-0001') }]);
    expect(await after.diff()).toEqual({ missing: [], duplicated: [], unexpected: [] });

    // The relay found its (recreated) outbox and consumer group: the events reached the queue too.
    await waitForHandOff(client, log, prefix, { timeoutMs: 20_000 });
    expect(fw.alive).toBe(true);
    expect(fw.exitedUnexpectedly).toBe(false);
    const exit = await fw.stop(15_000);
    expect(exit.code).toBe(0);
  });
});
