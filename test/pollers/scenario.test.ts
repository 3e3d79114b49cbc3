import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anyFleetEventSchema, catalogueEntry, FLEET_EVENT_TYPES } from '../../src/events/catalogue.js';
import type { FleetEvent } from '../../src/events/types.js';
import type { PollerName } from '../../src/pollers/config.js';
import { createHarness, type Harness } from './harness.js';

/**
 * A scripted scenario, poller tick by poller tick: every change the script makes to the simulated
 * fleet must come out as exactly the events it calls for — no more, no fewer — and by the end
 * every type of the catalogue has been seen.
 */

const ALL_ENTITY_POLLERS: PollerName[] = [
  'power',
  'robot_health',
  'robot_feedback',
  'robot_lease',
  'robot_config',
  'robot_command_queue',
];

let h: Harness;
const seen: FleetEvent[] = [];

async function step(pollers: PollerName[], expected: string[]): Promise<void> {
  await h.tick(...pollers);
  const events = await h.newFleetEvents();
  seen.push(...events);
  expect(events.map((event) => `${event.type} ${event.subject}`).sort()).toEqual([...expected].sort());
}

const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  h = await createHarness({ empty: true, simulator: { powerDelayMs: 600_000 } });
  const { control } = h.sim;
  const fresh = iso(Date.now());
  control.addVehicle({
    id: 'V-1',
    vpnConnected: true,
    ipAddress: '10.0.0.1',
    state: 'off',
    updatedAt: fresh,
  });
  control.addVehicle({ id: 'V-2', vpnConnected: true, ipAddress: '10.0.0.2', state: 'on', updatedAt: fresh });
  control.addVehicle({ id: 'V-3', vpnConnected: true, powerCapable: false });
  for (const deviceId of ['R-1', 'R-2']) {
    control.addRobot({
      deviceId,
      lease: null,
      activeSite: 'site-a',
      loadedRoute: 'route-a',
      feedback: { cortexStatus: 1, navStatus: 0, vehicleState: 'IDLE' },
    });
  }
});

afterAll(async () => {
  await h?.close();
});

