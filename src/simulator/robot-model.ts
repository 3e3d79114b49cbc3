import { randomUUID } from 'node:crypto';
import type { ListFields, RobotFeedbackView } from './types.js';

/** Opaque document (site, route, zone set, reference target); the spec gives no field list. */
export type Doc = Record<string, unknown> & { name: string; created_at: string; updated_at: string };

export interface Command {
  id: string;
  type: string;
  status: 'queued' | 'completed' | 'canceled';
  queued_at: string;
  finished_at?: string;
  payload?: unknown;
}

export interface Track {
  track_id: string;
  name: string;
  kind: string;
  created_at: string;
}

/** A simulated robot: its feedback fields are those the control API shows. */
export interface RobotRecord extends RobotFeedbackView {
  deviceId: string;
  name: string;
  uuid: string;
  healthy: boolean;
  unhealthyMode: 'error' | 'timeout';
  /** When the current navigation goal started (ms). */
  navStartedAt: number;
  lease: { holderId: string; expiresAt: number } | null;
  activeSite: string | null;
  loadedRoute: string | null;
  loadedZoneSet: string | null;
  sites: Map<string, Doc>;
  routes: Map<string, Doc>;
  zoneSets: Map<string, Doc>;
  room: { name: string; sid: string; created_at: string; tracks: Map<string, Track> } | null;
  referenceTargets: Doc[];
  queue: Command[];
  history: Command[];
  paused: boolean;
  commandSeq: number;
  /** Fields that replace its element of `GET /api/robots`, as given (see `ListFields`). */
  listFields: ListFields | null;
}

export const LEASE_TTL_MS = 60_000;
const HISTORY_CAP = 200;
const TARGETS_CAP = 500;

export const CORTEX_STATUS = ['IDLE', 'READY', 'NAVIGATING', 'PAUSED', 'ERROR'] as const;
export const NAV_STATUS = [
  'UNKNOWN',
  'ACCEPTED',
  'EXECUTING',
  'CANCELING',
  'SUCCEEDED',
  'CANCELED',
  'ABORTED',
] as const;
export const VEHICLE_STATES = ['IDLE', 'AUTONOMOUS', 'TELEOP', 'CHARGING', 'ESTOP'] as const;
export const MOTION_COMMANDS = ['STOP', 'PAUSE', 'RESUME'] as const;

const iso = (ms: number) => new Date(ms).toISOString();

export function newDoc(name: string, body: Record<string, unknown>, now: number, createdAt?: string): Doc {
  const stamp = iso(now);
  return { ...body, name, created_at: createdAt ?? stamp, updated_at: stamp };
}

/** Zone sets keep `zones` as `[{ name, enabled }]`; a `{ name: boolean }` map is accepted too. */
export function normaliseZones(body: Record<string, unknown>): Record<string, unknown> {
  const zones = body['zones'];
  if (zones && typeof zones === 'object' && !Array.isArray(zones)) {
    return {
      ...body,
      zones: Object.entries(zones).map(([name, enabled]) => ({ name, enabled: enabled !== false })),
    };
  }
  if (Array.isArray(zones)) {
    return {
      ...body,
      zones: zones.map((z) =>
        z && typeof z === 'object' && !Array.isArray(z) && typeof (z as { name?: unknown }).name === 'string'
          ? { ...z, enabled: (z as { enabled?: unknown }).enabled !== false }
          : z,
      ),
    };
  }
  return { ...body, zones: [] };
}

/** The lease as seen now (an expired lease is nobody's). */
export function currentLease(robot: RobotRecord, now: number): RobotRecord['lease'] {
  if (robot.lease && robot.lease.expiresAt <= now) robot.lease = null;
  return robot.lease;
}

export function leaseData(robot: RobotRecord, now: number): Record<string, unknown> {
  const lease = currentLease(robot, now);
  return lease ? { holder_id: lease.holderId, expires_at: iso(lease.expiresAt) } : {};
}

export function enqueue(robot: RobotRecord, type: string, payload: unknown, now: number): Command {
  robot.commandSeq += 1;
  const command: Command = {
    id: `${robot.deviceId}-cmd-${robot.commandSeq}`,
    type,
    status: 'queued',
    queued_at: iso(now),
    payload,
  };
  robot.queue.push(command);
  if (!robot.paused) {
    robot.cortexStatus = 2;
    if (robot.navStatus !== 2) robot.navStartedAt = now;
    robot.navStatus = 2;
  }
  return command;
}

function finish(robot: RobotRecord, command: Command, status: 'completed' | 'canceled', now: number): void {
  command.status = status;
  command.finished_at = iso(now);
  robot.history.push(command);
  if (robot.history.length > HISTORY_CAP) robot.history.splice(0, robot.history.length - HISTORY_CAP);
}

/** Completes the head of the queue (behaviours call this). */
export function completeHead(robot: RobotRecord, now: number): boolean {
  if (robot.paused) return false;
  const head = robot.queue.shift();
  if (!head) return false;
  finish(robot, head, 'completed', now);
  if (robot.queue.length === 0) {
    robot.navStatus = 4;
    robot.cortexStatus = 1;
  }
  return true;
}

