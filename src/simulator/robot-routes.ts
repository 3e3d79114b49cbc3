import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { z } from 'zod';
import { type ClientGrant, canSeeRobot } from './auth.js';
import {
  authorise,
  type Ctx,
  decodeSegment,
  parseJson,
  preflight,
  readBody,
  type SimDeps,
  sendJson,
} from './http.js';
import {
  addReferenceTarget,
  applyMotionCommand,
  costmapBoundary,
  currentLease,
  type Doc,
  enqueue,
  LEASE_TTL_MS,
  leaseData,
  MOTION_COMMAND_LIST,
  NAVIGATION_PATH_OPTIONS,
  newDoc,
  normaliseZones,
  platformFeedback,
  type RobotRecord,
} from './robot-model.js';

interface Reply {
  status: number;
  body: unknown;
}

interface Call {
  ctx: Ctx;
  robot: RobotRecord;
  client: ClientGrant;
  params: Record<string, string>;
  /** Parsed JSON body; undefined when none was sent. */
  body: unknown;
  query: URLSearchParams;
  now: number;
}

interface Route {
  method: string;
  pattern: string;
  segments: string[];
  handler: (call: Call) => Reply;
}

const ok = (data: unknown, message = 'ok', status = 200): Reply => ({
  status,
  body: { status: 'success', message, data },
});
const fail = (status: number, message: string, details = message): Reply => ({
  status,
  body: { status: 'error', message, error: { details } },
});
const unprocessable = (loc: Array<string | number>, msg: string, type: string): Reply => ({
  status: 422,
  body: { detail: [{ loc, msg, type }] },
});

export const gatewayError = (status: number) => ({
  status: 'error',
  message: STATUS_CODES[status] ?? 'error',
  error: { details: `upstream answered ${status}` },
});

/** Validates a body with zod; a failure is the FastAPI-style 422. */
function validate<T>(schema: z.ZodType<T>, body: unknown): { value: T } | { reply: Reply } {
  const result = schema.safeParse(body);
  if (result.success) return { value: result.data };
  return {
    reply: {
      status: 422,
      body: {
        detail: result.error.issues.map((i) => ({
          loc: ['body', ...i.path.map((p) => (typeof p === 'number' ? p : String(p)))],
          msg: i.message,
          type: i.code,
        })),
      },
    },
  };
}

const objectBody = z.record(z.string(), z.unknown(), { error: 'body must be a JSON object' });
const optionalObject = z.union([z.undefined(), objectBody]);
const gpsWaypoints = z.looseObject({
  waypoints: z
    .array(z.looseObject({ latitude: z.number().min(-90).max(90), longitude: z.number().min(-180).max(180) }))
    .min(1),
});
const relativeWaypoints = z.looseObject({
  waypoints: z.array(z.looseObject({ x: z.number(), y: z.number() })).min(1),
});
const motionCommand = z.looseObject({
  motion_command: z.number().int().min(0).max(2),
  mode: z.number().int().min(0).max(1).default(0),
});
const transfer = z.looseObject({ to: z.string().min(1) });
const zonesEnabled = z.looseObject({
  zones: z.union([
    z.record(z.string(), z.boolean()),
    z.array(z.looseObject({ name: z.string().min(1), enabled: z.boolean() })),
  ]),
});
const roomBody = z.union([z.undefined(), z.looseObject({ name: z.string().min(1).optional() })]);
const trackBody = z.union([
  z.undefined(),
  z.looseObject({ name: z.string().min(1).optional(), kind: z.enum(['video', 'audio', 'data']).optional() }),
]);

const summary = (doc: Doc) => ({ name: doc.name, created_at: doc.created_at, updated_at: doc.updated_at });

function roomView(robot: RobotRecord) {
  const room = robot.room;
  return room
    ? { name: room.name, sid: room.sid, created_at: room.created_at, tracks: [...room.tracks.values()] }
    : null;
}

