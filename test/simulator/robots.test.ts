import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { call, data, type Res, type RobotTestTokens, startRobotSimulator } from './helpers.js';

type Json = Record<string, unknown>;

describe('simulator robot API', () => {
  let sim: Simulator;
  let token: string;
  let other: string;
  let forbidden: string;
  const robot = (path: string, init: Parameters<typeof call>[1] = {}, device = 'rb-0001') =>
    call(`${sim.url}/api/platform/${device}/v2${path}`, { token, ...init });
  const post = (path: string, json?: unknown, t = token) => robot(path, { method: 'POST', json, token: t });
  const expectError = (res: Res, status: number) => {
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({
      status: 'error',
      message: expect.any(String),
      error: { details: expect.any(String) },
    });
  };
  const expect422 = (res: Res) => {
    expect(res.status).toBe(422);
    const detail = (res.body as { detail: Json[] }).detail;
    expect(detail.length).toBeGreaterThan(0);
    for (const d of detail)
      expect(d).toEqual({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) });
  };

  beforeAll(async () => {
    let tokens: RobotTestTokens;
    ({ sim, tokens } = await startRobotSimulator(3, 4, ['rb-0001', 'rb-0002']));
    ({ token, other, forbidden } = tokens);
    sim.control.updateRobot('rb-0001', { lease: null, activeSite: 'depot', loadedRoute: null });
  });
  afterAll(() => sim.close());
  afterEach(() => sim.control.clearFaults());

  describe('listing and gateway access', () => {
    it('lists the caller’s robots', async () => {
      const all = await call(`${sim.url}/api/robots`, { token });
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ status: 'success', message: expect.any(String) });
      expect(data<Json[]>(all).map((r) => r['device_id'])).toEqual([
        'rb-0001',
        'rb-0002',
        'rb-0003',
        'rb-0004',
      ]);
      expect(data<Json[]>(all)[0]).toEqual({ device_id: 'rb-0001', name: expect.any(String) });
      const mine = await call(`${sim.url}/api/robots`, { token: other });
      expect(data<Json[]>(mine).map((r) => r['device_id'])).toEqual(['rb-0001', 'rb-0002']);
    });

    it('answers 401, 403, and 404 for unknown or not granted devices and paths', async () => {
      expectError(await call(`${sim.url}/api/robots`), 401);
      expectError(await call(`${sim.url}/api/robots`, { token: forbidden }), 403);
      expectError(await robot('/health', { token: '' }), 401);
      expectError(await robot('/health', { token: forbidden }), 403);
      expectError(await robot('/health', {}, 'rb-9999'), 404);
      expectError(await robot('/health', { token: other }, 'rb-0003'), 404);
      expectError(await robot('/nothing'), 404);
      expectError(await robot('/sites', { method: 'PATCH' }), 405);
    });
  });

  describe('health', () => {
    it('answers 200 {status:"ok"} and the uuid', async () => {
      const res = await robot('/health');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
      const uuid = data<{ uuid: string }>(await robot('/uuid')).uuid;
      expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    });

    it('answers 503 for an unhealthy robot, or never in timeout mode', async () => {
      sim.control.updateRobot('rb-0004', { healthy: false, unhealthyMode: 'error' });
      expectError(await robot('/health', {}, 'rb-0004'), 503);
      sim.control.updateRobot('rb-0004', { unhealthyMode: 'timeout' });
      await expect(robot('/health', { signal: AbortSignal.timeout(200) }, 'rb-0004')).rejects.toThrow();
      sim.control.updateRobot('rb-0004', { healthy: true });
      expect((await robot('/health', {}, 'rb-0004')).status).toBe(200);
    });

    it('injects gateway faults with scope robots only', async () => {
      sim.control.setFaults({ errorRates: { 502: 1 }, scope: 'robots' });
      expectError(await robot('/health'), 502);
      expect((await call(`${sim.url}/api/robots`, { token })).status).toBe(502);
      sim.control.setFaults({ errorRates: { 502: 1 }, scope: ['robots'], targets: ['rb-0002'] });
      expect((await robot('/health')).status).toBe(200);
      expectError(await robot('/health', {}, 'rb-0002'), 502);
    });
  });

  describe('vehicle autonomy', () => {
    it('serves platform feedback in the documented shape', async () => {
      sim.control.updateRobot('rb-0001', {
        feedback: { cortexStatus: 2, navStatus: 6, vehicleState: 'AUTONOMOUS' },
      });
      const fb = data<{ platform_feedback: Json }>(await robot('/platform-feedback')).platform_feedback;
      expect(fb).toMatchObject({
        timestamp_utc: { sec: expect.any(Number), nanosec: expect.any(Number) },
        cortex_status: { status: 2, status_text: 'NAVIGATING', description: expect.any(String) },
        navigation_feedback: {
          nav2_goal_status: { status: 6, status_text: 'ABORTED' },
          total_distance_remaining: expect.any(Number),
          navigation_time: { sec: expect.any(Number), nanosec: expect.any(Number) },
          estimated_time_remaining: { sec: expect.any(Number), nanosec: expect.any(Number) },
        },
        vehicle_feedback: { state: 'AUTONOMOUS', description: expect.any(String), data: [] },
        current_pose: {
          header: { frame_id: 'map' },
          pose: {
            position: { latitude: expect.any(Number), longitude: expect.any(Number) },
            orientation: { w: 1 },
          },
        },
        current_command_index: expect.any(Number),
        number_commands_remaining: expect.any(Number),
      });
    });

    it('serves the read-only lists', async () => {
      expect(data<Json>(await robot('/costmap/boundary'))['coordinates']).toHaveLength(4);
      expect(data<Json[]>(await robot('/navigation-path-options')).length).toBeGreaterThan(0);
      expect(data<Json[]>(await robot('/motion-commands'))).toContainEqual({
        motion_command: 'STOP',
        alternative: 0,
      });
    });

    it('queues waypoints and cancels the queue on STOP', async () => {
      const gps = await post('/gps-waypoints', { waypoints: [{ latitude: 52.5, longitude: 13.4 }] });
      expect(gps.status).toBe(201);
      expect(data<Json>(gps)).toMatchObject({ received: true });
      expect((await post('/relative-waypoints', { waypoints: [{ x: 1, y: 2 }] })).status).toBe(201);
      expect(data<Json[]>(await robot('/command-queue'))).toHaveLength(2);
      expect422(await post('/gps-waypoints', { waypoints: [{ latitude: 'north' }] }));
      expect422(await post('/relative-waypoints', { waypoints: [] }));
      const stop = await post('/motion-command', { motion_command: 0, mode: 1 });
      expect(stop.status).toBe(201);
      expect(stop.body).toEqual({ status: 'success', message: expect.any(String), data: { received: true } });
      expect(data<Json[]>(await robot('/command-queue'))).toEqual([]);
      const history = data<Json[]>(await robot('/command-history'));
      expect(history.filter((c) => c['status'] === 'canceled')).toHaveLength(2);
    });

    it('validates motion commands with 422', async () => {
      expect422(await post('/motion-command', { motion_command: 7 }));
      expect422(await post('/motion-command', { mode: 0 }));
      expect422(
        await robot('/motion-command', {
          method: 'POST',
          body: '{not json',
          headers: { 'content-type': 'application/json' },
        }),
      );
      expect((await post('/motion-command', { motion_command: 1, mode: 0 })).status).toBe(201);
      expect(sim.control.getRobot('rb-0001')?.paused).toBe(true);
      await post('/motion-command', { motion_command: 2, mode: 0 });
      expect(sim.control.getRobot('rb-0001')?.paused).toBe(false);
    });

    it('sets reference targets', async () => {
      expect((await post('/reference-targets', { name: 'dock', latitude: 1, longitude: 2 })).status).toBe(
        201,
      );
      const here = await post('/reference-targets/current-location', { name: 'here' });
      expect(here.status).toBe(201);
      expect(data<Json>(here)).toMatchObject({ name: 'here', latitude: expect.any(Number) });
      expect(data<Json[]>(await robot('/reference-targets')).map((t) => t['name'])).toEqual(['dock', 'here']);
      expect422(await post('/reference-targets', [1, 2]));
    });
  });

  describe('teleop control', () => {
    it('acquires, conflicts with 403, renews, transfers and releases', async () => {
      expect(data(await robot('/teleop-control/status'))).toEqual({});
      const acquired = await post('/teleop-control/acquire');
      expect(acquired.status).toBe(200);
      expect(data(acquired)).toEqual({ holder_id: 'fleetwatch-demo', expires_at: expect.any(String) });
      expectError(await post('/teleop-control/acquire', undefined, other), 403);
      expectError(await post('/teleop-control/renew', undefined, other), 403);
      expectError(await post('/teleop-control/transfer', { to: 'operator-b' }, other), 403);
      expectError(await post('/teleop-control/release', undefined, other), 403);
      expect((await post('/teleop-control/renew')).status).toBe(200);
      expect422(await post('/teleop-control/transfer', {}));
      expect((await post('/teleop-control/transfer', { to: 'operator-b' })).status).toBe(200);
      expect(data(await robot('/teleop-control/status'))).toMatchObject({ holder_id: 'operator-b' });
      expectError(await post('/teleop-control/release'), 403);
      expect((await robot('/teleop-control/release?force=true', { method: 'POST' })).status).toBe(200);
      expect(data(await robot('/teleop-control/status'))).toEqual({});
      expectError(await post('/teleop-control/renew'), 409);
    });
  });

  describe('realtime', () => {
    it('manages the room and its tracks', async () => {
      expect(data<Json>(await robot('/realtime/config'))).toMatchObject({ url: expect.any(String) });
      expect(data<Json>(await post('/realtime/token'))).toMatchObject({ token: expect.any(String) });
      expect(data(await robot('/realtime/room'))).toBeNull();
      expectError(await post('/realtime/room/track', { name: 'cam' }), 409);
      expect((await post('/realtime/room', { name: 'ops' })).status).toBe(201);
      expectError(await post('/realtime/room'), 409);
      const track = await post('/realtime/room/track', { name: 'cam', kind: 'video' });
      expect(track.status).toBe(201);
      expect(data<Json>(await robot('/realtime/room'))).toMatchObject({
        name: 'ops',
        tracks: [{ name: 'cam' }],
      });
      // The track is named in the body; without one the 422 names the body's field.
      const unnamed = await robot('/realtime/room/track', { method: 'DELETE' });
      expect(unnamed.status).toBe(422);
      expect(unnamed.body).toEqual({
        detail: [
          {
            loc: ['body', 'track_id'],
            msg: 'Field required (the track_id, or the name, of the track)',
            type: 'missing',
          },
        ],
      });
      expectError(await robot('/realtime/room/track', { method: 'DELETE', json: { name: 'nope' } }), 404);
      expect((await robot('/realtime/room/track', { method: 'DELETE', json: { name: 'cam' } })).status).toBe(
        200,
      );
      expect((await robot('/realtime/room', { method: 'DELETE' })).status).toBe(200);
      expectError(await robot('/realtime/room', { method: 'DELETE' }), 404);
    });
  });

  describe('sites, routes and zone sets', () => {
    it('creates, reads, updates, activates and deletes sites', async () => {
      expectError(await robot('/sites/nowhere'), 404);
      expect((await post('/sites/lab', { description: 'test lab' })).status).toBe(201);
      expectError(await post('/sites/lab', {}), 409);
      expect(data<Json>(await robot('/sites/lab'))).toMatchObject({ name: 'lab', description: 'test lab' });
      const put = await robot('/sites/lab', { method: 'PUT', json: { description: 'moved' } });
      expect(data<Json>(put)).toMatchObject({ description: 'moved' });
      expectError(await robot('/sites/ghost', { method: 'PUT', json: {} }), 404);
      expect(data<Json[]>(await robot('/sites')).map((s) => s['name'])).toContain('lab');
      expect((await post('/sites/lab/activate')).status).toBe(200);
      expect(data<Json>(await robot('/active_site'))).toMatchObject({ name: 'lab' });
      expectError(await robot('/sites/lab', { method: 'DELETE' }), 409);
      expectError(await post('/sites/ghost/activate'), 404);
      await post('/sites/depot/activate');
      expect((await robot('/sites/lab', { method: 'DELETE' })).status).toBe(200);
      expectError(await robot('/sites/lab', { method: 'DELETE' }), 404);
    });

    it('loads routes', async () => {
      expect(data(await robot('/loaded_route'))).toBeNull();
      expect((await post('/routes/loop', { waypoints: [] })).status).toBe(201);
      expect((await post('/routes/loop/load')).status).toBe(200);
      expect(data<Json>(await robot('/loaded_route'))).toMatchObject({ name: 'loop' });
      expectError(await post('/routes/ghost/load'), 404);
      expectError(await robot('/routes/ghost'), 404);
    });

    it('loads zone sets and toggles zones', async () => {
      expect(
        (await post('/zone_sets/test', { zones: [{ name: 'a' }, { name: 'b', enabled: false }] })).status,
      ).toBe(201);
      expect((await post('/zone_sets/test/load')).status).toBe(200);
      const patched = await robot('/loaded_zone_set/enabled', {
        method: 'PATCH',
        json: { zones: { a: false, b: true } },
      });
      expect(patched.status).toBe(200);
      expect(data<Json>(await robot('/loaded_zone_set'))['zones']).toEqual([
        { name: 'a', enabled: false },
        { name: 'b', enabled: true },
      ]);
      expect422(await robot('/loaded_zone_set/enabled', { method: 'PATCH', json: { zones: { a: 'yes' } } }));
      expect422(await robot('/loaded_zone_set/enabled', { method: 'PATCH', json: { zones: { zz: true } } }));
      expect((await post('/loaded_zone_set/clear')).status).toBe(200);
      expect(data(await robot('/loaded_zone_set'))).toBeNull();
      expectError(
        await robot('/loaded_zone_set/enabled', { method: 'PATCH', json: { zones: { a: true } } }),
        409,
      );
      expect((await robot('/zone_sets/test', { method: 'DELETE' })).status).toBe(200);
    });
  });
});
