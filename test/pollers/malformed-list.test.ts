import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEvent } from '../../src/events/describe.js';
import type { FleetPage, RobotView, VehicleView } from '../../src/http/fleet-view.js';
import { type AppHarness, appHarness, captureLogs } from '../http/helpers.js';

/**
 * One bad record never blinds the fleet: a malformed element of the vehicle list (or the robot
 * list) is an observation error of its own entity, every other element is observed as usual, and
 * the list still counts for membership. What fleetwatch then cannot see is said once, as an
 * incident of the upstream that serves the list (`monitor.list.unreadable` / `readable`). Against the simulator (which sends the malformed element
 * when told to) and a real Redis, through the pollers and the API.
 */

const BAD = 'veh-0050';
const OTHER = 'veh-0007';

let a: AppHarness;
let logs: ReturnType<typeof captureLogs>;

const logged = (text: string, poller?: string) =>
  logs.lines
    .map((line) => JSON.parse(line) as { msg: string; poller?: string })
    .filter((line) => line.msg.includes(text) && (poller === undefined || line.poller === poller));

async function get<T>(url: string): Promise<T> {
  const response = await a.app.inject({ url });
  expect(response.statusCode, url).toBe(200);
  return response.json() as T;
}

beforeAll(async () => {
  logs = captureLogs();
  a = await appHarness({
    harness: {
      prefixStart: 'tu',
      simulator: { vehicles: 50, robots: 3 },
      logger: logs.logger,
      // 50 vehicles' power reads per round: on a loaded machine the harness's 400 ms time-out makes
      // some of them unreachable, which is not what this test is about.
      config: { upstream: { http: { request_timeout: 10_000 } } },
    },
  });
  a.h.sim.control.updateVehicle(OTHER, { vpnConnected: true });
  await a.h.tick('vehicles', 'robots', 'power');
  // The baseline's own reports (vehicles seeded off the VPN, stale power reports) are not this test's.
  await a.h.newEvents();
});

afterAll(async () => {
  await a?.close();
});

