import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics, type Metrics } from '../../src/metrics/index.js';
import { SNAPSHOT_FIELDS } from '../../src/store/commit-script.js';
import { createHarness, type Harness } from '../pollers/harness.js';
import { samples, sampleValue } from './helpers.js';

/**
 * Fleet gauges read from a snapshot store the real pollers filled, against the simulator: what
 * the detectors settled on (after their thresholds) is what the gauges show, per entity too.
 */

const PER_ENTITY = [
  'fleetwatch_vehicle_vpn_connected',
  'fleetwatch_vehicle_power_on',
  'fleetwatch_vehicle_power_state',
  'fleetwatch_robot_up',
  'fleetwatch_robot_autonomy_status',
];

let h: Harness;
let metrics: Metrics;

const iso = (ms: number) => new Date(ms).toISOString();

function fleetMetrics(perEntity: boolean, fleetCacheMs = 0): Metrics {
  const created = createMetrics({ perEntity, fleetCacheMs, defaultMetrics: false, now: () => h.now() });
  created.bind({ store: h.store });
  return created;
}

async function byLabel(name: string, label: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const sample of await samples(metrics.registry, name))
    out[String(sample.labels[label])] = sample.value;
  return out;
}

beforeAll(async () => {
  h = await createHarness({ empty: true, simulator: { powerDelayMs: 600_000 } });
  const { control } = h.sim;
  const fresh = iso(Date.now());
  control.addVehicle({ id: 'V-1', vpnConnected: true, ipAddress: '10.0.0.1', state: 'on', updatedAt: fresh });
  control.addVehicle({ id: 'V-2', vpnConnected: false, state: 'off', updatedAt: fresh });
  control.addVehicle({ id: 'V-3', vpnConnected: true, powerCapable: false });
  control.addVehicle({
    id: 'V-4',
    vpnConnected: true,
    state: 'on',
    updatedAt: fresh,
    pendingCommand: { state: 'off' },
  });
  control.addRobot({ deviceId: 'R-1', feedback: { cortexStatus: 1 } });
  control.addRobot({ deviceId: 'R-2', healthy: false, feedback: { cortexStatus: 3 } });
  // Lists first (membership), then every signal; robot health fails twice to reach its threshold.
  await h.tick('vehicles', 'robots');
  await h.tick('power', 'robot_health', 'robot_feedback');
  await h.tick('robot_health');
  metrics = fleetMetrics(true);
});

afterAll(async () => {
  await h?.close();
});

