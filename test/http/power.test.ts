import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHttpApp } from '../../src/http/server.js';
import { createUpstream } from '../../src/upstream/index.js';
import { FakeUpstream, testConfig } from '../upstream/fake-upstream.js';
import { type AppHarness, appHarness, bearer, serverOptions, TOKEN } from './helpers.js';

let a: AppHarness;

beforeAll(async () => {
  a = await appHarness({
    token: TOKEN,
    tuning: { powerPollMs: 100 },
    harness: { simulator: { vehicles: 4, powerDelayMs: 300 } },
  });
  for (const vehicle of a.h.sim.control.state().vehicles) {
    a.h.sim.control.updateVehicle(vehicle.id, {
      state: 'off',
      pendingCommand: null,
      powerCapable: true,
      stuck: false,
      updatedAt: new Date().toISOString(),
    });
  }
});

afterAll(async () => {
  await a?.close();
});

const post = (url: string) => a.app.inject({ method: 'POST', url, headers: bearer() });

describe('POST /api/vehicles/{id}/power/{on|off}', () => {
  it('answers 202 once the upstream accepted the command', async () => {
    const response = await post('/api/vehicles/veh-0001/power/on');
    expect(response.statusCode).toBe(202);
    expect(response.json()).toEqual({ vehicleId: 'veh-0001', requested: 'on', outcome: 'accepted' });
    expect(a.h.sim.control.getVehicle('veh-0001')?.pendingCommand).toEqual({ state: 'on' });
  });

  it('with wait=true, answers 200 with the status once the vehicle reports the state', async () => {
    const response = await post('/api/vehicles/veh-0002/power/on?wait=true&timeout=10s');
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      vehicleId: 'veh-0002',
      requested: 'on',
      outcome: 'completed',
      status: { state: 'on', pendingCommand: null },
    });
    expect(body.elapsedMs).toBeGreaterThanOrEqual(200);
    expect(a.h.sim.control.getVehicle('veh-0002')?.state).toBe('on');
  });

  it('with wait=true, answers 202 timed_out when the command is still pending at the deadline', async () => {
    a.h.sim.control.updateVehicle('veh-0003', { stuck: true });
    const response = await post('/api/vehicles/veh-0003/power/on?wait&timeout=1s&interval=250ms');
    expect(response.statusCode).toBe(202);
    expect(response.json()).toMatchObject({
      vehicleId: 'veh-0003',
      outcome: 'timed_out',
      status: { state: 'off', pendingCommand: { state: 'on' } },
    });
  });

  it('with wait=true, answers 409 when another command replaces it', async () => {
    a.h.sim.control.updateVehicle('veh-0001', { stuck: true, pendingCommand: null, state: 'off' });
    const waiting = post('/api/vehicles/veh-0001/power/on?wait=true&timeout=5s');
    await new Promise((resolve) => setTimeout(resolve, 150));
    await a.h.upstream.fleet.requestPower('veh-0001', 'off');
    const response = await waiting;
    expect(response.statusCode).toBe(409);
    expect(response.json().error).toMatchObject({
      code: 'power_command_failed',
      message: 'veh-0001: a power off command replaced the power on request',
      details: { outcome: 'failed', status: { pendingCommand: { state: 'off' } } },
    });
  });

  it('maps upstream failures: 404 for an unknown or powerless vehicle, 502 for a 503', async () => {
    const unknown = await post('/api/vehicles/veh-9999/power/on');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toEqual({
      code: 'not_found',
      message:
        'vehicle "veh-9999" not found, not available to this client, or not power-capable (request_vehicle_power_on: 404)',
      details: { upstreamStatus: 404 },
    });

    a.h.sim.control.updateVehicle('veh-0004', { powerCapable: false });
    const powerless = await post('/api/vehicles/veh-0004/power/off');
    expect(powerless.statusCode).toBe(404);

    a.h.sim.control.updateVehicle('veh-0004', { powerCapable: true });
    a.h.sim.control.setFaults({ errorRates: { 503: 1 }, scope: 'v1', targets: ['veh-0004'] });
    try {
      const down = await post('/api/vehicles/veh-0004/power/off');
      expect(down.statusCode).toBe(502);
      expect(down.json().error).toMatchObject({
        code: 'upstream_service_unavailable',
        details: { upstreamStatus: 503 },
      });
      expect(down.json().error.message).toMatch(
        /^upstream service temporarily unavailable for vehicle "veh-0004"/,
      );
    } finally {
      a.h.sim.control.clearFaults();
    }
  });

  it('follows the spec: no body is sent upstream', () => {
    expect(a.h.sim.control.stats().contractViolations.total).toBe(0);
  });
});

describe('POST /api/vehicles/{id}/power/on answered 200 instead of 202 by the fleet service', () => {
  it('is 202 accepted with a warning, sent upstream once', async () => {
    const fake = await FakeUpstream.start();
    const upstream = createUpstream({ config: testConfig(fake.url) });
    const app = await buildHttpApp({ ...serverOptions(a.h, { token: TOKEN }), upstream });
    try {
      fake.sequence('POST', '/v1/vehicles/veh-0001/power/on', [[200, { status: 'success' }]]);
      const response = await app.inject({
        method: 'POST',
        url: '/api/vehicles/veh-0001/power/on',
        headers: bearer(),
      });
      expect(response.statusCode).toBe(202);
      expect(response.json()).toEqual({
        vehicleId: 'veh-0001',
        requested: 'on',
        outcome: 'accepted',
        warning:
          'the fleet service answered power on for vehicle "veh-0001" with 200, not 202 as the spec says; taken as accepted (do not send it again; follow it with the power status)',
      });
      expect(fake.count('POST', '/v1/vehicles/veh-0001/power/on')).toBe(1);
    } finally {
      await app.close();
      await upstream.close();
      await fake.close();
    }
  });
});
