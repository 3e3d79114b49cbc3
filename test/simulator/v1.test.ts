import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { call, data, getToken, waitFor } from './helpers.js';

type Summary = { id: string; ipAddress?: string; vpnConnected: boolean };
type Power = { state: string; pendingCommand: { state: string } | null; updatedAt: string | null };

describe('simulator /v1', () => {
  let sim: Simulator;
  let token: string;
  let limited: string;
  let forbidden: string;
  const v1 = (path: string) => `${sim.url}/v1${path}`;
  const status = (id: string, t = token) => call(v1(`/vehicles/${id}/power/status`), { token: t });
  const power = (id: string, target: 'on' | 'off', t = token) =>
    call(v1(`/vehicles/${id}/power/${target}`), { method: 'POST', token: t });

  beforeAll(async () => {
    sim = await startSimulator({
      seed: 7,
      vehicles: 60,
      robots: 0,
      powerDelayMs: 150,
      clients: [
        { id: 'fleetwatch-demo', secret: 'demo-secret' },
        { id: 'limited', secret: 's', vehicles: ['veh-0002', 'veh-0001', 'veh-9999'] },
        { id: 'banned', secret: 's', forbidden: true },
      ],
    });
    token = await getToken(sim);
    limited = await getToken(sim, 'limited', 's');
    forbidden = await getToken(sim, 'banned', 's');
    for (const id of ['veh-0001', 'veh-0002']) {
      sim.control.updateVehicle(id, { powerCapable: true, vpnConnected: true, stuck: false });
    }
  });
  afterAll(() => sim.close());
  afterEach(() => sim.control.clearFaults());

  describe('list_vehicles', () => {
    it('lists every vehicle the client may access', async () => {
      const res = await call(v1('/vehicles'), { token });
      expect(res.status).toBe(200);
      expect((res.body as { status: string }).status).toBe('success');
      const list = data<Summary[]>(res);
      expect(list).toHaveLength(60);
      expect(list[0]?.id).toBe('veh-0001');
      for (const v of list)
        expect(Object.keys(v).sort()).toEqual(expect.arrayContaining(['id', 'vpnConnected']));
    });

    it('omits ipAddress (never null) when a vehicle has none', async () => {
      sim.control.updateVehicle('veh-0003', { ipAddress: null });
      const list = data<Summary[]>(await call(v1('/vehicles'), { token }));
      const v3 = list.find((v) => v.id === 'veh-0003')!;
      expect('ipAddress' in v3).toBe(false);
      expect(list.every((v) => v.ipAddress !== null)).toBe(true);
      sim.control.updateVehicle('veh-0003', { ipAddress: '10.20.30.40', vpnConnected: false });
      const again = data<Summary[]>(await call(v1('/vehicles'), { token })).find((v) => v.id === 'veh-0003');
      expect(again).toEqual({ id: 'veh-0003', ipAddress: '10.20.30.40', vpnConnected: false });
    });

    it('lists only granted vehicles that exist for a restricted client', async () => {
      const list = data<Summary[]>(await call(v1('/vehicles'), { token: limited }));
      expect(list.map((v) => v.id)).toEqual(['veh-0002', 'veh-0001']);
    });

    it('answers 401 without or with a bad token and 403 for a forbidden client', async () => {
      expect((await call(v1('/vehicles'))).status).toBe(401);
      expect((await call(v1('/vehicles'), { token: 'garbage' })).status).toBe(401);
      expect((await call(v1('/vehicles'), { headers: { authorization: `Basic ${token}` } })).status).toBe(
        401,
      );
      const res = await call(v1('/vehicles'), { token: forbidden });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ status: 'error', message: expect.any(String) });
    });
  });

  describe('get_vehicle_power_status', () => {
    it('returns state, pendingCommand and updatedAt', async () => {
      const res = await status('veh-0001');
      expect(res.status).toBe(200);
      const body = data<Power>(res);
      expect(Object.keys(body).sort()).toEqual(['pendingCommand', 'state', 'updatedAt']);
      expect(['on', 'off', 'unknown']).toContain(body.state);
    });

    it('reports updatedAt: null for a vehicle that never reported', async () => {
      sim.control.updateVehicle('veh-0004', { powerCapable: true, state: 'unknown', updatedAt: null });
      expect(data<Power>(await status('veh-0004'))).toEqual({
        state: 'unknown',
        pendingCommand: null,
        updatedAt: null,
      });
    });

    it('seeds some vehicles with updatedAt null and some without ipAddress', async () => {
      const state = sim.control.state();
      expect(state.vehicles.some((v) => v.updatedAt === null)).toBe(true);
      expect(state.vehicles.some((v) => v.ipAddress === null)).toBe(true);
      expect(state.vehicles.some((v) => !v.powerCapable)).toBe(true);
    });

    it('answers 404 for unknown, not granted and not power-capable vehicles', async () => {
      expect((await status('veh-9999')).status).toBe(404);
      expect((await status('veh-0003', limited)).status).toBe(404);
      sim.control.updateVehicle('veh-0005', { powerCapable: false });
      for (const res of [
        await status('veh-0005'),
        await power('veh-0005', 'on'),
        await power('veh-0005', 'off'),
      ]) {
        expect(res.status).toBe(404);
      }
      expect((await status('veh-0001', limited)).status).toBe(200);
    });

    it('answers 401 and 403', async () => {
      expect((await status('veh-0001', '')).status).toBe(401);
      expect((await status('veh-0001', forbidden)).status).toBe(403);
      expect((await power('veh-0001', 'on', forbidden)).status).toBe(403);
      expect((await power('veh-0001', 'on', 'bad')).status).toBe(401);
    });
  });

  describe('power commands', () => {
    it('accepts with 202, shows the pending command, completes after powerDelayMs', async () => {
      sim.control.updateVehicle('veh-0001', { state: 'off' });
      const accepted = await power('veh-0001', 'on');
      expect(accepted.status).toBe(202);
      expect(accepted.body).toEqual({ status: 'success' });
      const pending = data<Power>(await status('veh-0001'));
      expect(pending).toMatchObject({ state: 'off', pendingCommand: { state: 'on' } });
      const done = await waitFor(
        async () => {
          const p = data<Power>(await status('veh-0001'));
          return p.pendingCommand === null ? p : undefined;
        },
        { timeoutMs: 3000, what: 'power on to complete' },
      );
      expect(done.state).toBe('on');
      expect(Date.now() - Date.parse(done.updatedAt!)).toBeLessThan(5000);
    });

    it('never completes a command on a stuck vehicle', async () => {
      sim.control.updateVehicle('veh-0002', { state: 'on', stuck: true });
      expect((await power('veh-0002', 'off')).status).toBe(202);
      const until = Date.now() + 150 * 4;
      while (Date.now() < until) {
        expect(data<Power>(await status('veh-0002'))).toMatchObject({
          state: 'on',
          pendingCommand: { state: 'off' },
        });
        await new Promise((r) => setTimeout(r, 50));
      }
      sim.control.updateVehicle('veh-0002', { stuck: false });
      await waitFor(async () => (data<Power>(await status('veh-0002')).state === 'off' ? true : undefined), {
        what: 'unstuck command to complete',
      });
    });

    it('holds a command while the vehicle is off the VPN', async () => {
      sim.control.updateVehicle('veh-0001', { state: 'off', vpnConnected: false });
      await power('veh-0001', 'on');
      await new Promise((r) => setTimeout(r, 300));
      expect(data<Power>(await status('veh-0001'))).toMatchObject({
        state: 'off',
        pendingCommand: { state: 'on' },
      });
      sim.control.updateVehicle('veh-0001', { vpnConnected: true });
      expect(data<Power>(await status('veh-0001'))).toMatchObject({ state: 'on', pendingCommand: null });
    });

    it('records a body on POST power as a client contract violation but still answers 202', async () => {
      const before = sim.control.stats().contractViolations.total;
      const res = await call(v1('/vehicles/veh-0001/power/off'), {
        method: 'POST',
        token,
        json: { force: true },
      });
      expect(res.status).toBe(202);
      const after = sim.control.stats().contractViolations;
      expect(after.total).toBe(before + 1);
      expect(after.recent.at(-1)).toMatchObject({ operation: 'request_vehicle_power_off', side: 'client' });
    });
  });

  it('answers 404 for unknown paths and methods', async () => {
    for (const [method, path] of [
      ['GET', '/v1/nothing'],
      ['POST', '/v1/vehicles'],
      ['GET', '/v1/vehicles/veh-0001/power/on'],
      ['POST', '/v1/vehicles/veh-0001/power/status'],
      ['GET', '/v2/vehicles'],
      ['GET', '/'],
    ] as const) {
      const res = await call(`${sim.url}${path}`, { method, token });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
  });

  describe('faults', () => {
    it('injects 500/502/503/504 only where the spec allows them', async () => {
      for (const code of [500, 502, 503, 504]) {
        sim.control.setFaults({ errorRates: { [code]: 1 } });
        expect((await call(v1('/vehicles'), { token })).status).toBe(code === 500 ? 500 : 200);
        expect((await status('veh-0001')).status).toBe(code);
        expect((await power('veh-0001', 'on')).status).toBe(code);
        expect((await power('veh-0001', 'off')).status).toBe(code);
      }
      sim.control.setFaults({ errorRates: { 404: 1 } });
      expect((await call(v1('/vehicles'), { token })).status).toBe(200);
      expect((await status('veh-0001')).status).toBe(404);
    });

    it('does not run a faulted power command', async () => {
      sim.control.updateVehicle('veh-0001', { state: 'off', pendingCommand: null });
      sim.control.setFaults({ errorRates: { 503: 1 } });
      expect((await power('veh-0001', 'on')).status).toBe(503);
      sim.control.clearFaults();
      expect(data<Power>(await status('veh-0001')).pendingCommand).toBeNull();
    });

    it('restricts faults to targets', async () => {
      sim.control.setFaults({ errorRates: { 502: 1 }, targets: ['veh-0002'] });
      expect((await status('veh-0001')).status).toBe(200);
      expect((await status('veh-0002')).status).toBe(502);
      expect((await call(v1('/vehicles'), { token })).status).toBe(200);
    });

    it('adds latency', async () => {
      sim.control.setFaults({ latencyMs: 120, latencyJitterMs: 30, scope: 'v1' });
      const started = Date.now();
      expect((await status('veh-0001')).status).toBe(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(110);
    });

    it('answers malformed JSON with the success status', async () => {
      sim.control.setFaults({ malformedRate: 1 });
      const res = await call(v1('/vehicles'), { token });
      expect(res.status).toBe(200);
      expect(() => JSON.parse(res.text)).toThrow();
      expect(sim.control.stats().faults.malformed).toBeGreaterThan(0);
    });

    it('holds a request open on a time-out fault', async () => {
      sim.control.setFaults({ timeoutRate: 1, scope: 'v1' });
      await expect(call(v1('/vehicles'), { token, signal: AbortSignal.timeout(200) })).rejects.toThrow();
      expect(sim.control.stats().requests['list_vehicles']?.['timeout']).toBeGreaterThan(0);
    });
  });

  it('produced no server-side contract violations', () => {
    const server = sim.control.stats().contractViolations.recent.filter((v) => v.side === 'server');
    expect(server).toEqual([]);
  });
});
