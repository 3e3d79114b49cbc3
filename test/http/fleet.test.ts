import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetPage, RobotView, VehicleView } from '../../src/http/fleet-view.js';
import { type AppHarness, appHarness } from './helpers.js';

let a: AppHarness;

beforeAll(async () => {
  a = await appHarness({ harness: { simulator: { vehicles: 5, robots: 3 } } });
  const { sim } = a.h;
  sim.control.updateVehicle('veh-0001', {
    vpnConnected: true,
    ipAddress: '10.8.0.11',
    state: 'off',
    pendingCommand: null,
    updatedAt: new Date().toISOString(),
  });
  sim.control.updateVehicle('veh-0002', { vpnConnected: true, ipAddress: null });
  const [robot] = sim.control.state().robots;
  await a.h.upstream.robots.sendGpsWaypoints(robot!.deviceId, [{ latitude: 48.1, longitude: 11.5 }]);
  await a.h.tick(
    'vehicles',
    'power',
    'robots',
    'robot_health',
    'robot_feedback',
    'robot_lease',
    'robot_config',
    'robot_command_queue',
  );
});

afterAll(async () => {
  await a?.close();
});

async function vehicles(query = ''): Promise<FleetPage<VehicleView>> {
  const response = await a.app.inject({ url: `/api/vehicles${query}` });
  expect(response.statusCode).toBe(200);
  return response.json();
}

describe('GET /api/vehicles', () => {
  it('lists every known vehicle with VPN, address and power as the pollers stored them', async () => {
    const page = await vehicles();
    const simulated = a.h.sim.control.state().vehicles;
    expect(page.total).toBe(simulated.length);
    expect(page.nextCursor).toBeNull();
    expect(page.list.lastError).toBeNull();
    expect(page.list.lastSeenAt).not.toBeNull();
    expect(page.items.map((item) => item.id)).toEqual(simulated.map((vehicle) => vehicle.id).sort());
    for (const item of page.items) {
      const truth = simulated.find((vehicle) => vehicle.id === item.id)!;
      expect(item.presence).toEqual({ status: 'listed', missingSince: null, missedLists: 0 });
      expect(item.vpn.connected).toBe(truth.vpnConnected);
      expect(item.vpn.ipAddress).toBe(truth.ipAddress);
      expect(item.lastSeenAt).not.toBeNull();
      if (truth.powerCapable) {
        expect(item.power.state).toBe(truth.state);
        expect(item.power.pendingCommand?.state ?? null).toBe(truth.pendingCommand?.state ?? null);
        expect(item.power.updatedAt).toBe(truth.updatedAt);
        expect(item.power.powerCapable).toBe(true);
        expect(item.power.reachable).toBe(true);
      }
    }
    const first = page.items.find((item) => item.id === 'veh-0001')!;
    expect(first.vpn).toEqual({
      connected: true,
      ipAddress: '10.8.0.11',
      alerting: false,
      disconnectedSince: null,
    });
    expect(first.power).toMatchObject({ state: 'off', pendingCommand: null, stuck: false, staleSince: null });
    expect(first.lastError).toBeNull();
    expect(page.items.find((item) => item.id === 'veh-0002')!.vpn.ipAddress).toBeNull();
  });

  it('pages with limit and cursor, in id order, without repeats', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: FleetPage<VehicleView> = await vehicles(
        `?limit=2${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
      );
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((item) => item.id));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual((await vehicles()).items.map((item) => item.id));
  });

  it('shows a lost VPN, the open alert and the failing poll after the next ticks', async () => {
    a.h.sim.control.updateVehicle('veh-0003', { vpnConnected: false });
    a.h.sim.control.setFaults({ errorRates: { 503: 1 }, scope: 'v1', targets: ['veh-0004'] });
    try {
      a.h.advance(1_000);
      await a.h.tick('vehicles', 'power');
    } finally {
      a.h.sim.control.clearFaults();
    }
    const response = await a.app.inject({ url: '/api/vehicles/veh-0003' });
    expect(response.statusCode).toBe(200);
    const lost: VehicleView = response.json();
    // detectors.vpn.failure_threshold is 1 in the harness: the alert is open at once.
    expect(lost.vpn).toMatchObject({ connected: false, alerting: true });
    expect(Date.parse(lost.vpn.disconnectedSince ?? '')).not.toBeNaN();

    const failing: VehicleView = (await a.app.inject({ url: '/api/vehicles/veh-0004' })).json();
    expect(failing.lastError).toMatchObject({ signal: 'power', code: 'service_unavailable', status: 503 });
    // One failed poll is below reachability's failure threshold (2): last reading bad, no alert yet.
    expect(failing.power.reachable).toBe(false);
  });

  it('answers 404 for an id it does not know', async () => {
    const response = await a.app.inject({ url: '/api/vehicles/veh-9999' });
    expect(response.statusCode).toBe(404);
    expect(response.json().error.message).toBe(
      'fleetwatch knows no vehicle "veh-9999" (GET /api/vehicles lists the ones it has seen)',
    );
  });
});

describe('GET /api/robots', () => {
  it('lists the robots with health, feedback, lease, configuration and command queue', async () => {
    const response = await a.app.inject({ url: '/api/robots' });
    expect(response.statusCode).toBe(200);
    const page: FleetPage<RobotView> = response.json();
    const simulated = a.h.sim.control.state().robots;
    expect(page.items.map((item) => item.id)).toEqual(simulated.map((robot) => robot.deviceId).sort());
    for (const item of page.items) {
      const truth = simulated.find((robot) => robot.deviceId === item.id)!;
      expect(item.health.up).toBe(truth.healthy);
      expect(item.lease).toEqual({ holderId: truth.lease.holderId });
      expect(item.state).toBe(truth.feedback.vehicleState);
      expect(item.autonomy?.status).toBe(truth.feedback.cortexStatus);
      expect(item.navigation?.status).toBe(truth.feedback.navStatus);
      // The loaded configuration by name, not only its hash (nothing loaded: no name, no fields).
      for (const part of ['activeSite', 'loadedRoute', 'loadedZoneSet'] as const) {
        expect(item.config[part]?.name).toBe(truth[part]);
        expect(item.config[part]?.hash).toMatch(/^[0-9a-f]{16,}$/);
        if (truth[part] === null) expect(item.config[part]?.fields).toBeNull();
        else expect(item.config[part]?.fields).toContain('name');
      }
      expect(item.commandQueue).toEqual({ length: truth.commandQueue, backlogSince: null });
    }
    expect(page.items.map((item) => item.commandQueue.length)).toContain(1);
    const one = await a.app.inject({ url: `/api/robots/${encodeURIComponent(page.items[0]!.id)}` });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(page.items[0]);
  });
});
