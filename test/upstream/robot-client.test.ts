import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createUpstream,
  ForbiddenError,
  GatewayTimeoutError,
  InvalidPayloadError,
  NotFoundError,
  type RobotClient,
  ServiceUnavailableError,
  UnauthorizedError,
  UnprocessableError,
  type Upstream,
  type UpstreamError,
} from '../../src/upstream/index.js';
import { FakeUpstream, send, testConfig } from './fake-upstream.js';

let fake: FakeUpstream;
let upstream: Upstream;
let robots: RobotClient;

const RETRIES = 2;
const DEV = '/api/platform/dev-1/v2';

beforeEach(async () => {
  fake = await FakeUpstream.start();
  upstream = createUpstream({ config: testConfig(fake.url, { http: { retries: RETRIES } }) });
  robots = upstream.robots;
});

afterEach(async () => {
  await upstream.close();
  await fake.close();
});

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    return error as UpstreamError;
  }
  throw new Error('expected the call to fail');
}

describe('gateway addressing', () => {
  it('encodes the device id in the gateway path and sends the bearer token', async () => {
    fake.sequence('GET', '/api/platform/dev%2F1/v2/health', [[200, { status: 'ok' }]]);
    await expect(robots.health('dev/1')).resolves.toEqual({ status: 'ok' });
    const [request] = fake.apiRequests();
    expect(request?.url).toBe('/api/platform/dev%2F1/v2/health');
    expect(request?.headers.authorization).toBe(`Bearer ${fake.issued[0]}`);
  });

  it('encodes {name} path parameters', async () => {
    fake.sequence('GET', '/api/platform/dev%2F1/v2/sites/north%20yard%2F2', [
      [200, { status: 'success', data: {} }],
    ]);
    await robots.getSite('dev/1', 'north yard/2');
    expect(fake.apiRequests()[0]?.url).toBe('/api/platform/dev%2F1/v2/sites/north%20yard%2F2');
  });
});

describe('listRobots', () => {
  it.each([
    [
      'an array of strings',
      ['r1', 'r2'],
      [
        { deviceId: 'r1', raw: 'r1' },
        { deviceId: 'r2', raw: 'r2' },
      ],
    ],
    [
      'objects with device_id / deviceId / id',
      [{ device_id: 'r1', name: 'Rover' }, { deviceId: 'r2' }, { id: 7 }],
      [
        { deviceId: 'r1', name: 'Rover', raw: { device_id: 'r1', name: 'Rover' } },
        { deviceId: 'r2', raw: { deviceId: 'r2' } },
        { deviceId: '7', raw: { id: 7 } },
      ],
    ],
    ['{data: [...]}', { status: 'success', data: ['r1'] }, [{ deviceId: 'r1', raw: 'r1' }]],
    [
      '{data: {robots: [...]}}',
      { data: { robots: [{ device_id: 'r1' }] } },
      [{ deviceId: 'r1', raw: { device_id: 'r1' } }],
    ],
    ['an empty list', [], []],
  ])('accepts %s', async (_name, body, expected) => {
    fake.sequence('GET', '/api/robots', [[200, body]]);
    await expect(robots.listRobots()).resolves.toEqual({ items: expected, rejected: [] });
  });

  it('rejects an entry that names no device by itself, and keeps the others', async () => {
    fake.sequence('GET', '/api/robots', [
      [200, { data: ['r1', { name: 'anonymous' }, { device_id: null, id: 'r3' }, 7.5, ''] }],
    ]);
    const { items, rejected } = await robots.listRobots();
    expect(items.map((robot) => robot.deviceId)).toEqual(['r1', 'r3']);
    expect(rejected.map(({ index, id }) => ({ index, id }))).toEqual([
      { index: 1, id: undefined },
      { index: 3, id: undefined },
      { index: 4, id: undefined },
    ]);
    expect(rejected[0]?.error).toBeInstanceOf(InvalidPayloadError);
    expect(rejected[0]?.error.message).toContain('robot list element 1');
    expect(rejected[0]?.error.message).toContain('no device_id, deviceId or id');
  });

  it.each([
    ['an object without a list', { data: { count: 2 } }],
    ['a number', 42],
  ])('rejects %s → InvalidPayloadError', async (_name, body) => {
    fake.sequence('GET', '/api/robots', [[200, body]]);
    const error = await failure(robots.listRobots());
    expect(error).toBeInstanceOf(InvalidPayloadError);
    expect(error.operation).toBe('robot.list_robots');
  });

  it('is retried on 503', async () => {
    fake.sequence('GET', '/api/robots', [[503], [200, ['r1']]]);
    expect((await robots.listRobots()).items).toHaveLength(1);
    expect(fake.count('GET', '/api/robots')).toBe(2);
  });
});