function buildRoutes(): Route[] {
  const routes: Route[] = [];
  const add = (method: string, pattern: string, handler: Route['handler']) =>
    routes.push({ method, pattern, segments: pattern.split('/').slice(1), handler });

  // Health
  add('GET', '/v2/health', () => ({ status: 200, body: { status: 'ok' } }));
  add('GET', '/v2/uuid', ({ robot }) => ok({ uuid: robot.uuid }));

  // Vehicle Autonomy
  add('GET', '/v2/platform-feedback', ({ robot, now }) =>
    ok({ platform_feedback: platformFeedback(robot, now) }),
  );
  add('GET', '/v2/costmap/boundary', ({ robot }) => ok(costmapBoundary(robot)));
  add('GET', '/v2/navigation-path-options', () => ok(NAVIGATION_PATH_OPTIONS));
  add('GET', '/v2/motion-commands', () => ok(MOTION_COMMAND_LIST));
  add('GET', '/v2/reference-targets', ({ robot }) => ok(robot.referenceTargets));
  add('POST', '/v2/reference-targets', ({ robot, body, now }) => {
    const v = validate(objectBody, body);
    if ('reply' in v) return v.reply;
    return ok(addReferenceTarget(robot, v.value, now), 'reference target set', 201);
  });
  add('POST', '/v2/reference-targets/current-location', ({ robot, body, now }) => {
    const v = validate(optionalObject, body);
    if ('reply' in v) return v.reply;
    const here = { latitude: robot.latitude, longitude: robot.longitude, altitude: robot.altitude };
    const doc = addReferenceTarget(robot, { ...v.value, ...here, source: 'current_location' }, now);
    return ok(doc, 'reference target set at current location', 201);
  });
  add('POST', '/v2/gps-waypoints', ({ robot, body, now }) => {
    const v = validate(gpsWaypoints, Array.isArray(body) ? { waypoints: body } : body);
    if ('reply' in v) return v.reply;
    const command = enqueue(robot, 'gps_waypoints', v.value, now);
    return ok({ received: true, command_id: command.id }, 'gps waypoints received', 201);
  });
  add('POST', '/v2/relative-waypoints', ({ robot, body, now }) => {
    const v = validate(relativeWaypoints, Array.isArray(body) ? { waypoints: body } : body);
    if ('reply' in v) return v.reply;
    const command = enqueue(robot, 'relative_waypoints', v.value, now);
    return ok({ received: true, command_id: command.id }, 'relative waypoints received', 201);
  });
  add('POST', '/v2/motion-command', ({ robot, body, now }) => {
    const v = validate(motionCommand, body);
    if ('reply' in v) return v.reply;
    applyMotionCommand(robot, v.value.motion_command, v.value.mode, now);
    return ok({ received: true }, 'motion command received', 201);
  });
  add('GET', '/v2/command-history', ({ robot }) => ok(robot.history));
  add('GET', '/v2/command-queue', ({ robot }) => ok(robot.queue));

  // Teleop Control: the caller's identity is its client id.
  add('GET', '/v2/teleop-control/status', ({ robot, now }) => ok(leaseData(robot, now)));
  add('POST', '/v2/teleop-control/acquire', ({ robot, client, now }) => {
    const lease = currentLease(robot, now);
    if (lease && lease.holderId !== client.id) return fail(403, 'lease held by another user', lease.holderId);
    robot.lease = { holderId: client.id, expiresAt: now + LEASE_TTL_MS };
    return ok(leaseData(robot, now), 'lease acquired');
  });
  add('POST', '/v2/teleop-control/renew', ({ robot, client, now }) => {
    const lease = currentLease(robot, now);
    if (!lease) return fail(409, 'no lease to renew');
    if (lease.holderId !== client.id) return fail(403, 'lease held by another user', lease.holderId);
    lease.expiresAt = now + LEASE_TTL_MS;
    return ok(leaseData(robot, now), 'lease renewed');
  });
  add('POST', '/v2/teleop-control/release', ({ robot, client, query, now }) => {
    const lease = currentLease(robot, now);
    if (!lease) return ok({}, 'no lease held');
    if (lease.holderId !== client.id && query.get('force') !== 'true') {
      return fail(403, 'lease held by another user', lease.holderId);
    }
    robot.lease = null;
    return ok({}, 'lease released');
  });
  add('POST', '/v2/teleop-control/transfer', ({ robot, client, body, now }) => {
    const v = validate(transfer, body);
    if ('reply' in v) return v.reply;
    const lease = currentLease(robot, now);
    if (!lease) return fail(409, 'no lease to transfer');
    if (lease.holderId !== client.id) return fail(403, 'lease held by another user', lease.holderId);
    robot.lease = { holderId: v.value.to, expiresAt: now + LEASE_TTL_MS };
    return ok(leaseData(robot, now), 'lease transferred');
  });

  // Realtime
  add('GET', '/v2/realtime/config', ({ robot }) =>
    ok({
      url: 'wss://realtime.invalid',
      room_prefix: robot.deviceId,
      ice_servers: [{ urls: ['stun:stun.invalid:3478'] }],
    }),
  );
  add('POST', '/v2/realtime/token', ({ robot, client, body, now }) => {
    const v = validate(optionalObject, body);
    if ('reply' in v) return v.reply;
    const identity = typeof v.value?.['identity'] === 'string' ? v.value['identity'] : client.id;
    return ok({
      token: randomBytes(18).toString('base64url'),
      url: 'wss://realtime.invalid',
      room: robot.room?.name ?? null,
      identity,
      expires_at: new Date(now + 3_600_000).toISOString(),
    });
  });
  add('GET', '/v2/realtime/room', ({ robot }) => ok(roomView(robot)));
  add('POST', '/v2/realtime/room', ({ robot, body, now }) => {
    const v = validate(roomBody, body);
    if ('reply' in v) return v.reply;
    if (robot.room) return fail(409, 'room already exists', robot.room.name);
    robot.room = {
      name: v.value?.name ?? `${robot.deviceId}-room`,
      sid: `RM_${randomBytes(6).toString('hex')}`,
      created_at: new Date(now).toISOString(),
      tracks: new Map(),
    };
    return ok(roomView(robot), 'room created', 201);
  });
  add('DELETE', '/v2/realtime/room', ({ robot }) => {
    if (!robot.room) return fail(404, 'no room');
    robot.room = null;
    return ok(null, 'disconnected from room');
  });
  add('POST', '/v2/realtime/room/track', ({ robot, body, now }) => {
    const v = validate(trackBody, body);
    if ('reply' in v) return v.reply;
    const room = robot.room;
    if (!room) return fail(409, 'no room');
    const name = v.value?.name ?? `track-${room.tracks.size + 1}`;
    if ([...room.tracks.values()].some((t) => t.name === name))
      return fail(409, 'track already exists', name);
    const track = {
      track_id: `TR_${randomBytes(6).toString('hex')}`,
      name,
      kind: v.value?.kind ?? 'video',
      created_at: new Date(now).toISOString(),
    };
    room.tracks.set(track.track_id, track);
    return ok(track, 'track created', 201);
  });
  add('DELETE', '/v2/realtime/room/track', ({ robot, body, query }) => {
    const room = robot.room;
    if (!room) return fail(409, 'no room');
    const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    const key = query.get('track_id') ?? query.get('name') ?? b['track_id'] ?? b['name'];
    if (typeof key !== 'string' || key === '')
      return unprocessable(['query', 'track_id'], 'Field required', 'missing');
    const track = room.tracks.get(key) ?? [...room.tracks.values()].find((t) => t.name === key);
    if (!track) return fail(404, 'track not found', key);
    room.tracks.delete(track.track_id);
    return ok(track, 'track deleted');
  });

  // Site / Route / Zone Set Management share one CRUD shape.
  type Kind = {
    path: string;
    noun: string;
    map: (r: RobotRecord) => Map<string, Doc>;
    inUse: (r: RobotRecord, n: string) => boolean;
  };
  const normalise = (kind: Kind, body: Record<string, unknown>) =>
    kind.path === 'zone_sets' ? normaliseZones(body) : body;
  const kinds: Kind[] = [
    { path: 'sites', noun: 'site', map: (r) => r.sites, inUse: (r, n) => r.activeSite === n },
    { path: 'routes', noun: 'route', map: (r) => r.routes, inUse: (r, n) => r.loadedRoute === n },
    { path: 'zone_sets', noun: 'zone set', map: (r) => r.zoneSets, inUse: (r, n) => r.loadedZoneSet === n },
  ];
  for (const kind of kinds) {
    const base = `/v2/${kind.path}`;
    add('GET', base, ({ robot }) => ok([...kind.map(robot).values()].map(summary)));
    add('GET', `${base}/{name}`, ({ robot, params }) => {
      const doc = kind.map(robot).get(params['name']!);
      return doc ? ok(doc) : fail(404, `${kind.noun} not found`, params['name']);
    });
    add('POST', `${base}/{name}`, ({ robot, params, body, now }) => {
      const v = validate(optionalObject, body);
      if ('reply' in v) return v.reply;
      const name = params['name']!;
      const map = kind.map(robot);
      if (map.has(name)) return fail(409, `${kind.noun} already exists`, name);
      const doc = newDoc(name, normalise(kind, v.value ?? {}), now);
      map.set(name, doc);
      return ok(doc, `${kind.noun} created`, 201);
    });
    add('PUT', `${base}/{name}`, ({ robot, params, body, now }) => {
      const v = validate(objectBody, body);
      if ('reply' in v) return v.reply;
      const name = params['name']!;
      const map = kind.map(robot);
      const old = map.get(name);
      if (!old) return fail(404, `${kind.noun} not found`, name);
      const doc = newDoc(name, normalise(kind, v.value), now, old.created_at);
      map.set(name, doc);
      return ok(doc, `${kind.noun} updated`);
    });
    add('DELETE', `${base}/{name}`, ({ robot, params }) => {
      const name = params['name']!;
      const map = kind.map(robot);
      if (!map.has(name)) return fail(404, `${kind.noun} not found`, name);
      if (kind.inUse(robot, name)) return fail(409, `${kind.noun} is in use`, name);
      map.delete(name);
      return ok({ name }, `${kind.noun} deleted`);
    });
  }
  const current = (map: Map<string, Doc>, name: string | null) =>
    name === null ? null : (map.get(name) ?? null);
  add('GET', '/v2/active_site', ({ robot }) => ok(current(robot.sites, robot.activeSite)));
  add('POST', '/v2/sites/{name}/activate', ({ robot, params }) => {
    const doc = robot.sites.get(params['name']!);
    if (!doc) return fail(404, 'site not found', params['name']);
    robot.activeSite = doc.name;
    return ok(doc, 'site staged for activation');
  });
  add('GET', '/v2/loaded_route', ({ robot }) => ok(current(robot.routes, robot.loadedRoute)));
  add('POST', '/v2/routes/{name}/load', ({ robot, params }) => {
    const doc = robot.routes.get(params['name']!);
    if (!doc) return fail(404, 'route not found', params['name']);
    robot.loadedRoute = doc.name;
    return ok(doc, 'route loaded');
  });
  add('GET', '/v2/loaded_zone_set', ({ robot }) => ok(current(robot.zoneSets, robot.loadedZoneSet)));
  add('POST', '/v2/zone_sets/{name}/load', ({ robot, params }) => {
    const doc = robot.zoneSets.get(params['name']!);
    if (!doc) return fail(404, 'zone set not found', params['name']);
    robot.loadedZoneSet = doc.name;
    return ok(doc, 'zone set loaded');
  });
  add('POST', '/v2/loaded_zone_set/clear', ({ robot }) => {
    robot.loadedZoneSet = null;
    return ok(null, 'zone set cleared');
  });
  add('PATCH', '/v2/loaded_zone_set/enabled', ({ robot, body, now }) => {
    const v = validate(zonesEnabled, body);
    if ('reply' in v) return v.reply;
    const doc = current(robot.zoneSets, robot.loadedZoneSet);
    if (!doc) return fail(409, 'no zone set loaded');
    const wanted = Array.isArray(v.value.zones)
      ? new Map(v.value.zones.map((z) => [z.name, z.enabled]))
      : new Map(Object.entries(v.value.zones));
    const zones = (Array.isArray(doc['zones']) ? doc['zones'] : []) as Array<Record<string, unknown>>;
    const known = new Set(zones.map((z) => z['name']));
    for (const name of wanted.keys()) {
      if (!known.has(name))
        return unprocessable(['body', 'zones', name], `unknown zone '${name}'`, 'value_error');
    }
    const next = newDoc(
      doc.name,
      {
        ...doc,
        zones: zones.map((z) =>
          wanted.has(z['name'] as string) ? { ...z, enabled: wanted.get(z['name'] as string) } : z,
        ),
      },
      now,
      doc.created_at,
    );
    robot.zoneSets.set(doc.name, next);
    return ok(next, 'zones updated');
  });
  return routes;
}

