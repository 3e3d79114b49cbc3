import { afterEach, describe, expect, it } from 'vitest';
import { type RobotApi, robotApi } from './robot-api.js';

/** The Health Check group through `/api/robots/{deviceId}/...`: live reads, the snapshot beside them, refusals. */

let api: RobotApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('GET /api/robots/{deviceId}/health', () => {
  it('passes the robot answer on, with the health snapshot once a poll stored one', async () => {
    api = await robotApi();
    const before = await api.request('GET', `/api/robots/${api.robot}/health`);
    expect(before.statusCode).toBe(200);
    expect(before.json()).toEqual({
      deviceId: api.robot,
      operation: 'robot.health',
      live: { status: 'ok' },
      snapshot: null,
    });

    await api.a.h.tick('robots', 'robot_health');
    const after = (await api.request('GET', `/api/robots/${api.robot}/health`)).json();
    expect(after.snapshot).toMatchObject({
      facet: 'health',
      health: { up: true, alerting: false },
      lastError: null,
    });
    expect(Date.parse(after.snapshot.observedAt)).not.toBeNaN();
    // A read sends nothing but the read, and is no audit matter.
    expect(api.audits()).toEqual([]);
  });

  it('answers the uuid read with the robot envelope and no snapshot (no poller keeps it)', async () => {
    api = await robotApi();
    const uuid = api.a.h.sim.control.getRobot(api.robot)!.uuid;
    const body = (await api.request('GET', `/api/robots/${api.robot}/uuid`)).json();
    expect(body.live.data).toEqual({ uuid });
    expect(body.snapshot).toBeNull();
  });

  it('needs the API token once one is configured', async () => {
    api = await robotApi();
    const response = await api.request('GET', `/api/robots/${api.robot}/health`, { token: null });
    expect(response.statusCode).toBe(401);
    expect(api.sent()).toBe(0);
  });

  it('answers 404 for a robot the gateway does not know, and one not granted to this client', async () => {
    api = await robotApi({
      simulator: { clients: [{ id: 'fleetwatch-demo', secret: 'demo-secret', robots: ['rb-0001'] }] },
    });
    const unknown = await api.request('GET', '/api/robots/rb-9999/health');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('not_found');
    expect(unknown.json().error.message).toMatch(/robot "rb-9999" not found/);
    const hidden = await api.request('GET', '/api/robots/rb-0002/health');
    expect(hidden.statusCode).toBe(404);
  });

  it('answers 403 upstream_forbidden when the gateway refuses this client', async () => {
    api = await robotApi({
      simulator: { clients: [{ id: 'fleetwatch-demo', secret: 'demo-secret', forbidden: true }] },
    });
    const response = await api.request('GET', `/api/robots/${api.robot}/health`);
    expect(response.statusCode).toBe(403);
    expect(response.json().error).toMatchObject({
      code: 'upstream_forbidden',
      details: { upstreamStatus: 403 },
    });
    expect(response.json().error.message).toMatch(/forbidden/);
  });

  it('answers 502 when the robot behind the gateway fails', async () => {
    api = await robotApi();
    api.a.h.sim.control.updateRobot(api.robot, { healthy: false });
    const response = await api.request('GET', `/api/robots/${api.robot}/health`);
    expect(response.statusCode).toBe(502);
    expect(response.json().error.code).toBe('upstream_service_unavailable');
  });

  it('refuses a query parameter the operation does not take, before asking the robot', async () => {
    api = await robotApi();
    const response = await api.request('GET', `/api/robots/${api.robot}/health`, { query: { verbose: '1' } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.message).toMatch(/takes no query parameters/);
    expect(api.sent()).toBe(0);
  });
});
