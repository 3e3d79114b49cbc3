import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { GatewayOperation } from '../upstream/operations/robot.js';
import type { ClientGrant } from './auth.js';
import type { Ctx } from './http.js';
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

/**
 * What the simulated robot does for each gateway operation: one handler per row of the operation
 * table (a row without a handler does not compile). A handler gets the call already routed,
 * authorised and, where the row has a request schema, with the body checked against it.
 */

export interface Reply {
  status: number;
  body: unknown;
}

export interface Call {
  ctx: Ctx;
  robot: RobotRecord;
  client: ClientGrant;
  params: Record<string, string>;
  /** Parsed JSON body (checked against the row's request schema when it has one); undefined when none was sent. */
  body: unknown;
  query: URLSearchParams;
  now: number;
}

export type Handler = (call: Call) => Reply;

export const ok = (data: unknown, message = 'ok', status = 200): Reply => ({
  status,
  body: { status: 'success', message, data },
});
export const fail = (status: number, message: string, details = message): Reply => ({
  status,
  body: { status: 'error', message, error: { details } },
});
export const unprocessable = (loc: Array<string | number>, msg: string, type: string): Reply => ({
  status: 422,
  body: { detail: [{ loc, msg, type }] },
});

/** Validates a body with zod; a failure is the FastAPI-style 422. */
export function validate<T>(schema: z.ZodType<T>, body: unknown): { value: T } | { reply: Reply } {
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

// The simulator's own checks where the spec gives no shape: stricter than the contract, so that
// clients meet realistic 422s.
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

/** Runs `then` with the body checked by `schema`, or answers the 422. */
function withBody<T>(schema: z.ZodType<T>, then: (call: Call, body: T) => Reply): Handler {
  return (call) => {
    const v = validate(schema, call.body);
    return 'reply' in v ? v.reply : then(call, v.value);
  };
}

const summary = (doc: Doc) => ({ name: doc.name, created_at: doc.created_at, updated_at: doc.updated_at });

function roomView(robot: RobotRecord) {
  const room = robot.room;
  return room
    ? { name: room.name, sid: room.sid, created_at: room.created_at, tracks: [...room.tracks.values()] }
    : null;
}

/** A waypoint list, sent as `{waypoints: [...]}` or as the bare list, queued as one command. */
function waypoints(schema: z.ZodType<unknown>, type: string, received: string): Handler {
  return ({ robot, body, now }) => {
    const v = validate(schema, Array.isArray(body) ? { waypoints: body } : body);
    if ('reply' in v) return v.reply;
    const command = enqueue(robot, type, v.value, now);
    return ok({ received: true, command_id: command.id }, `${received} received`, 201);
  };
}

/** The caller's identity is its client id; the lease answers 403 to anyone but its holder. */
function leaseHeldByOther(robot: RobotRecord, client: ClientGrant, now: number): Reply | undefined {
  const lease = currentLease(robot, now);
  return lease && lease.holderId !== client.id
    ? fail(403, 'lease held by another user', lease.holderId)
    : undefined;
}

// --- Sites, routes and zone sets share one document shape ---------------------------------------

/**
 * The handlers of one kind of document: `collection` holds them by name, `selected` names the
 * active site or the loaded route or zone set (which cannot be deleted), `selectedMessage` is what
 * selecting one answers.
 */
function documentHandlers(
  noun: 'site' | 'route' | 'zone set',
  collection: 'sites' | 'routes' | 'zoneSets',
  selected: 'activeSite' | 'loadedRoute' | 'loadedZoneSet',
  selectedMessage: string,
  normalise: (body: Record<string, unknown>) => Record<string, unknown> = (body) => body,
) {
  const notFound = (name: string | undefined) => fail(404, `${noun} not found`, name);
  return {
    list: (({ robot }) => ok([...robot[collection].values()].map(summary))) satisfies Handler,
    get: (({ robot, params }) => {
      const doc = robot[collection].get(params['name']!);
      return doc ? ok(doc) : notFound(params['name']);
    }) satisfies Handler,
    create: withBody(optionalObject, ({ robot, params, now }, body) => {
      const name = params['name']!;
      const map = robot[collection];
      if (map.has(name)) return fail(409, `${noun} already exists`, name);
      const doc = newDoc(name, normalise(body ?? {}), now);
      map.set(name, doc);
      return ok(doc, `${noun} created`, 201);
    }),
    update: withBody(objectBody, ({ robot, params, now }, body) => {
      const name = params['name']!;
      const map = robot[collection];
      const old = map.get(name);
      if (!old) return notFound(name);
      const doc = newDoc(name, normalise(body), now, old.created_at);
      map.set(name, doc);
      return ok(doc, `${noun} updated`);
    }),
    delete: (({ robot, params }) => {
      const name = params['name']!;
      const map = robot[collection];
      if (!map.has(name)) return notFound(name);
      if (robot[selected] === name) return fail(409, `${noun} is in use`, name);
      map.delete(name);
      return ok({ name }, `${noun} deleted`);
    }) satisfies Handler,
    selected: (({ robot }) => {
      const name = robot[selected];
      return ok(name === null ? null : (robot[collection].get(name) ?? null));
    }) satisfies Handler,
    select: (({ robot, params }) => {
      const doc = robot[collection].get(params['name']!);
      if (!doc) return notFound(params['name']);
      robot[selected] = doc.name;
      return ok(doc, selectedMessage);
    }) satisfies Handler,
  };
}

const sites = documentHandlers('site', 'sites', 'activeSite', 'site staged for activation');
const routes = documentHandlers('route', 'routes', 'loadedRoute', 'route loaded');
const zoneSets = documentHandlers('zone set', 'zoneSets', 'loadedZoneSet', 'zone set loaded', normaliseZones);

function setZonesEnabled({ robot, now }: Call, body: z.output<typeof zonesEnabled>): Reply {
  const name = robot.loadedZoneSet;
  const doc = name === null ? undefined : robot.zoneSets.get(name);
  if (!doc) return fail(409, 'no zone set loaded');
  const wanted = Array.isArray(body.zones)
    ? new Map(body.zones.map((z) => [z.name, z.enabled]))
    : new Map(Object.entries(body.zones));
  const zones = (Array.isArray(doc['zones']) ? doc['zones'] : []) as Array<Record<string, unknown>>;
  const known = new Set(zones.map((z) => z['name']));
  for (const zone of wanted.keys()) {
    if (!known.has(zone))
      return unprocessable(['body', 'zones', zone], `unknown zone '${zone}'`, 'value_error');
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
}

export const ROBOT_HANDLERS: { readonly [Name in GatewayOperation['name']]: Handler } = {
  // Health Check
  health: () => ({ status: 200, body: { status: 'ok' } }),
  uuid: ({ robot }) => ok({ uuid: robot.uuid }),

  // Vehicle Autonomy
  platformFeedback: ({ robot, now }) => ok({ platform_feedback: platformFeedback(robot, now) }),
  costmapBoundary: ({ robot }) => ok(costmapBoundary(robot)),
  navigationPathOptions: () => ok(NAVIGATION_PATH_OPTIONS),
  motionCommands: () => ok(MOTION_COMMAND_LIST),
  referenceTargets: ({ robot }) => ok(robot.referenceTargets),
  createReferenceTarget: withBody(objectBody, ({ robot, now }, body) =>
    ok(addReferenceTarget(robot, body, now), 'reference target set', 201),
  ),
  createReferenceTargetAtCurrentLocation: withBody(optionalObject, ({ robot, now }, body) => {
    const here = { latitude: robot.latitude, longitude: robot.longitude, altitude: robot.altitude };
    const doc = addReferenceTarget(robot, { ...body, ...here, source: 'current_location' }, now);
    return ok(doc, 'reference target set at current location', 201);
  }),
  sendGpsWaypoints: waypoints(gpsWaypoints, 'gps_waypoints', 'gps waypoints'),
  sendRelativeWaypoints: waypoints(relativeWaypoints, 'relative_waypoints', 'relative waypoints'),
  sendMotionCommand: ({ robot, body, now }) => {
    const { motion_command, mode } = body as { motion_command: number; mode: number };
    applyMotionCommand(robot, motion_command, mode, now);
    return ok({ received: true }, 'motion command received', 201);
  },
  commandHistory: ({ robot }) => ok(robot.history),
  commandQueue: ({ robot }) => ok(robot.queue),

  // Teleop Control
  teleopAcquire: ({ robot, client, now }) => {
    const held = leaseHeldByOther(robot, client, now);
    if (held) return held;
    robot.lease = { holderId: client.id, expiresAt: now + LEASE_TTL_MS };
    return ok(leaseData(robot, now), 'lease acquired');
  },
  teleopRenew: ({ robot, client, now }) => {
    const lease = currentLease(robot, now);
    if (!lease) return fail(409, 'no lease to renew');
    const held = leaseHeldByOther(robot, client, now);
    if (held) return held;
    lease.expiresAt = now + LEASE_TTL_MS;
    return ok(leaseData(robot, now), 'lease renewed');
  },
  teleopRelease: ({ robot, client, query, now }) => {
    if (!currentLease(robot, now)) return ok({}, 'no lease held');
    const held = query.get('force') === 'true' ? undefined : leaseHeldByOther(robot, client, now);
    if (held) return held;
    robot.lease = null;
    return ok({}, 'lease released');
  },
  teleopTransfer: ({ robot, client, body, now }) => {
    if (!currentLease(robot, now)) return fail(409, 'no lease to transfer');
    const held = leaseHeldByOther(robot, client, now);
    if (held) return held;
    robot.lease = { holderId: (body as { to: string }).to, expiresAt: now + LEASE_TTL_MS };
    return ok(leaseData(robot, now), 'lease transferred');
  },
  teleopStatus: ({ robot, now }) => ok(leaseData(robot, now)),

  // Realtime
  realtimeConfig: ({ robot }) =>
    ok({
      url: 'wss://realtime.invalid',
      room_prefix: robot.deviceId,
      ice_servers: [{ urls: ['stun:stun.invalid:3478'] }],
    }),
  createRealtimeToken: withBody(optionalObject, ({ robot, client, now }, body) => {
    const identity = typeof body?.['identity'] === 'string' ? body['identity'] : client.id;
    return ok({
      token: randomBytes(18).toString('base64url'),
      url: 'wss://realtime.invalid',
      room: robot.room?.name ?? null,
      identity,
      expires_at: new Date(now + 3_600_000).toISOString(),
    });
  }),
  realtimeRoom: ({ robot }) => ok(roomView(robot)),
  createRealtimeRoom: withBody(roomBody, ({ robot, now }, body) => {
    if (robot.room) return fail(409, 'room already exists', robot.room.name);
    robot.room = {
      name: body?.name ?? `${robot.deviceId}-room`,
      sid: `RM_${randomBytes(6).toString('hex')}`,
      created_at: new Date(now).toISOString(),
      tracks: new Map(),
    };
    return ok(roomView(robot), 'room created', 201);
  }),
  deleteRealtimeRoom: ({ robot }) => {
    if (!robot.room) return fail(404, 'no room');
    robot.room = null;
    return ok(null, 'disconnected from room');
  },
  createRealtimeTrack: withBody(trackBody, ({ robot, now }, body) => {
    const room = robot.room;
    if (!room) return fail(409, 'no room');
    const name = body?.name ?? `track-${room.tracks.size + 1}`;
    if ([...room.tracks.values()].some((t) => t.name === name))
      return fail(409, 'track already exists', name);
    const track = {
      track_id: `TR_${randomBytes(6).toString('hex')}`,
      name,
      kind: body?.kind ?? 'video',
      created_at: new Date(now).toISOString(),
    };
    room.tracks.set(track.track_id, track);
    return ok(track, 'track created', 201);
  }),
  // The spec gives this path no query parameter: the track is named in the body (its track_id or
  // name), the only input fleetwatch's operation sends, and the 422 says so.
  deleteRealtimeTrack: ({ robot, body }) => {
    const room = robot.room;
    if (!room) return fail(409, 'no room');
    const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
    const key = b['track_id'] ?? b['name'];
    if (typeof key !== 'string' || key === '')
      return unprocessable(
        ['body', 'track_id'],
        'Field required (the track_id, or the name, of the track)',
        'missing',
      );
    const track = room.tracks.get(key) ?? [...room.tracks.values()].find((t) => t.name === key);
    if (!track) return fail(404, 'track not found', key);
    room.tracks.delete(track.track_id);
    return ok(track, 'track deleted');
  },

  // Site Management
  getSite: sites.get,
  createSite: sites.create,
  updateSite: sites.update,
  deleteSite: sites.delete,
  listSites: sites.list,
  activeSite: sites.selected,
  activateSite: sites.select,

  // Route Management
  getRoute: routes.get,
  createRoute: routes.create,
  updateRoute: routes.update,
  deleteRoute: routes.delete,
  listRoutes: routes.list,
  loadedRoute: routes.selected,
  loadRoute: routes.select,

  // Zone Set Management
  getZoneSet: zoneSets.get,
  createZoneSet: zoneSets.create,
  updateZoneSet: zoneSets.update,
  deleteZoneSet: zoneSets.delete,
  listZoneSets: zoneSets.list,
  loadedZoneSet: zoneSets.selected,
  loadZoneSet: zoneSets.select,
  clearLoadedZoneSet: ({ robot }) => {
    robot.loadedZoneSet = null;
    return ok(null, 'zone set cleared');
  },
  setLoadedZoneSetEnabled: withBody(zonesEnabled, setZonesEnabled),
};