describe('scripted scenario', () => {
  it('learns the fleet silently', async () => {
    await step(['vehicles', 'robots', ...ALL_ENTITY_POLLERS], []);
    // A second round of the unchanged fleet commits nothing new either.
    await step(['vehicles', 'robots', ...ALL_ENTITY_POLLERS], []);
  });

  it('discovers a vehicle, and its first power reading is a silent baseline', async () => {
    h.sim.control.addVehicle({
      id: 'V-4',
      vpnConnected: true,
      ipAddress: '10.0.0.4',
      updatedAt: iso(Date.now()),
    });
    await step(['vehicles', 'power'], ['vehicle.discovered vehicle/V-4']);
    await step(['vehicles', 'power'], []);
  });

  it('VPN and address changes', async () => {
    h.sim.control.updateVehicle('V-1', { vpnConnected: false, ipAddress: null });
    await step(['vehicles'], ['vehicle.vpn.disconnected vehicle/V-1', 'vehicle.ip.changed vehicle/V-1']);
    await step(['vehicles'], []);
    h.sim.control.updateVehicle('V-1', { vpnConnected: true, ipAddress: '10.0.0.9' });
    await step(['vehicles'], ['vehicle.vpn.connected vehicle/V-1', 'vehicle.ip.changed vehicle/V-1']);
    h.sim.control.updateVehicle('V-2', { ipAddress: '10.0.0.22' });
    await step(['vehicles'], ['vehicle.ip.changed vehicle/V-2']);
  });

  it('power state and commands: pending, stuck, completed with unstuck, failed', async () => {
    h.sim.control.updateVehicle('V-1', { state: 'on' });
    await step(['power'], ['vehicle.power.changed vehicle/V-1']);

    h.sim.control.updateVehicle('V-2', { pendingCommand: { state: 'off' } });
    await step(['power'], ['vehicle.power.command.pending vehicle/V-2']);
    await step(['power'], []);
    h.advance(2 * 60_000);
    await step(['power'], ['vehicle.power.command.stuck vehicle/V-2']);
    await step(['power'], []);
    h.sim.control.updateVehicle('V-2', { pendingCommand: null, state: 'off' });
    await step(
      ['power'],
      [
        'vehicle.power.changed vehicle/V-2',
        'vehicle.power.command.completed vehicle/V-2',
        'vehicle.power.command.unstuck vehicle/V-2',
      ],
    );

    h.sim.control.updateVehicle('V-1', { pendingCommand: { state: 'off' } });
    await step(['power'], ['vehicle.power.command.pending vehicle/V-1']);
    h.sim.control.updateVehicle('V-1', { pendingCommand: null });
    await step(['power'], ['vehicle.power.command.failed vehicle/V-1']);
  });

  it('stale and fresh power reports', async () => {
    h.sim.control.updateVehicle('V-4', { updatedAt: null });
    await step(['power'], ['vehicle.power.report.stale vehicle/V-4']);
    await step(['power'], []);
    h.sim.control.updateVehicle('V-4', { updatedAt: iso(Date.now()) });
    await step(['power'], ['vehicle.power.report.fresh vehicle/V-4']);
  });

  it('unreachable after the threshold of gateway errors, reachable when it answers again', async () => {
    h.sim.control.setFaults({ errorRates: { 503: 1 }, scope: 'v1', targets: ['V-1'] });
    await step(['power'], []);
    await step(['power'], ['vehicle.unreachable vehicle/V-1']);
    await step(['power'], []);
    h.sim.control.clearFaults();
    await step(['power'], ['vehicle.reachable vehicle/V-1']);
    expect(h.counters.errors('power', 'service_unavailable')).toBe(3);
  });

  it('a vehicle that stops supporting power is reported once and then polled rarely', async () => {
    h.sim.control.updateVehicle('V-2', { powerCapable: false });
    // One 404 proves nothing (the vehicle may have just left the list); a list that still holds it
    // after the 404 makes the next one count.
    await step(['power'], []);
    await step(['vehicles', 'power'], ['vehicle.power.unsupported vehicle/V-2']);
    const [outcome] = await h.tick('power').then((all) => all.filter((o) => o.shard === 0));
    expect(outcome?.notDue).toBe(1);
    expect(await h.newEvents()).toEqual([]);
  });

  it('a vehicle that supports power again is reported once at its next re-check', async () => {
    h.sim.control.updateVehicle('V-2', { powerCapable: true });
    // Re-checked pollers.power.unsupported_recheck (1 min) after the 404 that judged it.
    h.advance(60_000);
    await step(['power'], ['vehicle.power.supported vehicle/V-2']);
    await step(['power'], []);
  });

  it('removes a vehicle after it is missing from remove_after lists', async () => {
    h.sim.control.removeVehicle('V-4');
    await step(['vehicles', 'power'], []);
    await step(['vehicles', 'power'], ['vehicle.removed vehicle/V-4']);
    await step(['vehicles', 'power'], []);
  });

  it('robot membership', async () => {
    h.sim.control.addRobot({ deviceId: 'R-3' });
    await step(['robots'], ['robot.discovered robot/R-3']);
    h.sim.control.removeRobot('R-3');
    await step(['robots'], []);
    await step(['robots'], ['robot.removed robot/R-3']);
  });

  it('a list with an element not as the spec says, after its threshold, and whole again', async () => {
    h.sim.control.updateRobot('R-1', { listFields: { device_id: null } });
    await step(['robots'], []);
    await step(['robots'], ['monitor.list.unreadable upstream/robots']);
    expect(seen.at(-1)?.data).toMatchObject({ upstream: 'robots', rejected: 1, unnamed: 1 });
    await step(['robots'], []);
    h.sim.control.updateRobot('R-1', { listFields: null });
    await step(['robots'], []);
    await step(['robots'], ['monitor.list.readable upstream/robots']);
  });

  it('robot health down and up after their thresholds', async () => {
    h.sim.control.updateRobot('R-1', { healthy: false });
    await step(['robot_health'], []);
    await step(['robot_health'], ['robot.health.down robot/R-1']);
    h.sim.control.updateRobot('R-1', { healthy: true });
    await step(['robot_health'], []);
    await step(['robot_health'], ['robot.health.up robot/R-1']);
  });

  it('robot feedback, lease and configuration changes', async () => {
    h.sim.control.updateRobot('R-1', {
      feedback: { cortexStatus: 2, navStatus: 6, vehicleState: 'DRIVING' },
    });
    await step(
      ['robot_feedback'],
      [
        'robot.autonomy.changed robot/R-1',
        'robot.navigation.changed robot/R-1',
        'robot.state.changed robot/R-1',
      ],
    );
    const navigation = seen.find((event) => event.type === 'robot.navigation.changed');
    expect(navigation?.data.severity).toBe('warning');

    h.sim.control.updateRobot('R-2', { lease: { holderId: 'operator-7' } });
    await step(['robot_lease'], ['robot.lease.changed robot/R-2']);
    await step(['robot_lease'], []);

    h.sim.control.updateRobot('R-1', { loadedRoute: 'route-b' });
    await step(['robot_config'], ['robot.config.changed robot/R-1']);
    await step(['robot_config'], []);
  });

  it('robot command queue: a backlog past the threshold, drained when the queue empties', async () => {
    const { robots } = h.upstream;
    const waypoint = { waypoints: [{ latitude: 48.1, longitude: 11.5 }] };
    for (let i = 0; i < 2; i += 1) await robots.sendGpsWaypoints('R-2', waypoint);
    await step(['robot_command_queue'], []);
    // detectors.command_queue.backlog_threshold is 3 in the harness.
    await robots.sendGpsWaypoints('R-2', waypoint);
    await step(['robot_command_queue'], ['robot.command_queue.backlog robot/R-2']);
    await robots.sendGpsWaypoints('R-2', waypoint);
    await step(['robot_command_queue'], []);
    // A failed poll changes nothing: the queue empties unseen, then the backlog drains once.
    await robots.sendMotionCommand('R-2', { motion_command: 0, mode: 0 });
    h.sim.control.setFaults({ errorRates: { 500: 1 }, scope: 'robots', targets: ['R-2'] });
    try {
      await step(['robot_command_queue'], []);
    } finally {
      h.sim.control.clearFaults();
    }
    await step(['robot_command_queue'], ['robot.command_queue.drained robot/R-2']);
    await step(['robot_command_queue'], []);
    const drained = seen.at(-1);
    expect(drained?.data).toMatchObject({ previous: 4, current: 0 });
  });

  it('upstream degraded and recovered from counting windows', async () => {
    const windowMs = h.windows.windowMs;
    // Start of a fresh window (plus a second), on the test clock.
    const toNextWindow = () => h.advance(windowMs - (h.now() % windowMs) + 1_000);
    toNextWindow();
    const bad = h.windows.windowAt(h.now());
    h.sim.control.setFaults({ errorRates: { 500: 1 }, scope: 'robots' });
    // 3 rounds × 2 robots: 6 requests, all 500 (failed observations: no lease events).
    await step(['robot_lease', 'robot_lease', 'robot_lease'], []);
    await h.runner.runTick('upstream', bad + 1);
    const degraded = await h.newFleetEvents();
    seen.push(...degraded);
    expect(degraded.map((event) => `${event.type} ${event.subject}`)).toEqual([
      'monitor.upstream.degraded upstream/robots',
    ]);
    expect(degraded[0]?.data).toMatchObject({
      upstream: 'robots',
      reasons: ['error_ratio'],
      window: { requests: 6, serverErrors: 6 },
    });
    // The same window judged again (a second job for the tick) counts once.
    await h.runner.runTick('upstream', bad + 1);
    expect(await h.newEvents()).toEqual([]);
    // While the gateway is degraded, robot polls that fall behind are its incident's, not their own
    // (the runner reads the upstreams' states at most once a second).
    h.advance(1_001);
    const tick = h.runner.tickAt('robot_health');
    for (let i = 0; i < 4; i += 1) {
      await h.runner.tickEnqueued('robot_health', tick + i, { shards: 2, coalesced: 2, waiting: 2 });
    }
    expect(await h.newEvents()).toEqual([]);

    h.sim.control.clearFaults();
    toNextWindow();
    const good = h.windows.windowAt(h.now());
    await step(['robot_lease', 'robot_lease', 'robot_lease'], []);
    await h.runner.runTick('upstream', good + 1);
    const recovered = await h.newFleetEvents();
    seen.push(...recovered);
    expect(recovered.map((event) => `${event.type} ${event.subject}`)).toEqual([
      'monitor.upstream.recovered upstream/robots',
    ]);
  });

  it('polling behind its interval and caught up again, one tick judged once', async () => {
    h.advance(1_001); // past the runner's reading of the gateway's (now recovered) state
    const first = h.runner.tickAt('robot_feedback');
    const pace = (tick: number, coalesced: number, waiting: number) =>
      h.runner.tickEnqueued('robot_feedback', first + tick, { shards: 4, coalesced, waiting });
    await pace(0, 0, 0);
    // A shard still running a slow poll at its next tick is not behind.
    for (let i = 1; i <= 2; i += 1) await pace(i, 1, 0);
    for (let i = 3; i <= 4; i += 1) await pace(i, 2, 1);
    expect(await h.newEvents()).toEqual([]);
    await pace(5, 3, 3);
    const behind = await h.newFleetEvents();
    seen.push(...behind);
    expect(behind.map((event) => `${event.type} ${event.subject}`)).toEqual([
      'monitor.polling.behind poller/robot_feedback',
    ]);
    expect(behind[0]?.data).toMatchObject({
      poller: 'robot_feedback',
      shards: 4,
      coalesced: 3,
      waiting: 3,
      consecutiveTicks: 3,
    });
    // Another replica reporting the same tick (or an older one) changes nothing.
    await pace(5, 0, 0);
    await pace(4, 0, 0);
    expect(await h.newEvents()).toEqual([]);
    for (let i = 6; i <= 8; i += 1) await pace(i, 1, 0);
    const caughtUp = await h.newFleetEvents();
    seen.push(...caughtUp);
    expect(caughtUp.map((event) => `${event.type} ${event.subject}`)).toEqual([
      'monitor.polling.caught_up poller/robot_feedback',
    ]);
    const intervalMs = h.runner.intervalOf('robot_feedback');
    expect(caughtUp[0]?.data).toMatchObject({
      since: iso((first + 3) * intervalMs),
      durationMs: 3 * intervalMs,
    });
  });

  it('produced every type of the catalogue, each as a valid CloudEvent with a stable unique id', () => {
    const types = new Set(seen.map((event) => event.type));
    // `receiver/…` events come from delivery (see test/notifiers/delivery), `store/…` from the
    // store guard (test/pollers/store-guard.test.ts), `incident/…` from operators: not from polling.
    const notPolled = new Set(['receiver', 'store', 'incident']);
    const polled = FLEET_EVENT_TYPES.filter((type) => !notPolled.has(catalogueEntry(type).subject));
    expect(polled.filter((type) => !types.has(type))).toEqual([]);
    for (const event of seen) {
      const parsed = anyFleetEventSchema.safeParse(event);
      expect(parsed.success, `${event.type}: ${parsed.error?.message}`).toBe(true);
      expect(event.source).toBe('fleetwatch/test');
    }
    expect(new Set(seen.map((event) => event.id)).size).toBe(seen.length);
  });
});
