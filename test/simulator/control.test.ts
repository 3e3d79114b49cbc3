import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimControlError, type SimState, type Simulator, startSimulator } from '../../src/simulator/index.js';
import { call, data, getToken, waitFor } from './helpers.js';

type Summary = { id: string; ipAddress?: string; vpnConnected: boolean };

describe('simulator control API', () => {
  let sim: Simulator;
  let token: string;
  const ctl = (path: string, method = 'GET', json?: unknown) =>
    call(`${sim.url}/_sim${path}`, { method, json });
  const errorOf = (body: unknown) => (body as { error: string }).error;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 11, vehicles: 10, robots: 2 });
    token = await getToken(sim);
  });
  afterAll(() => sim.close());

  it('reads the whole state without secrets', async () => {
    const res = await ctl('/state');
    expect(res.status).toBe(200);
    const state = res.body as SimState;
    expect(state.url).toBe(sim.url);
    expect(state.vehicles).toHaveLength(10);
    expect(state.robots).toHaveLength(2);
    expect(state.clients).toEqual([
      { id: 'fleetwatch-demo', vehicles: 'all', robots: 'all', forbidden: false },
    ]);
    expect(res.text).not.toContain('demo-secret');
  });

  it('patches a vehicle and the change shows in /v1', async () => {
    const res = await ctl('/vehicles/veh-0001', 'PATCH', { vpnConnected: false, ipAddress: null });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: 'veh-0001', vpnConnected: false, ipAddress: null });
    const list = data<Summary[]>(await call(`${sim.url}/v1/vehicles`, { token }));
    expect(list[0]).toEqual({ id: 'veh-0001', vpnConnected: false });
  });

  it('sends list fields as given, for a malformed list element, until they are cleared', async () => {
    const patched = await ctl('/vehicles/veh-0002', 'PATCH', { listFields: { ipAddress: null, extra: [1] } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: 'veh-0002', listFields: { ipAddress: null, extra: [1] } });
    const raw = (await call(`${sim.url}/v1/vehicles`, { token })).text;
    expect(raw).toContain('"id":"veh-0002"');
    expect(data<Array<Record<string, unknown>>>(await call(`${sim.url}/v1/vehicles`, { token }))[1]).toEqual({
      id: 'veh-0002',
      vpnConnected: expect.any(Boolean),
      ipAddress: null,
      extra: [1],
    });
    await ctl('/vehicles/veh-0002', 'PATCH', { listFields: null });
    const again = data<Array<Record<string, unknown>>>(await call(`${sim.url}/v1/vehicles`, { token }))[1];
    expect(again?.ipAddress === undefined || typeof again.ipAddress === 'string').toBe(true);
    expect(again).not.toHaveProperty('extra');

    await ctl('/robots/rb-0001', 'PATCH', { listFields: { device_id: null } });
    const robots = data<Array<Record<string, unknown>>>(await call(`${sim.url}/api/robots`, { token }));
    expect(robots[0]).toMatchObject({ device_id: null });
    await ctl('/robots/rb-0001', 'PATCH', { listFields: null });
    const restored = data<Array<Record<string, unknown>>>(await call(`${sim.url}/api/robots`, { token }));
    expect(restored[0]).toMatchObject({ device_id: 'rb-0001' });
  });

  it('rejects bad payloads with 400 and a message naming the field', async () => {
    for (const [path, method, body, field] of [
      ['/vehicles/veh-0001', 'PATCH', { vpnConnected: 'yes' }, 'vpnConnected'],
      ['/vehicles/veh-0001', 'PATCH', { ipAddress: '999.1.1.1' }, 'ipAddress'],
      ['/vehicles/veh-0001', 'PATCH', { state: 'maybe' }, 'state'],
      ['/vehicles/veh-0001', 'PATCH', { pendingCommand: { state: 'unknown' } }, 'pendingCommand.state'],
      ['/vehicles/veh-0001', 'PATCH', { updatedAt: 'yesterday' }, 'updatedAt'],
      ['/vehicles/veh-0001', 'PATCH', { colour: 'red' }, 'colour'],
      ['/vehicles', 'POST', { vpnConnected: true }, 'id'],
      ['/robots/rb-0001', 'PATCH', { feedback: { cortexStatus: 9 } }, 'feedback.cortexStatus'],
      ['/vehicles/veh-0001', 'PATCH', { listFields: [1] }, 'listFields'],
      [
        '/vehicles/veh-0001',
        'PATCH',
        { listFields: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`f${i}`, i])) },
        'listFields',
      ],
      ['/faults', 'PUT', { errorRates: { 200: 1 } }, 'errorRates'],
      ['/faults', 'PUT', { timeoutRate: 2 }, 'timeoutRate'],
      ['/faults', 'PUT', { scope: 'everything' }, 'scope'],
      ['/behaviours', 'PUT', { intervalMs: 'fast' }, 'intervalMs'],
    ] as const) {
      const res = await ctl(path, method, body);
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400);
      expect(errorOf(res.body)).toContain(field);
    }
    const notJson = await call(`${sim.url}/_sim/faults`, {
      method: 'PUT',
      body: '{',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(400);
  });

  it('throws SimControlError in process', () => {
    expect(() => sim.control.updateVehicle('veh-0001', { state: 'maybe' as 'on' })).toThrow(SimControlError);
    expect(() => sim.control.updateVehicle('veh-none', {})).toThrow(/no vehicle/);
  });

  it('adds and removes vehicles', async () => {
    const added = await ctl('/vehicles', 'POST', { id: 'veh-new', ipAddress: '10.99.0.1', state: 'on' });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({
      id: 'veh-new',
      state: 'on',
      pendingCommand: null,
      powerCapable: true,
    });
    expect((await ctl('/vehicles', 'POST', { id: 'veh-new' })).status).toBe(409);
    let list = data<Summary[]>(await call(`${sim.url}/v1/vehicles`, { token }));
    expect(list.at(-1)).toEqual({ id: 'veh-new', ipAddress: '10.99.0.1', vpnConnected: true });
    expect((await ctl('/vehicles/veh-new')).status).toBe(200);
    expect((await ctl('/vehicles/veh-new', 'DELETE')).status).toBe(200);
    expect((await ctl('/vehicles/veh-new')).status).toBe(404);
    expect((await ctl('/vehicles/veh-new', 'DELETE')).status).toBe(404);
    expect((await ctl('/vehicles/veh-new', 'PATCH', {})).status).toBe(404);
    list = data<Summary[]>(await call(`${sim.url}/v1/vehicles`, { token }));
    expect(list.some((v) => v.id === 'veh-new')).toBe(false);
  });

  it('sets a pending command that completes after the delay', async () => {
    const res = await ctl('/vehicles/veh-0002', 'PATCH', {
      powerCapable: true,
      vpnConnected: true,
      pendingCommand: { state: 'on' },
    });
    expect(res.body).toMatchObject({ pendingCommand: { state: 'on' } });
    expect(sim.control.state().powerDelayMs).toBe(3000);
  });

  it('adds, patches and removes robots', async () => {
    const added = await ctl('/robots', 'POST', {
      deviceId: 'rb-new',
      name: 'New',
      lease: { holderId: 'someone' },
      loadedRoute: 'r1',
    });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({
      deviceId: 'rb-new',
      lease: { holderId: 'someone' },
      loadedRoute: 'r1',
      routes: ['r1'],
    });
    const status = await call(`${sim.url}/api/platform/rb-new/v2/teleop-control/status`, { token });
    expect(data(status)).toMatchObject({ holder_id: 'someone' });
    const patched = await ctl('/robots/rb-new', 'PATCH', { healthy: false, lease: null });
    expect(patched.body).toMatchObject({ healthy: false, lease: { holderId: null } });
    expect((await call(`${sim.url}/api/platform/rb-new/v2/health`, { token })).status).toBe(503);
    expect((await ctl('/robots/rb-new', 'DELETE')).status).toBe(200);
    expect((await call(`${sim.url}/api/platform/rb-new/v2/health`, { token })).status).toBe(404);
  });

  it('sets, reads and clears faults', async () => {
    const set = await ctl('/faults', 'PUT', { errorRates: { 500: 1 }, scope: 'v1' });
    expect(set.status).toBe(200);
    expect((await ctl('/faults')).body).toEqual({ errorRates: { 500: 1 }, scope: 'v1' });
    expect((await call(`${sim.url}/v1/vehicles`, { token })).status).toBe(500);
    expect((await ctl('/faults', 'DELETE')).body).toEqual({});
    expect((await call(`${sim.url}/v1/vehicles`, { token })).status).toBe(200);
  });

  it('reports and resets stats', async () => {
    await call(`${sim.url}/v1/vehicles`, { token });
    const stats = (await ctl('/stats')).body as { requests: Record<string, Record<string, number>> };
    expect(stats.requests['list_vehicles']?.['200']).toBeGreaterThan(0);
    expect(stats.requests['control']).toBeUndefined();
    const reset = (await ctl('/stats', 'DELETE')).body as { requests: object };
    expect(reset.requests).toEqual({});
  });

  it('re-seeds the fleet on reset and keeps tokens valid', async () => {
    await ctl('/vehicles/veh-0003', 'DELETE');
    await ctl('/faults', 'PUT', { errorRates: { 500: 0.5 } });
    expect((await ctl('/reset', 'POST')).status).toBe(200);
    expect(sim.control.getVehicle('veh-0003')).toBeDefined();
    expect(sim.control.getFaults()).toEqual({});
    expect((await call(`${sim.url}/v1/vehicles`, { token })).status).toBe(200);
  });

  it('answers 404 for unknown control routes', async () => {
    expect((await ctl('/nothing')).status).toBe(404);
    expect((await ctl('/state', 'POST')).status).toBe(404);
  });
});

