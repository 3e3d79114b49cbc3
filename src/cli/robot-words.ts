import type { RobotOperationName } from '../upstream/operations/robot.js';

/**
 * The command-line words of every robot operation: where each row of the operation table
 * (`src/upstream/operations/robot.ts`) sits in the command tree and how its answer reads. Everything
 * else (arguments from path parameters, options from query and body parameters, `--file` for a
 * body, `--yes` for a destructive row, the help) is derived from the row by `robot-command.ts`.
 *
 * The table is typed by the rows' names: a new row without words does not compile, and the error
 * names it (`Property 'newRow' is missing`).
 */

/** Whether a command asks before it sends: always, never, or only with `--force`. */
export type Asks = 'always' | 'never' | 'with --force';

/** A flag that sets a field of a command's fixed body: `--preempt` sends `mode: 1` instead of 0. */
export interface BodyFlag {
  /** `--preempt` */
  flag: string;
  help: string;
  field: string;
  /** The field's value with the flag, and without it. */
  on: unknown;
  off: unknown;
}

export interface CommandWords {
  /** The command line after `fleetwatch`: `['robot', 'lease', 'acquire']`. */
  path: readonly [string, ...string[]];
  /**
   * Registered by hand with a view of its own (`robot health`, `robot feedback`, `robot lease
   * status`, `robots`); the generic builder leaves it alone.
   */
  handwritten?: true;
  /**
   * A write's one-line answer, what was done: `created site "{name}"`. `{…}` is a parameter of
   * the row (a path parameter or a body field given as an option).
   */
  did?: string;
  /** A read's line when the robot's answer holds nothing: `no route loaded`. */
  none?: string;
  /** A write whose answer is what the operator came for (a token, a room): printed under the line. */
  showsAnswer?: true;
  /** The body this command sends, fixed: `motion stop` is `{motion_command: 0}`. */
  body?: Readonly<Record<string, unknown>>;
  /** Flags that set a field of the fixed body. */
  flags?: readonly BodyFlag[];
  /** Whether it asks for confirmation; by default `always` for a destructive row, else `never`. */
  asks?: Asks;
  /** The value name of a string option from a parameter: `{ to: 'user' }` gives `--to <user>`. */
  values?: Readonly<Record<string, string>>;
  /** One more line of help, and the reason given when asking: what the command undoes. */
  note?: string;
}

/** The groups of commands under `fleetwatch robot`, each with its help line. */
export const ROBOT_COMMAND_GROUPS: Readonly<Record<string, string>> = {
  'robot motion': 'stop, pause or resume the robot; the motion commands it knows',
  'robot targets': 'reference targets: list them, set one, set one where the robot is',
  'robot waypoints': 'send GPS or relative waypoints (a body from --file)',
  'robot commands': 'the command queue and the commands the robot has finished',
  'robot lease': 'the teleoperation lease: status, acquire, renew, release, transfer',
  'robot realtime': 'the real-time media room: discovery configuration, tokens, the room and its tracks',
  'robot realtime room': 'the current room: read it, create one, disconnect from it',
  'robot realtime track': 'tracks of the current room: add one, remove one',
  'robot sites': 'sites on the robot: list, read, create, update, delete, the active one, stage one',
  'robot routes': 'routes on the robot: list, read, create, update, delete, the loaded one, load one',
  'robot zone-sets':
    'zone sets on the robot: list, read, create, update, delete, the loaded one, load, clear, enable zones',
};

/** The commands of a kind of named document (site, route, zone set). */
function documents(group: string, noun: string) {
  const at = (verb: string) => ['robot', group, verb] as const;
  return {
    list: { path: at('list'), none: `no ${noun}s` },
    get: { path: at('get') },
    create: { path: at('create'), did: `created ${noun} "{name}"` },
    update: { path: at('update'), did: `updated ${noun} "{name}"` },
    delete: { path: at('delete'), did: `deleted ${noun} "{name}"` },
  } satisfies Record<string, CommandWords>;
}

const SITES = documents('sites', 'site');
const ROUTES = documents('routes', 'route');
const ZONE_SETS = documents('zone-sets', 'zone set');

const PREEMPT: BodyFlag = {
  flag: '--preempt',
  help: 'act now, ahead of the queued commands (mode PREEMPT); without it the command is queued (mode ADD)',
  field: 'mode',
  on: 1,
  off: 0,
};