describe('fleet gauges', () => {
  it('count vehicles by VPN link and power, power commands, and robots by health', async () => {
    expect(await byLabel('fleetwatch_vehicles', 'vpn')).toEqual({ connected: 3, disconnected: 1 });
    // V-3 has no power control: its power is unknown.
    expect(await byLabel('fleetwatch_vehicles_by_power', 'state')).toEqual({ on: 2, off: 1, unknown: 1 });
    expect(await byLabel('fleetwatch_vehicle_power_commands', 'status')).toEqual({ pending: 1, stuck: 0 });
    expect(await byLabel('fleetwatch_robots', 'health')).toEqual({ up: 1, down: 1 });
    const at = await sampleValue(metrics.registry, 'fleetwatch_fleet_read_timestamp_seconds');
    expect(Math.abs((at ?? 0) - h.now() / 1000)).toBeLessThan(5);
    expect(await sampleValue(metrics.registry, 'fleetwatch_fleet_read_duration_seconds')).toBeGreaterThan(0);
  });

  it('show each vehicle and robot', async () => {
    expect(await byLabel('fleetwatch_vehicle_vpn_connected', 'vehicle')).toEqual({
      'V-1': 1,
      'V-2': 0,
      'V-3': 1,
      'V-4': 1,
    });
    // Unknown power has no 0/1; the state series says "unknown".
    expect(await byLabel('fleetwatch_vehicle_power_on', 'vehicle')).toEqual({ 'V-1': 1, 'V-2': 0, 'V-4': 1 });
    const states = (await samples(metrics.registry, 'fleetwatch_vehicle_power_state')).map(
      (sample) => `${sample.labels.vehicle}=${sample.labels.state}:${sample.value}`,
    );
    expect(states.sort()).toEqual(['V-1=on:1', 'V-2=off:1', 'V-3=unknown:1', 'V-4=on:1']);
    expect(await byLabel('fleetwatch_robot_up', 'robot')).toEqual({ 'R-1': 1, 'R-2': 0 });
    // R-2 is down: its feedback calls fail too, so there is no autonomy status to show yet.
    expect(await byLabel('fleetwatch_robot_autonomy_status', 'robot')).toEqual({ 'R-1': 1 });
  });

  it('follow the fleet: a command becomes stuck, a removed vehicle leaves, a robot comes back', async () => {
    h.advance(2 * 60_000); // past detectors.power.stuck_after (1m in the test config)
    h.sim.control.removeVehicle('V-1');
    h.sim.control.updateRobot('R-2', { healthy: true });
    await h.tick('power', 'vehicles', 'vehicles', 'robot_health', 'robot_health', 'robot_feedback');

    expect(await byLabel('fleetwatch_vehicle_power_commands', 'status')).toEqual({ pending: 0, stuck: 1 });
    expect(await byLabel('fleetwatch_vehicles', 'vpn')).toEqual({ connected: 2, disconnected: 1 });
    expect(Object.keys(await byLabel('fleetwatch_vehicle_vpn_connected', 'vehicle')).sort()).toEqual([
      'V-2',
      'V-3',
      'V-4',
    ]);
    expect(await byLabel('fleetwatch_robots', 'health')).toEqual({ up: 2, down: 0 });
    expect(await byLabel('fleetwatch_robot_up', 'robot')).toEqual({ 'R-1': 1, 'R-2': 1 });
    expect(await byLabel('fleetwatch_robot_autonomy_status', 'robot')).toEqual({ 'R-1': 1, 'R-2': 3 });
  });

  it('leave out the per-entity series when per_entity is off, keeping the totals', async () => {
    const totals = fleetMetrics(false);
    for (const name of PER_ENTITY) {
      expect(totals.names).not.toContain(name);
      expect(metrics.names).toContain(name);
    }
    const text = await totals.registry.metrics();
    for (const name of PER_ENTITY) expect(text).not.toContain(name);
    expect(text).toContain('fleetwatch_vehicles{vpn="connected"} 2');
    expect(text).toContain('fleetwatch_robots{health="up"} 2');
  });

  it('read everything again when the store was replaced under it, versions started again', async () => {
    // A store replaced under the daemon (a reset) has none of the change feed this reading follows.
    const ref = { kind: 'vehicle' as const, id: 'V-3', facet: 'link' };
    const key = h.store.keyOf(ref);
    const connected = () =>
      sampleValue(metrics.registry, 'fleetwatch_vehicle_vpn_connected', { vehicle: 'V-3' });
    const [before] = await h.store.read([ref]);
    expect(await connected()).toBe(1);
    // The link's VPN signal alerting: the vehicle shows as disconnected.
    const state = { ...(before!.state as Record<string, unknown>) };
    state.vpn = { ...(state.vpn as Record<string, unknown>), alerting: true };
    // As the store writes a commit: the time as text and in ms.
    const { state: field, observedAt: at, observedAtMs: atMs } = SNAPSHOT_FIELDS;
    const rewrite = (value: unknown, ms: number) =>
      h.redis.hset(key, field, JSON.stringify(value), at, new Date(ms).toISOString(), atMs, ms);
    const observed = Date.parse(before!.observedAt!);
    const feeds = h.store.keys.allShards.map((shard) => shard.changes);
    await rewrite(state, observed + 1);
    await h.redis.del(...feeds);
    const [after] = await h.store.read([ref]);
    expect(after!.version).toBe(before!.version);
    expect(await connected()).toBe(0);
    await rewrite(before!.state, observed);
    await h.redis.del(...feeds);
    expect(await connected()).toBe(1);
  });

  it('reuse one reading within fleet_cache', async () => {
    const cached = fleetMetrics(true, 60_000);
    expect(await sampleValue(cached.registry, 'fleetwatch_vehicles', { vpn: 'disconnected' })).toBe(1);
    h.sim.control.updateVehicle('V-2', { vpnConnected: true });
    await h.tick('vehicles');
    // The uncached registry sees the change; the cached one still shows its reading.
    expect(await sampleValue(metrics.registry, 'fleetwatch_vehicles', { vpn: 'disconnected' })).toBe(0);
    expect(await sampleValue(cached.registry, 'fleetwatch_vehicles', { vpn: 'disconnected' })).toBe(1);
  });
});