describe('lenient /v2 parsing', () => {
  it('health keeps unknown fields and tolerates missing ones', async () => {
    fake.sequence('GET', `${DEV}/health`, [
      [200, { status: 'ok', uptime: 12, data: { uuid: 'u-1' } }],
      [200, {}],
    ]);
    await expect(robots.health('dev-1')).resolves.toEqual({
      status: 'ok',
      uptime: 12,
      data: { uuid: 'u-1' },
    });
    const empty = await robots.health('dev-1');
    expect(empty).toEqual({});
    expect(empty.status).toBeUndefined();
  });

  it.each([
    ['not JSON', 'OK'],
    ['an empty body', undefined],
    ['a JSON string', '"healthy"'],
    ['status of the wrong type', { status: 1 }],
  ])('health with %s → InvalidPayloadError (a failed check)', async (_name, body) => {
    fake.sequence('GET', `${DEV}/health`, [[200, body]]);
    const error = await failure(robots.health('dev-1'));
    expect(error).toBeInstanceOf(InvalidPayloadError);
    expect(error.operation).toBe('robot.health');
    expect(error.target).toBe('dev-1');
    expect(fake.count('GET', `${DEV}/health`)).toBe(1);
  });

  it('platformFeedback returns data.platform_feedback, unknown fields kept, nulls read as missing', async () => {
    const feedback = {
      timestamp_utc: { sec: 1_700_000_000, nanosec: 5 },
      cortex_status: { status: 2, status_text: 'AUTONOMOUS', description: 'driving', vendor: 'x' },
      navigation_feedback: {
        nav2_goal_status: { status: 6, status_text: 'ABORTED', text: 'blocked' },
        total_distance_remaining: 12.5,
      },
      vehicle_feedback: { state: 'READY', description: 'ok', data: [] },
      current_pose: { pose: { position: { latitude: 52.1, longitude: 4.3 } } },
      current_command_index: 3,
      number_commands_remaining: null,
      battery: { percent: 80 },
    };
    fake.sequence('GET', `${DEV}/platform-feedback`, [
      [200, { status: 'success', message: 'ok', data: { platform_feedback: feedback } }],
    ]);
    const result = await robots.platformFeedback('dev-1');
    expect(result.cortex_status?.status_text).toBe('AUTONOMOUS');
    expect(result.cortex_status).toMatchObject({ vendor: 'x' });
    expect(result.navigation_feedback?.nav2_goal_status?.status).toBe(6);
    expect(result.vehicle_feedback?.state).toBe('READY');
    expect(result.current_pose?.pose?.position?.altitude).toBeUndefined();
    expect(result.number_commands_remaining).toBeUndefined();
    expect(result).toMatchObject({ battery: { percent: 80 } });
  });

  it('answer(name, ...) calls a row like its method and resolves with the whole body', async () => {
    const body = {
      status: 'success',
      message: 'ok',
      data: { platform_feedback: { current_command_index: 2 } },
    };
    fake.sequence('GET', `${DEV}/platform-feedback`, [[200, body]]);
    expect(await robots.answer('platformFeedback', 'dev-1')).toEqual(body);
    fake.sequence('GET', `${DEV}/teleop-control/status`, [
      [200, { status: 'success', data: { holder_id: 'u' } }],
    ]);
    expect(await robots.answer('teleopStatus', 'dev-1')).toEqual({
      status: 'success',
      data: { holder_id: 'u' },
    });
  });

  it('platformFeedback with a partial payload is fine', async () => {
    fake.sequence('GET', `${DEV}/platform-feedback`, [
      [200, { data: { platform_feedback: { cortex_status: {} } } }],
    ]);
    await expect(robots.platformFeedback('dev-1')).resolves.toEqual({ cortex_status: {} });
  });

  it.each([
    ['no platform_feedback', { status: 'success', data: {} }],
    ['no data', { status: 'success' }],
    ['cortex_status.status as text', { data: { platform_feedback: { cortex_status: { status: 'two' } } } }],
    ['an array', [1, 2]],
  ])('platformFeedback with %s → InvalidPayloadError', async (_name, body) => {
    fake.sequence('GET', `${DEV}/platform-feedback`, [[200, body]]);
    expect(await failure(robots.platformFeedback('dev-1'))).toBeInstanceOf(InvalidPayloadError);
  });

  it('teleopStatus maps holder_id / expires_at and keeps the raw body', async () => {
    const body = {
      status: 'success',
      message: 'lease',
      data: { holder_id: 'op-7', expires_at: '2026-01-01T10:00:00Z', scope: 'drive' },
    };
    fake.sequence('GET', `${DEV}/teleop-control/status`, [
      [200, body],
      [200, { status: 'success', data: {} }],
    ]);
    await expect(robots.teleopStatus('dev-1')).resolves.toEqual({
      holderId: 'op-7',
      expiresAt: '2026-01-01T10:00:00Z',
      raw: body,
    });
    const free = await robots.teleopStatus('dev-1');
    expect(free.holderId).toBeUndefined();
    expect(free).not.toHaveProperty('holderId');
  });

  it('teleopStatus without data → InvalidPayloadError', async () => {
    fake.sequence('GET', `${DEV}/teleop-control/status`, [[200, { status: 'success' }]]);
    expect(await failure(robots.teleopStatus('dev-1'))).toBeInstanceOf(InvalidPayloadError);
  });

  it('generic reads return the envelope with unknown fields; a bare list is kept as data', async () => {
    fake.sequence('GET', `${DEV}/sites`, [
      [200, { status: 'success', data: ['a'], total: 1 }],
      [200, ['a', 'b']],
    ]);
    await expect(robots.listSites('dev-1')).resolves.toEqual({ status: 'success', data: ['a'], total: 1 });
    await expect(robots.listSites('dev-1')).resolves.toEqual({ data: ['a', 'b'] });
  });
});