describe('a malformed vehicle among 50', () => {
  it('is neither removed nor rediscovered; the other 49 are observed as usual; its error is in the API; said once', async () => {
    const { h } = a;
    const faultAt = Date.now();
    h.sim.control.updateVehicle(BAD, { listFields: { ipAddress: null } });
    h.sim.control.updateVehicle(OTHER, { vpnConnected: false });
    for (let round = 0; round < 3; round += 1) await h.tick('vehicles', 'power');
    // remove_after is 2 in the harness: three lists without the vehicle would have removed it.
    const events = await h.newFleetEvents();
    expect(events.map((event) => `${event.type} ${event.subject}`).sort()).toEqual([
      'monitor.list.unreadable upstream/fleet',
      `vehicle.vpn.disconnected vehicle/${OTHER}`,
    ]);
    // What it cannot see is said, once: at the second list (detectors.list.failure_threshold 2).
    const unreadable = events.find((event) => event.type === 'monitor.list.unreadable');
    expect(unreadable?.data).toMatchObject({
      upstream: 'fleet',
      rejected: 1,
      elements: 50,
      unnamed: 0,
      consecutiveLists: 2,
      examples: [{ id: BAD, message: expect.stringContaining('ipAddress') }],
    });
    expect(describeEvent(unreadable!)).toMatch(
      /^the fleet API lists elements not as the spec says: 1 of 50 elements; the vehicle it names is not watched for VPN state and address; e\.g\. .*ipAddress/,
    );

    const bad = await get<VehicleView>(`/api/vehicles/${BAD}`);
    expect(bad.presence.status).toBe('listed');
    expect(bad.lastError).toMatchObject({ signal: 'link', code: 'invalid_payload' });
    expect(bad.lastError?.message).toContain(`vehicle "${BAD}"`);
    expect(bad.lastError?.message).toContain('ipAddress');
    // Its power is still polled: only its list element is wrong.
    const [power] = await h.store.read([{ kind: 'vehicle', id: BAD, facet: 'power' }]);
    expect(Date.parse(power?.lastPolledAt ?? power?.observedAt ?? '')).toBeGreaterThanOrEqual(faultAt);

    const page = await get<FleetPage<VehicleView>>('/api/vehicles');
    expect(page.total).toBe(50);
    expect(page.list.lastError).toBeNull();
    expect(page.list.rejected).toEqual({
      count: 1,
      elements: [
        { index: 49, id: BAD, code: 'invalid_payload', message: expect.stringContaining('ipAddress') },
      ],
    });
    const truth = new Map(h.sim.control.state().vehicles.map((vehicle) => [vehicle.id, vehicle]));
    const others = page.items.filter((item) => item.id !== BAD);
    expect(others).toHaveLength(49);
    for (const item of others) {
      expect(item.vpn.connected, item.id).toBe(truth.get(item.id)?.vpnConnected);
      expect(item.lastError?.signal, item.id).not.toBe('link');
      expect(Date.parse(item.lastSeenAt ?? ''), item.id).toBeGreaterThanOrEqual(faultAt);
    }

    // Counted on every list, logged once.
    expect(h.counters.errors('vehicles', 'invalid_payload')).toBe(3);
    expect(logged('do not match the spec')).toHaveLength(1);
    expect(logged('observations failed', 'vehicles')).toEqual([]);
  });

  it('observed as before once its element is right again, which is said once', async () => {
    const { h } = a;
    h.sim.control.updateVehicle(BAD, { listFields: null });
    await h.tick('vehicles');
    await h.tick('vehicles');
    expect(await h.newEvents()).toEqual(['monitor.list.readable upstream/fleet']);
    const bad = await get<VehicleView>(`/api/vehicles/${BAD}`);
    expect(bad.lastError?.signal).not.toBe('link');
    expect((await get<FleetPage<VehicleView>>('/api/vehicles')).list.rejected).toEqual({
      count: 0,
      elements: [],
    });
    expect(logged('matches the spec again')).toHaveLength(1);
    expect(h.counters.errors('vehicles', 'invalid_payload')).toBe(3);
  });

  it('an element that names no vehicle is counted, logged and shown, and removes nobody: any missing vehicle may be it', async () => {
    const { h } = a;
    h.sim.control.updateVehicle('veh-0049', { listFields: { id: null } });
    await h.tick('vehicles');
    await h.tick('vehicles');
    const [unreadable, ...more] = await h.newFleetEvents();
    expect(more).toEqual([]);
    expect(unreadable).toMatchObject({
      type: 'monitor.list.unreadable',
      subject: 'upstream/fleet',
      data: { rejected: 1, unnamed: 1, examples: [{ id: null }] },
    });
    expect(describeEvent(unreadable!)).toContain(
      '1 names no vehicle: a new vehicle behind it is not discovered',
    );
    expect(h.counters.errors('vehicles', 'invalid_payload')).toBe(5);
    const page = await get<FleetPage<VehicleView>>('/api/vehicles');
    expect(page.list.rejected.elements).toEqual([
      {
        index: 48,
        id: null,
        code: 'invalid_payload',
        message: expect.stringContaining('vehicle list element 48'),
      },
    ]);
    expect(logged('do not match the spec')).toHaveLength(2);
  });
});

describe('a robot list entry that names no device', () => {
  it('is counted and shown, and removes no robot (it may be any of them): every robot stays', async () => {
    const { h } = a;
    const robots = h.sim.control.state().robots;
    const first = robots[0]!;
    h.sim.control.updateRobot(first.deviceId, { listFields: { device_id: null } });
    await h.tick('robots');
    await h.tick('robots');
    expect(await h.newEvents()).toEqual(['monitor.list.unreadable upstream/robots']);
    expect(h.counters.errors('robots', 'invalid_payload')).toBe(2);
    const page = await get<FleetPage<RobotView>>('/api/robots');
    expect(page.items.map((item) => item.id)).toEqual(robots.map((robot) => robot.deviceId).sort());
    expect(page.list.rejected).toEqual({
      count: 1,
      elements: [
        {
          index: 0,
          id: null,
          code: 'invalid_payload',
          message: expect.stringContaining('no device_id, deviceId or id'),
        },
      ],
    });
    expect(logged('robot list do not match the spec')).toHaveLength(1);
  });
});