export function applyMotionCommand(robot: RobotRecord, command: number, mode: number, now: number): void {
  const name = MOTION_COMMANDS[command] ?? 'STOP';
  if (command === 0) {
    for (const queued of robot.queue.splice(0)) finish(robot, queued, 'canceled', now);
    robot.paused = false;
    if (robot.navStatus === 1 || robot.navStatus === 2) robot.navStatus = 5;
    robot.cortexStatus = 1;
  } else if (command === 1) {
    robot.paused = true;
    robot.cortexStatus = 3;
  } else {
    robot.paused = false;
    robot.cortexStatus = robot.queue.length > 0 ? 2 : 1;
  }
  robot.commandSeq += 1;
  const record: Command = {
    id: `${robot.deviceId}-cmd-${robot.commandSeq}`,
    type: 'motion_command',
    status: 'queued',
    queued_at: iso(now),
    payload: { motion_command: name, mode: mode === 1 ? 'PREEMPT' : 'ADD' },
  };
  finish(robot, record, 'completed', now);
}

export function addReferenceTarget(robot: RobotRecord, body: Record<string, unknown>, now: number): Doc {
  const name =
    typeof body['name'] === 'string' ? body['name'] : `target-${robot.referenceTargets.length + 1}`;
  const doc = newDoc(name, { id: randomUUID(), ...body }, now);
  robot.referenceTargets.push(doc);
  if (robot.referenceTargets.length > TARGETS_CAP) robot.referenceTargets.shift();
  return doc;
}

const secNanosec = (ms: number) => ({ sec: Math.floor(ms / 1000), nanosec: (ms % 1000) * 1_000_000 });

/** `data.platform_feedback` in the shape of robot-shapes.md. */
export function platformFeedback(robot: RobotRecord, now: number): Record<string, unknown> {
  const remaining = robot.queue.length;
  const navigating = robot.navStatus === 1 || robot.navStatus === 2;
  const elapsed = navigating ? Math.max(0, now - robot.navStartedAt) : 0;
  const pose = {
    position: { latitude: robot.latitude, longitude: robot.longitude, altitude: robot.altitude },
    orientation: { x: 0, y: 0, z: 0, w: 1 },
  };
  return {
    timestamp_utc: secNanosec(now),
    cortex_status: {
      status: robot.cortexStatus,
      status_text: CORTEX_STATUS[robot.cortexStatus] ?? 'UNKNOWN',
      description: `autonomy ${String(CORTEX_STATUS[robot.cortexStatus] ?? 'unknown').toLowerCase()}`,
    },
    navigation_feedback: {
      nav2_goal_status: {
        goal_info: { goal_id: robot.uuid, stamp: secNanosec(robot.navStartedAt) },
        status: robot.navStatus,
        status_text: NAV_STATUS[robot.navStatus] ?? 'UNKNOWN',
        text: '',
      },
      total_distance_remaining: navigating ? remaining * 25.0 : 0,
      current_pose_index: robot.history.length,
      number_of_poses_remaining: remaining,
      navigation_time: secNanosec(elapsed),
      estimated_time_remaining: secNanosec(navigating ? remaining * 30_000 : 0),
      target_pose: { header: { frame_id: 'map' }, pose },
      final_pose: { header: { frame_id: 'map' }, pose },
    },
    vehicle_feedback: { state: robot.vehicleState, description: robot.vehicleState.toLowerCase(), data: [] },
    current_pose: { header: { stamp: secNanosec(now), frame_id: 'map' }, pose },
    current_command_index: robot.history.length,
    number_commands_remaining: remaining,
  };
}

export function costmapBoundary(robot: RobotRecord): Record<string, unknown> {
  const d = 0.002;
  const { latitude: lat, longitude: lon } = robot;
  return {
    frame_id: 'map',
    coordinates: [
      { latitude: lat - d, longitude: lon - d },
      { latitude: lat - d, longitude: lon + d },
      { latitude: lat + d, longitude: lon + d },
      { latitude: lat + d, longitude: lon - d },
    ],
  };
}

export const NAVIGATION_PATH_OPTIONS = [
  { name: 'direct', parameters: { max_speed_mps: 1.5, obstacle_padding_m: 0.5 } },
  { name: 'follow_route', parameters: { max_speed_mps: 1.2, lane_offset_m: 0 } },
  { name: 'cautious', parameters: { max_speed_mps: 0.6, obstacle_padding_m: 1.0 } },
];

export const MOTION_COMMAND_LIST = MOTION_COMMANDS.map((motion_command, alternative) => ({
  motion_command,
  alternative,
}));

export function robotView(robot: RobotRecord, now: number) {
  const lease = currentLease(robot, now);
  return {
    deviceId: robot.deviceId,
    name: robot.name,
    uuid: robot.uuid,
    healthy: robot.healthy,
    unhealthyMode: robot.unhealthyMode,
    feedback: {
      cortexStatus: robot.cortexStatus,
      navStatus: robot.navStatus,
      vehicleState: robot.vehicleState,
      latitude: robot.latitude,
      longitude: robot.longitude,
      altitude: robot.altitude,
    },
    lease: { holderId: lease?.holderId ?? null, expiresAt: lease ? iso(lease.expiresAt) : null },
    activeSite: robot.activeSite,
    loadedRoute: robot.loadedRoute,
    loadedZoneSet: robot.loadedZoneSet,
    sites: [...robot.sites.keys()],
    routes: [...robot.routes.keys()],
    zoneSets: [...robot.zoneSets.keys()],
    room: robot.room ? { name: robot.room.name, tracks: [...robot.room.tracks.keys()] } : null,
    paused: robot.paused,
    commandQueue: robot.queue.length,
    commandHistory: robot.history.length,
    listFields: robot.listFields,
  };
}
