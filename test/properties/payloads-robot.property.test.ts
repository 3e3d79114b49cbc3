import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { afterAll, describe } from 'vitest';
import { normalizeFeedback } from '../../src/events/detectors/robot-feedback.js';
import type {
  LeaseStatus,
  PlatformFeedback,
  RobotEnvelope,
  RobotHealth,
  RobotList,
  RobotUuidResponse,
} from '../../src/upstream/schemas/robot.js';
import { cannedUpstream } from './canned-upstream.js';
import { type Endpoint, endpointProperties } from './endpoint-properties.js';
import {
  documentBody,
  healthBody,
  ID_KEYS,
  platformFeedbackBody,
  robotListBody,
  teleopStatusBody,
  uuidBody,
} from './payloads.js';

/**
 * The robot-level parse path through the real client. The /v2 parser is lenient (unknown fields
 * kept, null read as missing), so what it returns must say what the body said about the fields
 * the pollers use — device ids, the lease holder, the watched feedback, an envelope's data — and
 * a body without them must not parse (reading it as "nobody holds the lease" or "status gone"
 * would invent a change).
 */

const upstream = cannedUpstream();
afterAll(() => upstream.close());

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** `record[key]` when it is an own field, else undefined. */
const own = (record: unknown, key: string): unknown =>
  isRecord(record) && Object.hasOwn(record, key) ? record[key] : undefined;

/** A documented optional field as the client returns it: null reads as absent. */
const optionalField = (record: unknown, key: string): unknown => own(record, key) ?? undefined;

function differ(name: string, actual: unknown, expected: unknown): string[] {
  return isDeepStrictEqual(actual, expected)
    ? []
    : [`${name}: got ${JSON.stringify(actual)}, the body said ${JSON.stringify(expected)}`];
}

/** `status` and `message` of an envelope: what the body said, strings or absent. */
function envelopeProblems(value: RobotEnvelope, sent: unknown): string[] {
  if (!isRecord(value)) return ['not an object'];
  return [
    ...differ('status', value.status, optionalField(sent, 'status')),
    ...differ('message', value.message, optionalField(sent, 'message')),
  ];
}

/** The device ids a robot list names, by the documented shapes and id fields. */
function listedIds(sent: unknown): string[] | undefined {
  const list = Array.isArray(sent)
    ? sent
    : [own(sent, 'data'), own(own(sent, 'data'), 'robots'), own(sent, 'robots')].find(Array.isArray);
  return list?.map((entry: unknown) => {
    if (typeof entry === 'string') return entry;
    const id = ID_KEYS.map((key) => own(entry, key)).find(
      (candidate) => (typeof candidate === 'string' && candidate !== '') || Number.isFinite(candidate),
    );
    return id === undefined ? '' : String(id);
  });
}

/**
 * Element by element: every entry that names a device is a robot, in order; every entry that names
 * none is rejected by itself (never the whole list).
 */
const listRobots: Endpoint<RobotList> = {
  name: 'GET /api/robots',
  call: (u) => u.robots.listRobots(),
  status: 200,
  valid: robotListBody,
  problems: (value, sent) => {
    const ids = listedIds(sent);
    const rejected = value.rejected.map((element) => element.index);
    return [
      ...differ(
        'device ids',
        value.items.map((robot) => robot.deviceId),
        ids?.filter((id) => id !== ''),
      ),
      ...differ(
        'rejected entries',
        rejected,
        ids?.flatMap((id, index) => (id === '' ? [index] : [])),
      ),
      ...value.items.flatMap((robot, index) => (robot.deviceId === '' ? [`[${index}].deviceId empty`] : [])),
    ];
  },
};

const health: Endpoint<RobotHealth> = {
  name: 'GET /v2/health',
  call: (u) => u.robots.health('dev/1'),
  status: 200,
  valid: healthBody,
  problems: envelopeProblems,
};