describe('robot errors', () => {
  it('puts the error envelope message into a NotFoundError', async () => {
    fake.sequence('GET', `${DEV}/sites/yard`, [
      [404, { status: 'error', message: 'site not found', error: { details: 'no site named yard' } }],
    ]);
    const error = await failure(robots.getSite('dev-1', 'yard'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.message).toBe(
      'site "yard" on robot "dev-1" not found (robot.get_site: 404): site not found: no site named yard',
    );
    expect(error.upstreamMessage).toBe('site not found: no site named yard');
  });

  it('says the envelope once when its details repeat its message', async () => {
    fake.sequence('POST', `${DEV}/teleop-control/transfer`, [
      [409, { status: 'error', message: 'no lease to transfer', error: { details: 'No lease to transfer' } }],
    ]);
    const error = await failure(robots.teleopTransfer('dev-1', 'alice'));
    expect(error.upstreamMessage).toBe('no lease to transfer');
  });

  it('422 validation details → UnprocessableError with the field messages', async () => {
    fake.sequence('POST', `${DEV}/sites/yard`, [
      [
        422,
        {
          detail: [
            { loc: ['body', 'name'], msg: 'field required', type: 'value_error.missing' },
            { loc: ['body', 'zones', 0], msg: 'not a polygon', type: 'value_error' },
          ],
        },
      ],
    ]);
    const error = await failure(robots.createSite('dev-1', 'yard', { zones: [1] }));
    expect(error).toBeInstanceOf(UnprocessableError);
    expect(error.code).toBe('unprocessable');
    expect(error.status).toBe(422);
    expect(error.message).toMatch(
      /^the request for site "yard" on robot "dev-1" was rejected as invalid \(robot\.create_site: 422\): /,
    );
    expect(error.message).toContain('body.name: field required; body.zones.0: not a polygon');
    expect(fake.count('POST', `${DEV}/sites/yard`)).toBe(1);
  });

  it('teleop acquire held by someone else → ForbiddenError with the message', async () => {
    fake.sequence('POST', `${DEV}/teleop-control/acquire`, [
      [403, { status: 'error', message: 'lease held by op-9', error: { details: 'expires in 30s' } }],
    ]);
    const error = await failure(robots.teleopAcquire('dev-1'));
    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error.message).toContain('lease held by op-9');
    expect(fake.count('POST', `${DEV}/teleop-control/acquire`)).toBe(1);
  });

  it('reads are retried on 503/504', async () => {
    fake.sequence('GET', `${DEV}/loaded_route`, [[504]]);
    expect(await failure(robots.loadedRoute('dev-1'))).toBeInstanceOf(GatewayTimeoutError);
    expect(fake.count('GET', `${DEV}/loaded_route`)).toBe(RETRIES + 1);
  });

  it.each([
    [503, ServiceUnavailableError],
    [504, GatewayTimeoutError],
  ])('writes are never retried (%i)', async (status, type) => {
    fake.sequence('POST', `${DEV}/motion-command`, [[status]]);
    expect(await failure(robots.sendMotionCommand('dev-1', { motion_command: 0, mode: 1 }))).toBeInstanceOf(
      type,
    );
    expect(fake.count('POST', `${DEV}/motion-command`)).toBe(1);
  });

  it('a write answered 401 is resent once with a fresh token, then UnauthorizedError', async () => {
    fake.sequence('DELETE', `${DEV}/realtime/room`, [[401]]);
    expect(await failure(robots.deleteRealtimeRoom('dev-1'))).toBeInstanceOf(UnauthorizedError);
    expect(fake.count('DELETE', `${DEV}/realtime/room`)).toBe(2);
    expect(fake.tokenRequests).toHaveLength(2);
  });
});