const ROUTES = buildRoutes();

function match(
  method: string,
  sub: string,
): { route: Route; params: Record<string, string> } | 405 | undefined {
  const segments = sub.split('/').slice(1);
  let pathMatched = false;
  for (const route of ROUTES) {
    if (route.segments.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let hit = true;
    for (let i = 0; i < segments.length; i++) {
      const want = route.segments[i]!;
      const got = segments[i]!;
      if (want.startsWith('{')) {
        const value = decodeSegment(got);
        if (!value) {
          hit = false;
          break;
        }
        params[want.slice(1, -1)] = value;
      } else if (want !== got) {
        hit = false;
        break;
      }
    }
    if (!hit) continue;
    if (route.method === method) return { route, params };
    pathMatched = true;
  }
  return pathMatched ? 405 : undefined;
}

/** `GET /api/robots` and the gateway `/api/platform/{deviceId}/v2/...`. */
export function createRobotHandler(deps: SimDeps): (ctx: Ctx) => Promise<void> {
  const reply = (ctx: Ctx, r: Reply, malformed = false) => sendJson(ctx, r.status, r.body, malformed);
  const authFail = (status: 401 | 403) =>
    fail(
      status,
      status === 401 ? 'unauthorized' : 'forbidden',
      status === 401 ? 'bearer token missing or invalid' : 'token does not grant access',
    );

  async function listRobots(ctx: Ctx): Promise<void> {
    ctx.operation = 'list_robots';
    const decision = await preflight(ctx, deps, 'robots', undefined, null, gatewayError);
    if (!decision) return;
    const client = authorise(ctx, deps);
    if (typeof client === 'number') return reply(ctx, authFail(client));
    const data: Array<{ device_id: string; name: string }> = [];
    const ids = client.robotList ?? deps.fleet.robots.keys();
    for (const id of ids) {
      const robot = deps.fleet.robots.get(id);
      if (robot) data.push({ device_id: robot.deviceId, name: robot.name });
    }
    reply(ctx, ok(data), decision.malformed);
  }

  async function gateway(ctx: Ctx): Promise<void> {
    const rest = ctx.path.slice('/api/platform/'.length);
    const slash = rest.indexOf('/');
    const deviceId = decodeSegment(slash < 0 ? rest : rest.slice(0, slash));
    const found = deviceId ? match(ctx.method, slash < 0 ? '' : rest.slice(slash)) : undefined;
    if (found === undefined || found === 405) {
      ctx.operation = 'robot:unknown';
      return reply(ctx, found === 405 ? fail(405, 'method not allowed') : fail(404, 'not found', ctx.path));
    }
    const { route, params } = found;
    ctx.operation = `robot:${route.method} ${route.pattern}`;
    const raw = route.method === 'GET' ? undefined : await readBody(ctx.req);
    const decision = await preflight(ctx, deps, 'robots', deviceId, null, gatewayError);
    if (!decision) return;
    const client = authorise(ctx, deps);
    if (typeof client === 'number') return reply(ctx, authFail(client));
    const robot = deps.fleet.robots.get(deviceId!);
    if (!robot || !canSeeRobot(client, robot.deviceId))
      return reply(ctx, fail(404, 'device not found', deviceId));
    if (!robot.healthy) {
      if (robot.unhealthyMode === 'timeout') return deps.hold(ctx);
      return reply(ctx, fail(503, 'robot unavailable', 'the robot did not answer'));
    }
    let body: unknown;
    if (raw && raw.bytes > 0) {
      if (raw.tooLarge) return reply(ctx, fail(413, 'body too large'));
      const parsed = parseJson(raw.text);
      if (!parsed.ok) return reply(ctx, unprocessable(['body'], 'JSON decode error', 'json_invalid'));
      body = parsed.value;
    }
    const query = new URLSearchParams(ctx.query);
    const result = route.handler({ ctx, robot, client, params, body, query, now: ctx.now });
    reply(ctx, result, decision.malformed && result.status < 300);
  }

  return async (ctx) => {
    if (ctx.path !== '/api/robots') return gateway(ctx);
    if (ctx.method === 'GET') return listRobots(ctx);
    ctx.operation = 'robot:unknown';
    reply(ctx, fail(405, 'method not allowed'));
  };
}

export const ROBOT_ROUTES = ROUTES.map((r) => `${r.method} ${r.pattern}`);