const uuid: Endpoint<RobotUuidResponse> = {
  name: 'GET /v2/uuid',
  call: (u) => u.robots.uuid('dev/1'),
  status: 200,
  valid: uuidBody,
  problems: (value, sent) => [
    ...envelopeProblems(value, sent),
    ...differ('data.uuid', value.data?.uuid, optionalField(own(sent, 'data'), 'uuid')),
  ],
};

/** The feedback fields the detector watches, as the robot reported them (the normalizer's shape). */
function watched(feedback: unknown): Record<string, unknown> {
  const cortex = own(feedback, 'cortex_status');
  const goal = own(own(feedback, 'navigation_feedback'), 'nav2_goal_status');
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value : undefined);
  const fields = {
    cortexStatus: optionalField(cortex, 'status'),
    cortexText: text(own(cortex, 'status_text')),
    navStatus: optionalField(goal, 'status'),
    navText: text(own(goal, 'status_text')),
    vehicleState: text(own(own(feedback, 'vehicle_feedback'), 'state')),
  };
  return Object.fromEntries(Object.entries(fields).filter(([, field]) => field !== undefined));
}

const platformFeedback: Endpoint<PlatformFeedback> = {
  name: 'GET /v2/platform-feedback',
  call: (u) => u.robots.platformFeedback('dev/1'),
  status: 200,
  valid: platformFeedbackBody,
  problems: (value, sent) => {
    const feedback = own(own(sent, 'data'), 'platform_feedback');
    if (!isRecord(feedback)) return ['parsed a body without data.platform_feedback'];
    const normalized = normalizeFeedback(value);
    const problems = differ('watched fields', normalized, watched(feedback));
    for (const key of ['cortexStatus', 'navStatus'] as const) {
      if (normalized[key] !== undefined && !Number.isInteger(normalized[key]))
        problems.push(`${key} not an integer`);
    }
    return problems;
  },
};

const teleopStatus: Endpoint<LeaseStatus> = {
  name: 'GET /v2/teleop-control/status',
  call: (u) => u.robots.teleopStatus('dev/1'),
  status: 200,
  valid: teleopStatusBody,
  problems: (value, sent) => {
    const data = own(sent, 'data');
    if (!isRecord(data)) return ['parsed a body without lease data'];
    return [
      ...differ('holderId', value.holderId, optionalField(data, 'holder_id')),
      ...differ('expiresAt', value.expiresAt, optionalField(data, 'expires_at')),
      ...differ('raw', value.raw, sent),
    ];
  },
};

/** An envelope's data, or a bare JSON value kept as the data. */
const envelopeDataProblems = (value: RobotEnvelope, sent: unknown) => [
  ...envelopeProblems(value, sent),
  ...differ('data', value.data, isRecord(sent) ? own(sent, 'data') : sent),
];

const activeSite: Endpoint<RobotEnvelope> = {
  name: 'GET /v2/active_site',
  call: (u) => u.robots.activeSite('dev/1'),
  status: 200,
  valid: documentBody,
  problems: envelopeDataProblems,
};

const sendMotionCommand: Endpoint<RobotEnvelope> = {
  name: 'POST /v2/motion-command',
  call: (u) => u.robots.sendMotionCommand('dev/1', { motion_command: 0, mode: 0 }),
  status: 201,
  informationalBody: true,
  valid: fc.constant({ status: 'success', message: 'ok', data: { received: true } }),
  // A body that is not JSON is kept as the message (or nothing, when empty).
  problems: (value, sent) =>
    sent === undefined
      ? typeof value.message === 'string' || Object.keys(value).length === 0
        ? []
        : ['non-JSON body not kept as the message']
      : envelopeDataProblems(value, sent),
};

describe.each([
  listRobots,
  health,
  uuid,
  platformFeedback,
  teleopStatus,
  activeSite,
  sendMotionCommand,
] as Endpoint[])('$name', (endpoint) => {
  endpointProperties(upstream, endpoint);
});