describe('writes', () => {
  it('201 with an envelope → the envelope', async () => {
    fake.sequence('POST', `${DEV}/motion-command`, [
      [201, { status: 'success', message: 'queued', data: { received: true } }],
    ]);
    await expect(robots.sendMotionCommand('dev-1', { motion_command: 0, mode: 1 })).resolves.toEqual({
      status: 'success',
      message: 'queued',
      data: { received: true },
    });
    const [request] = fake.apiRequests();
    expect(request?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request?.body ?? '')).toEqual({ motion_command: 0, mode: 1 });
  });

  it('204 → an empty envelope', async () => {
    fake.sequence('DELETE', `${DEV}/sites/yard`, [[204]]);
    await expect(robots.deleteSite('dev-1', 'yard')).resolves.toEqual({});
  });
});

type Call = (r: RobotClient) => Promise<unknown>;
const BODY = { some: 'body', n: 1 };

/** Every robot-level endpoint of the spec: method, path under /v2 (with query), body sent. */
const ENDPOINTS: Array<[string, Call, string, string, unknown]> = [
  ['health', (r) => r.health('d'), 'GET', '/health', undefined],
  ['uuid', (r) => r.uuid('d'), 'GET', '/uuid', undefined],
  ['platformFeedback', (r) => r.platformFeedback('d'), 'GET', '/platform-feedback', undefined],
  ['costmapBoundary', (r) => r.costmapBoundary('d'), 'GET', '/costmap/boundary', undefined],
  [
    'navigationPathOptions',
    (r) => r.navigationPathOptions('d'),
    'GET',
    '/navigation-path-options',
    undefined,
  ],
  ['motionCommands', (r) => r.motionCommands('d'), 'GET', '/motion-commands', undefined],
  ['referenceTargets', (r) => r.referenceTargets('d'), 'GET', '/reference-targets', undefined],
  ['createReferenceTarget', (r) => r.createReferenceTarget('d', BODY), 'POST', '/reference-targets', BODY],
  [
    'createReferenceTargetAtCurrentLocation',
    (r) => r.createReferenceTargetAtCurrentLocation('d', BODY),
    'POST',
    '/reference-targets/current-location',
    BODY,
  ],
  ['sendGpsWaypoints', (r) => r.sendGpsWaypoints('d', BODY), 'POST', '/gps-waypoints', BODY],
  ['sendRelativeWaypoints', (r) => r.sendRelativeWaypoints('d', BODY), 'POST', '/relative-waypoints', BODY],
  ['sendMotionCommand', (r) => r.sendMotionCommand('d', BODY), 'POST', '/motion-command', BODY],
  ['commandHistory', (r) => r.commandHistory('d'), 'GET', '/command-history', undefined],
  ['commandQueue', (r) => r.commandQueue('d'), 'GET', '/command-queue', undefined],
  ['teleopAcquire', (r) => r.teleopAcquire('d'), 'POST', '/teleop-control/acquire', undefined],
  ['teleopRenew', (r) => r.teleopRenew('d'), 'POST', '/teleop-control/renew', undefined],
  ['teleopRelease', (r) => r.teleopRelease('d'), 'POST', '/teleop-control/release', undefined],
  [
    'teleopRelease(force)',
    (r) => r.teleopRelease('d', true),
    'POST',
    '/teleop-control/release?force=true',
    undefined,
  ],
  [
    'teleopTransfer',
    (r) => r.teleopTransfer('d', 'op-2'),
    'POST',
    '/teleop-control/transfer',
    { to: 'op-2' },
  ],
  ['teleopStatus', (r) => r.teleopStatus('d'), 'GET', '/teleop-control/status', undefined],
  ['realtimeConfig', (r) => r.realtimeConfig('d'), 'GET', '/realtime/config', undefined],
  ['createRealtimeToken', (r) => r.createRealtimeToken('d', BODY), 'POST', '/realtime/token', BODY],
  ['realtimeRoom', (r) => r.realtimeRoom('d'), 'GET', '/realtime/room', undefined],
  ['createRealtimeRoom', (r) => r.createRealtimeRoom('d', BODY), 'POST', '/realtime/room', BODY],
  ['deleteRealtimeRoom', (r) => r.deleteRealtimeRoom('d'), 'DELETE', '/realtime/room', undefined],
  ['createRealtimeTrack', (r) => r.createRealtimeTrack('d', BODY), 'POST', '/realtime/room/track', BODY],
  ['deleteRealtimeTrack', (r) => r.deleteRealtimeTrack('d', BODY), 'DELETE', '/realtime/room/track', BODY],
  ['getSite', (r) => r.getSite('d', 's1'), 'GET', '/sites/s1', undefined],
  ['createSite', (r) => r.createSite('d', 's1', BODY), 'POST', '/sites/s1', BODY],
  ['updateSite', (r) => r.updateSite('d', 's1', BODY), 'PUT', '/sites/s1', BODY],
  ['deleteSite', (r) => r.deleteSite('d', 's1'), 'DELETE', '/sites/s1', undefined],
  ['listSites', (r) => r.listSites('d'), 'GET', '/sites', undefined],
  ['activeSite', (r) => r.activeSite('d'), 'GET', '/active_site', undefined],
  ['activateSite', (r) => r.activateSite('d', 's1'), 'POST', '/sites/s1/activate', undefined],
  ['getRoute', (r) => r.getRoute('d', 'r1'), 'GET', '/routes/r1', undefined],
  ['createRoute', (r) => r.createRoute('d', 'r1', BODY), 'POST', '/routes/r1', BODY],
  ['updateRoute', (r) => r.updateRoute('d', 'r1', BODY), 'PUT', '/routes/r1', BODY],
  ['deleteRoute', (r) => r.deleteRoute('d', 'r1'), 'DELETE', '/routes/r1', undefined],
  ['listRoutes', (r) => r.listRoutes('d'), 'GET', '/routes', undefined],
  ['loadedRoute', (r) => r.loadedRoute('d'), 'GET', '/loaded_route', undefined],
  ['loadRoute', (r) => r.loadRoute('d', 'r1'), 'POST', '/routes/r1/load', undefined],
  ['getZoneSet', (r) => r.getZoneSet('d', 'z1'), 'GET', '/zone_sets/z1', undefined],
  ['createZoneSet', (r) => r.createZoneSet('d', 'z1', BODY), 'POST', '/zone_sets/z1', BODY],
  ['updateZoneSet', (r) => r.updateZoneSet('d', 'z1', BODY), 'PUT', '/zone_sets/z1', BODY],
  ['deleteZoneSet', (r) => r.deleteZoneSet('d', 'z1'), 'DELETE', '/zone_sets/z1', undefined],
  ['listZoneSets', (r) => r.listZoneSets('d'), 'GET', '/zone_sets', undefined],
  ['loadedZoneSet', (r) => r.loadedZoneSet('d'), 'GET', '/loaded_zone_set', undefined],
  ['loadZoneSet', (r) => r.loadZoneSet('d', 'z1'), 'POST', '/zone_sets/z1/load', undefined],
  ['clearLoadedZoneSet', (r) => r.clearLoadedZoneSet('d'), 'POST', '/loaded_zone_set/clear', undefined],
  [
    'setLoadedZoneSetEnabled',
    (r) => r.setLoadedZoneSetEnabled('d', BODY),
    'PATCH',
    '/loaded_zone_set/enabled',
    BODY,
  ],
];

