import type { OpenAPIBackend } from 'openapi-backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { type ApiBases, requestFor } from '../../src/upstream/operation-request.js';
import type { RobotOperation } from '../../src/upstream/operations/robot.js';
import { loadRobotContract, ROBOT_OPERATIONS } from '../contract/robots-contract.js';
import { call, type Res, type RobotTestTokens, startRobotSimulator } from './helpers.js';

type Name = RobotOperation['name'];
const DEVICE = 'rb-0001';

describe('simulator robot API against openapi/robots-v2.yaml', () => {
  let sim: Simulator;
  let api: OpenAPIBackend;
  let token: string;
  let other: string;
  let forbidden: string;
  const seen: Array<{ operation: RobotOperation; res: Res }> = [];

  /** Every answer recorded so far is one the document describes (status and body). */
  function expectDocumented(): void {
    for (const { operation: row, res } of seen) {
      const result = api.validateResponse(res.body, row.id, res.status);
      expect(result.errors, `${row.name} ${res.status} ${res.text}`).toBeNull();
    }
  }

  const operation = (name: Name) => ROBOT_OPERATIONS.find((row) => row.name === name)!;

  /**
   * Sends the request the client method `name` would send with `args` (built by the client's own
   * request builder), after checking it against the document unless it is `invalid` on purpose,
   * and records the answer.
   */
  async function send(name: Name, args: unknown[], as = token, invalid = false): Promise<Res> {
    const row = operation(name);
    const bases: ApiBases = { auth: sim.url, fleet: sim.url, robots: sim.url };
    const { url, json } = requestFor(row, bases, args);
    const target = new URL(url);
    const request = {
      method: row.method,
      path: target.pathname,
      query: Object.fromEntries(target.searchParams),
      headers: { authorization: `Bearer ${as}`, 'content-type': 'application/json' },
      body: json,
    };
    const check = api.validateRequest(request, row.id);
    if (invalid) expect(check.valid, `${name} request`).toBe(false);
    else expect(check.errors, `${name} request`).toBeNull();
    const res = await call(url, { method: row.method, token: as, json });
    seen.push({ operation: row, res });
    return res;
  }

  beforeAll(async () => {
    api = await loadRobotContract();
    let tokens: RobotTestTokens;
    ({ sim, tokens } = await startRobotSimulator(11, 3, ['rb-0002']));
    ({ token, other, forbidden } = tokens);
    sim.control.updateRobot(DEVICE, {
      lease: null,
      activeSite: 'depot',
      loadedRoute: null,
      loadedZoneSet: null,
    });
  });
  afterAll(() => sim.close());

  it('validates with a response check that catches violations', () => {
    expect(api.validateResponse({ status: 'ok', uptime: 3 }, 'robot.health', 200).valid).toBe(true);
    for (const [body, id] of [
      [{ status: 5 }, 'robot.health'],
      [{ status: 'success' }, 'robot.teleop_status'],
      [{ data: { holder_id: 7 } }, 'robot.teleop_status'],
      [{ data: {} }, 'robot.platform_feedback'],
      [[{ name: 'no id' }], 'robot.list_robots'],
      [{ status: 'error', error: 'not an object' }, 'robot.get_site'],
    ] as const) {
      const status = id === 'robot.get_site' ? 404 : 200;
      expect(api.validateResponse(body, id, status).valid, JSON.stringify(body)).toBe(false);
    }
  });

  it('answers every operation with a success the document describes', async () => {
    const steps: Array<[Name, ...unknown[]]> = [
      ['listRobots'],
      ['health', DEVICE],
      ['uuid', DEVICE],
      ['platformFeedback', DEVICE],
      ['costmapBoundary', DEVICE],
      ['navigationPathOptions', DEVICE],
      ['motionCommands', DEVICE],
      ['createReferenceTarget', DEVICE, { name: 'dock', latitude: 1, longitude: 2 }],
      ['createReferenceTargetAtCurrentLocation', DEVICE, { name: 'here' }],
      ['referenceTargets', DEVICE],
      ['sendGpsWaypoints', DEVICE, { waypoints: [{ latitude: 52.5, longitude: 13.4 }] }],
      ['sendRelativeWaypoints', DEVICE, { waypoints: [{ x: 1, y: 2 }] }],
      ['commandQueue', DEVICE],
      ['sendMotionCommand', DEVICE, { motion_command: 0, mode: 1 }],
      ['commandHistory', DEVICE],
      ['teleopStatus', DEVICE],
      ['teleopAcquire', DEVICE, undefined],
      ['teleopRenew', DEVICE, {}],
      ['teleopTransfer', DEVICE, 'operator-b'],
      ['teleopRelease', DEVICE, true],
      ['realtimeConfig', DEVICE],
      ['createRealtimeToken', DEVICE, { identity: 'viewer' }],
      ['createRealtimeRoom', DEVICE, { name: 'ops' }],
      ['realtimeRoom', DEVICE],
      ['createRealtimeTrack', DEVICE, { name: 'cam', kind: 'video' }],
      ['deleteRealtimeTrack', DEVICE, { name: 'cam' }],
      ['deleteRealtimeRoom', DEVICE],
      ['createSite', DEVICE, 'lab', { description: 'test lab' }],
      ['getSite', DEVICE, 'lab'],
      ['updateSite', DEVICE, 'lab', { description: 'moved' }],
      ['listSites', DEVICE],
      ['activateSite', DEVICE, 'lab', undefined],
      ['activeSite', DEVICE],
      ['activateSite', DEVICE, 'depot', {}],
      ['deleteSite', DEVICE, 'lab'],
      ['createRoute', DEVICE, 'loop', { waypoints: [] }],
      ['getRoute', DEVICE, 'loop'],
      ['updateRoute', DEVICE, 'loop', { waypoints: [{ x: 0, y: 0 }] }],
      ['listRoutes', DEVICE],
      ['loadRoute', DEVICE, 'loop', undefined],
      ['loadedRoute', DEVICE],
      ['createRoute', DEVICE, 'spare', {}],
      ['deleteRoute', DEVICE, 'spare'],
      ['createZoneSet', DEVICE, 'yard', { zones: [{ name: 'a' }, { name: 'b', enabled: false }] }],
      ['getZoneSet', DEVICE, 'yard'],
      ['updateZoneSet', DEVICE, 'yard', { zones: { a: true, b: false } }],
      ['listZoneSets', DEVICE],
      ['loadZoneSet', DEVICE, 'yard', undefined],
      ['loadedZoneSet', DEVICE],
      ['setLoadedZoneSetEnabled', DEVICE, { zones: { a: false } }],
      ['clearLoadedZoneSet', DEVICE],
      ['deleteZoneSet', DEVICE, 'yard'],
    ];
    for (const [name, ...args] of steps) {
      const res = await send(name, args);
      expect(res.status, `${name}: ${res.text}`).toBeGreaterThanOrEqual(200);
      expect(res.status, `${name}: ${res.text}`).toBeLessThan(300);
    }
    const succeeded = new Set(
      seen.filter(({ res }) => res.status < 300).map(({ operation }) => operation.name),
    );
    expect(ROBOT_OPERATIONS.map((row) => row.name).filter((name) => !succeeded.has(name))).toEqual([]);
    expectDocumented();
  });

  it('answers errors in the shape the document describes', async () => {
    seen.length = 0;
    await send('health', ['rb-9999']);
    await send('health', ['rb-0003'], other);
    await send('health', [DEVICE], 'not-a-token');
    await send('listRobots', [], forbidden);
    await send('getSite', [DEVICE, 'nowhere']);
    await send('sendMotionCommand', [DEVICE, { motion_command: 7 }], token, true);
    await send('teleopAcquire', [DEVICE, undefined]);
    await send('teleopAcquire', [DEVICE, undefined], other);
    await send('createRealtimeTrack', [DEVICE, { name: 'cam' }]);
    await send('setLoadedZoneSetEnabled', [DEVICE, { zones: { a: 'yes' } }]);
    sim.control.updateRobot('rb-0002', { healthy: false, unhealthyMode: 'error' });
    await send('health', ['rb-0002']);
    sim.control.updateRobot('rb-0002', { healthy: true });
    for (const status of [500, 502, 503, 504]) {
      sim.control.setFaults({ errorRates: { [status]: 1 }, scope: 'robots' });
      await send('platformFeedback', [DEVICE]);
      await send('listRobots', []);
    }
    sim.control.clearFaults();
    const failures = seen.filter(({ res }) => res.status >= 400);
    expect(new Set(failures.map(({ res }) => res.status))).toEqual(
      new Set([401, 403, 404, 409, 422, 500, 502, 503, 504]),
    );
    expectDocumented();
  });
});
