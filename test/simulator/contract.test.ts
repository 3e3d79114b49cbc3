import type { OpenAPIBackend } from 'openapi-backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { type FleetOperation, loadFleetContract } from '../support/openapi.js';
import { call, getToken, type Res } from './helpers.js';

type Operation = FleetOperation;

describe('simulator /v1 against openapi/fleet-v1.yaml', () => {
  let sim: Simulator;
  let api: OpenAPIBackend;
  let token: string;
  let forbidden: string;
  let documented: Map<Operation, Set<number>>;
  const seen: Array<{ op: Operation; res: Res }> = [];

  const requests: Record<Operation, (id?: string, t?: string) => Promise<Res>> = {
    list_vehicles: (_id, t = token) => call(`${sim.url}/v1/vehicles`, { token: t }),
    get_vehicle_power_status: (id = 'veh-0001', t = token) =>
      call(`${sim.url}/v1/vehicles/${id}/power/status`, { token: t }),
    request_vehicle_power_on: (id = 'veh-0001', t = token) =>
      call(`${sim.url}/v1/vehicles/${id}/power/on`, { method: 'POST', token: t }),
    request_vehicle_power_off: (id = 'veh-0001', t = token) =>
      call(`${sim.url}/v1/vehicles/${id}/power/off`, { method: 'POST', token: t }),
  };
  const ops = Object.keys(requests) as Operation[];
  const record = async (op: Operation, id?: string, t?: string) => {
    const res = await requests[op](id, t);
    seen.push({ op, res });
    return res;
  };

  beforeAll(async () => {
    ({ api, documented } = await loadFleetContract());
    sim = await startSimulator({
      seed: 9,
      vehicles: 200,
      robots: 0,
      powerDelayMs: 50,
      clients: [
        { id: 'fleetwatch-demo', secret: 'demo-secret' },
        { id: 'banned', secret: 's', forbidden: true },
      ],
    });
    token = await getToken(sim);
    forbidden = await getToken(sim, 'banned', 's');
  });
  afterAll(() => sim.close());

  it('validates with a response check that catches violations', () => {
    expect(
      api.validateResponse(
        { status: 'success', data: [{ id: 'x', vpnConnected: true }] },
        'list_vehicles',
        200,
      ).valid,
    ).toBe(true);
    for (const [body, op, status] of [
      [{ status: 'success', data: [{ id: 'x', vpnConnected: true, ipAddress: null }] }, 'list_vehicles', 200],
      [
        { status: 'success', data: [{ id: 'x', vpnConnected: true, ipAddress: '300.1.1.1' }] },
        'list_vehicles',
        200,
      ],
      [{ status: 'success', data: { state: 'on', pendingCommand: null } }, 'get_vehicle_power_status', 200],
      [
        { status: 'success', data: { state: 'on', pendingCommand: null, updatedAt: 'now' } },
        'get_vehicle_power_status',
        200,
      ],
      [{ status: 'ok' }, 'request_vehicle_power_on', 202],
    ] as const) {
      expect(api.validateResponse(body, op, status).valid, JSON.stringify(body)).toBe(false);
    }
  });

  it('answers every success and error case within the document', async () => {
    const state = sim.control.state();
    const noIp = state.vehicles.find((v) => v.ipAddress === null);
    const capable = state.vehicles.find((v) => v.powerCapable)!;
    const incapable = state.vehicles.find((v) => !v.powerCapable)!;
    expect(noIp).toBeDefined();
    sim.control.updateVehicle(capable.id, { updatedAt: null, state: 'unknown' });

    for (const op of ops) {
      await record(op, capable.id);
      await record(op, capable.id, '');
      await record(op, capable.id, 'not-a-token');
      await record(op, capable.id, forbidden);
      if (op !== 'list_vehicles') {
        await record(op, 'veh-nope');
        await record(op, incapable.id);
      }
    }
    await record('request_vehicle_power_on', capable.id);
    await record('get_vehicle_power_status', capable.id);

    for (const code of [401, 403, 404, 500, 502, 503, 504]) {
      sim.control.setFaults({ errorRates: { [code]: 1 } });
      for (const op of ops) await record(op, capable.id);
    }
    sim.control.setFaults({ latencyMs: 5, errorRates: { 500: 0.3, 503: 0.3 } });
    for (let i = 0; i < 10; i++) for (const op of ops) await record(op, capable.id);
    sim.control.clearFaults();

    const statuses = new Map<Operation, Set<number>>();
    for (const { op, res } of seen) {
      expect(documented.get(op)?.has(res.status), `${op} answered ${res.status}`).toBe(true);
      const result = api.validateResponse(res.body, op, res.status);
      expect(result.errors, `${op} ${res.status} ${res.text}`).toBeNull();
      if (!statuses.has(op)) statuses.set(op, new Set());
      statuses.get(op)!.add(res.status);
    }
    // Every documented status was produced (and validated) at least once.
    for (const op of ops) expect([...statuses.get(op)!].sort()).toEqual([...documented.get(op)!].sort());
    expect(sim.control.stats().contractViolations.recent.filter((v) => v.side === 'server')).toEqual([]);
  });

  it('never answers a status the document does not list, whatever the fault rates', async () => {
    const candidates = [400, 401, 403, 404, 405, 408, 409, 410, 413, 422, 429, 500, 501, 502, 503, 504, 599];
    for (const code of candidates) {
      sim.control.setFaults({ errorRates: { [code]: 1 } });
      for (const op of ops) {
        for (const [id, t] of [
          ['veh-0001', token],
          ['veh-nope', token],
          ['veh-0001', ''],
        ] as const) {
          const res = await requests[op](id, t);
          expect(documented.get(op)?.has(res.status), `${op} with ${code}: ${res.status}`).toBe(true);
          expect(api.validateResponse(res.body, op, res.status).errors).toBeNull();
        }
      }
    }
    sim.control.setFaults({
      errorRates: Object.fromEntries(candidates.map((c) => [c, 1 / candidates.length])),
    });
    for (let i = 0; i < 40; i++) {
      for (const op of ops) {
        const res = await requests[op]();
        expect(documented.get(op)?.has(res.status), `${op}: ${res.status}`).toBe(true);
      }
    }
    sim.control.clearFaults();
    expect(sim.control.stats().contractViolations.recent.filter((v) => v.side === 'server')).toEqual([]);
  });
});