describe('every robot-level endpoint', () => {
  it.each(ENDPOINTS)('%s', async (_name, call, method, path, body) => {
    const pathOnly = path.split('?')[0]!;
    fake.on(method, `/api/platform/d/v2${pathOnly}`, (_request, response) =>
      send(response, 200, {
        status: 'success',
        message: 'ok',
        data: { platform_feedback: {}, holder_id: 'h-1' },
      }),
    );
    await call(robots);
    const requests = fake.apiRequests();
    expect(requests).toHaveLength(1);
    expect(requests[0]?.method).toBe(method);
    expect(requests[0]?.url).toBe(`/api/platform/d/v2${path}`);
    if (body === undefined) {
      expect(requests[0]?.body).toBe('');
      expect(requests[0]?.headers['content-type']).toBeUndefined();
    } else {
      expect(JSON.parse(requests[0]?.body ?? '')).toEqual(body);
    }
  });

  it('covers every RobotClient method', () => {
    const methods = Object.getOwnPropertyNames(Object.getPrototypeOf(robots)).filter(
      (name) => name !== 'constructor' && name !== 'listRobots' && name !== 'answer',
    );
    const tested = new Set(ENDPOINTS.map(([name]) => name.replace(/\(.*\)$/, '')));
    expect(methods.filter((name) => !tested.has(name))).toEqual([]);
  });
});

describe('the request observer', () => {
  it('is told which sendings of a call are retries', async () => {
    const seen: Array<{ operation: string; status: unknown; retry?: boolean }> = [];
    const observed = createUpstream({
      config: testConfig(fake.url, { http: { retries: RETRIES } }),
      observer: { request: ({ operation, status, retry }) => seen.push({ operation, status, retry }) },
    });
    try {
      fake.sequence('GET', `${DEV}/health`, [[503], [503], [200, { status: 'ok' }]]);
      await expect(observed.robots.health('dev-1')).resolves.toEqual({ status: 'ok' });
      expect(seen.filter((info) => info.operation === 'robot.health')).toEqual([
        { operation: 'robot.health', status: 503, retry: undefined },
        { operation: 'robot.health', status: 503, retry: true },
        { operation: 'robot.health', status: 200, retry: true },
      ]);
    } finally {
      await observed.close();
    }
  });
});