/** One or more commands per row of the operation table. */
export const ROBOT_COMMAND_WORDS: {
  readonly [Name in RobotOperationName]: readonly [CommandWords, ...CommandWords[]];
} = {
  listRobots: [{ path: ['robots'], handwritten: true }],

  // Health Check
  health: [{ path: ['robot', 'health'], handwritten: true }],
  uuid: [{ path: ['robot', 'uuid'] }],

  // Vehicle Autonomy
  platformFeedback: [{ path: ['robot', 'feedback'], handwritten: true }],
  costmapBoundary: [{ path: ['robot', 'costmap'], none: 'no costmap boundary' }],
  navigationPathOptions: [{ path: ['robot', 'nav-options'], none: 'no navigation path options' }],
  motionCommands: [{ path: ['robot', 'motion', 'list'], none: 'no motion commands' }],
  referenceTargets: [{ path: ['robot', 'targets', 'list'], none: 'no reference targets' }],
  createReferenceTarget: [
    { path: ['robot', 'targets', 'set'], did: 'set a reference target', showsAnswer: true },
  ],
  createReferenceTargetAtCurrentLocation: [
    {
      path: ['robot', 'targets', 'here'],
      did: 'set a reference target at its current location',
      showsAnswer: true,
    },
  ],
  sendGpsWaypoints: [{ path: ['robot', 'waypoints', 'gps'], did: 'sent GPS waypoints', showsAnswer: true }],
  sendRelativeWaypoints: [
    { path: ['robot', 'waypoints', 'relative'], did: 'sent relative waypoints', showsAnswer: true },
  ],
  // The spec's one motion-command operation is three commands: the body names the command.
  sendMotionCommand: [
    {
      path: ['robot', 'motion', 'stop'],
      body: { motion_command: 0 },
      flags: [PREEMPT],
      did: 'sent STOP',
      note: 'STOP cancels every queued command.',
    },
    {
      path: ['robot', 'motion', 'pause'],
      body: { motion_command: 1 },
      flags: [PREEMPT],
      did: 'sent PAUSE',
      // Pausing undoes nothing: resume carries on.
      asks: 'never',
    },
    {
      path: ['robot', 'motion', 'resume'],
      body: { motion_command: 2 },
      flags: [PREEMPT],
      did: 'sent RESUME',
      asks: 'never',
    },
  ],
  commandHistory: [{ path: ['robot', 'commands', 'history'], none: 'no finished commands' }],
  commandQueue: [{ path: ['robot', 'commands', 'queue'], none: 'nothing queued' }],

  // Teleop Control
  teleopAcquire: [{ path: ['robot', 'lease', 'acquire'], did: 'acquired the lease', showsAnswer: true }],
  teleopRenew: [{ path: ['robot', 'lease', 'renew'], did: 'renewed the lease', showsAnswer: true }],
  teleopRelease: [
    {
      path: ['robot', 'lease', 'release'],
      did: 'released the lease',
      // Releasing one's own lease is routine; taking it from another user is what needs a yes.
      asks: 'with --force',
      note: '--force takes the lease from whoever holds it.',
    },
  ],
  teleopTransfer: [
    {
      path: ['robot', 'lease', 'transfer'],
      did: 'transferred the lease to {to}',
      values: { to: 'user' },
      showsAnswer: true,
    },
  ],
  teleopStatus: [{ path: ['robot', 'lease', 'status'], handwritten: true }],

  // Realtime
  realtimeConfig: [{ path: ['robot', 'realtime', 'config'] }],
  createRealtimeToken: [
    { path: ['robot', 'realtime', 'token'], did: 'created a real-time access token', showsAnswer: true },
  ],
  realtimeRoom: [{ path: ['robot', 'realtime', 'room', 'get'], none: 'no room' }],
  createRealtimeRoom: [
    { path: ['robot', 'realtime', 'room', 'create'], did: 'created a room', showsAnswer: true },
  ],
  deleteRealtimeRoom: [
    {
      path: ['robot', 'realtime', 'room', 'delete'],
      did: 'disconnected from the room',
      note: 'Everyone in the room is disconnected.',
    },
  ],
  createRealtimeTrack: [
    { path: ['robot', 'realtime', 'track', 'add'], did: 'created a track', showsAnswer: true },
  ],
  deleteRealtimeTrack: [
    {
      path: ['robot', 'realtime', 'track', 'remove'],
      did: 'removed the track',
      note: 'The body names the track, e.g. {"track_id": "TR_…"}.',
    },
  ],

  // Site Management
  getSite: [SITES.get],
  createSite: [SITES.create],
  updateSite: [SITES.update],
  deleteSite: [SITES.delete],
  listSites: [SITES.list],
  activeSite: [{ path: ['robot', 'sites', 'active'], none: 'no active site' }],
  activateSite: [{ path: ['robot', 'sites', 'activate'], did: 'staged site "{name}" for activation' }],

  // Route Management
  getRoute: [ROUTES.get],
  createRoute: [ROUTES.create],
  updateRoute: [ROUTES.update],
  deleteRoute: [ROUTES.delete],
  listRoutes: [ROUTES.list],
  loadedRoute: [{ path: ['robot', 'routes', 'loaded'], none: 'no route loaded' }],
  loadRoute: [{ path: ['robot', 'routes', 'load'], did: 'loaded route "{name}"' }],

  // Zone Set Management
  getZoneSet: [ZONE_SETS.get],
  createZoneSet: [ZONE_SETS.create],
  updateZoneSet: [ZONE_SETS.update],
  deleteZoneSet: [ZONE_SETS.delete],
  listZoneSets: [ZONE_SETS.list],
  loadedZoneSet: [{ path: ['robot', 'zone-sets', 'loaded'], none: 'no zone set loaded' }],
  loadZoneSet: [{ path: ['robot', 'zone-sets', 'load'], did: 'loaded zone set "{name}"' }],
  clearLoadedZoneSet: [
    {
      path: ['robot', 'zone-sets', 'clear'],
      did: 'cleared the loaded zone set',
      note: 'The robot navigates without zones until one is loaded.',
    },
  ],
  setLoadedZoneSetEnabled: [
    {
      path: ['robot', 'zone-sets', 'enable'],
      did: 'changed the enabled zones of the loaded zone set',
      showsAnswer: true,
      note: 'The body says which zones, e.g. {"zones": {"dock": false}}.',
    },
  ],
};