describe('simulator seeding', () => {
  const strip = (s: SimState) => ({
    vehicles: s.vehicles.map(({ updatedAt, ...v }) => ({ ...v, reported: updatedAt !== null })),
    robots: s.robots.map(({ lease, ...r }) => ({ ...r, leased: lease.holderId })),
  });

  it('builds the same fleet from the same seed and a different one from another', async () => {
    const [a, b, c] = await Promise.all([
      startSimulator({ seed: 42, vehicles: 200, robots: 6 }),
      startSimulator({ seed: 42, vehicles: 200, robots: 6 }),
      startSimulator({ seed: 43, vehicles: 200, robots: 6 }),
    ]);
    try {
      expect(strip(a.control.state())).toEqual(strip(b.control.state()));
      expect(strip(a.control.state())).not.toEqual(strip(c.control.state()));
      const vehicles = a.control.state().vehicles;
      expect(vehicles[0]?.id).toBe('veh-0001');
      expect(a.control.state().robots[0]?.deviceId).toBe('rb-0001');
      const share = (f: (v: (typeof vehicles)[number]) => boolean) =>
        vehicles.filter(f).length / vehicles.length;
      expect(share((v) => v.vpnConnected)).toBeGreaterThan(0.75);
      expect(share((v) => !v.powerCapable)).toBeGreaterThan(0.03);
      expect(share((v) => !v.powerCapable)).toBeLessThan(0.2);
      for (const state of ['on', 'off', 'unknown'])
        expect(share((v) => v.state === state)).toBeGreaterThan(0);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  // Whole and in one answer; how fast is the benchmark's business, not an assertion's.
  it('serves a 40,000-vehicle list whole, and one vehicle of it', async () => {
    const sim = await startSimulator({ vehicles: 40_000, robots: 0 });
    try {
      const token = await getToken(sim);
      const res = await call(`${sim.url}/v1/vehicles`, { token });
      expect(res.status).toBe(200);
      expect(data<unknown[]>(res)).toHaveLength(40_000);
      expect((await call(`${sim.url}/v1/vehicles/veh-39999/power/status`, { token })).status).toBeLessThan(
        500,
      );
    } finally {
      await sim.close();
    }
  });
});

describe('simulator behaviours', () => {
  it('flaps VPNs, takes robots down and changes leases on its own', async () => {
    const sim = await startSimulator({
      seed: 5,
      vehicles: 50,
      robots: 5,
      behaviours: {
        intervalMs: 20,
        vpnFlapRate: 0.2,
        vpnOutageMs: [30, 60],
        robotOutageRate: 0.3,
        robotOutageMs: [30, 60],
        leaseChangeRate: 0.5,
        feedbackChangeRate: 0.5,
      },
    });
    try {
      const token = await getToken(sim);
      const initial = new Map(sim.control.state().vehicles.map((v) => [v.id, v.vpnConnected]));
      await waitFor(
        async () => {
          const list = data<Summary[]>(await call(`${sim.url}/v1/vehicles`, { token }));
          return list.some((v) => initial.get(v.id) === true && !v.vpnConnected) ? true : undefined;
        },
        { what: 'a VPN flap' },
      );
      await waitFor(() => (sim.control.state().robots.some((r) => !r.healthy) ? true : undefined), {
        what: 'a robot outage',
      });
      // Outages end by themselves.
      await waitFor(
        () => {
          const back = sim.control
            .state()
            .vehicles.filter((v) => initial.get(v.id) === true && v.vpnConnected);
          return back.length > 0 ? true : undefined;
        },
        { what: 'reconnects' },
      );
      expect(sim.control.state().behaviours).toMatchObject({ intervalMs: 20 });
      expect(sim.control.setBehaviours(false)).toBe(false);
    } finally {
      await sim.close();
    }
  });

  it('lets some power commands stick', async () => {
    const sim = await startSimulator({
      vehicles: 3,
      robots: 0,
      powerDelayMs: 50,
      behaviours: { stuckCommandRate: 1, vpnFlapRate: 0, powerChangeRate: 0 },
    });
    try {
      const token = await getToken(sim);
      sim.control.updateVehicle('veh-0001', { powerCapable: true, vpnConnected: true, state: 'off' });
      expect((await call(`${sim.url}/v1/vehicles/veh-0001/power/on`, { method: 'POST', token })).status).toBe(
        202,
      );
      await new Promise((r) => setTimeout(r, 250));
      const status = await call(`${sim.url}/v1/vehicles/veh-0001/power/status`, { token });
      expect(data(status)).toMatchObject({ state: 'off', pendingCommand: { state: 'on' } });
    } finally {
      await sim.close();
    }
  });
});
