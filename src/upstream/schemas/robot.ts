import { z } from 'zod';
import { type ListReading, readElements } from '../list-elements.js';

/**
 * Robot-level (`/v2`) payloads, parsed leniently (see `robot-shapes.md`): every object keeps its
 * unknown fields, every known field is optional and `null` reads as missing. A body that is not
 * JSON, is not an object where one is expected, or has a known field of the wrong type fails the
 * parse (→ `InvalidPayloadError`, an observation error rather than a state change).
 */

/** An optional field that also accepts `null` (read as `undefined`). */
const optional = <T extends z.ZodType>(schema: T) =>
  schema
    .nullish()
    .transform((value) => value ?? undefined)
    .optional();

/** The common robot envelope `{status, message, data}`, everything optional, unknown fields kept. */
export const robotEnvelopeSchema = z.looseObject({
  status: optional(z.string()),
  message: optional(z.string()),
  data: z.unknown().optional(),
});
export type RobotEnvelope = z.output<typeof robotEnvelopeSchema>;

/** Error bodies: `{status: "error", message, error: {details}}` or 422 `{detail: [{loc, msg, type}]}`. */
export const robotErrorSchema = z.looseObject({
  status: optional(z.string()),
  message: optional(z.string()),
  error: optional(z.looseObject({ details: optional(z.string()) })),
  detail: optional(
    z.union([
      z.string(),
      z.array(
        z.looseObject({
          loc: optional(z.array(z.union([z.string(), z.number()]))),
          msg: optional(z.string()),
          type: optional(z.string()),
        }),
      ),
    ]),
  ),
});
export type RobotErrorBody = z.output<typeof robotErrorSchema>;

// --- GET /v2/health, GET /v2/uuid -------------------------------------------------------------

/** `{status}` from `/v2/health` (some robots add `message`, `data.uuid`): an envelope. */
export const robotHealthSchema = robotEnvelopeSchema.describe('A 200 with a parseable body means healthy');
export type RobotHealth = z.output<typeof robotHealthSchema>;

export const robotUuidResponseSchema = robotEnvelopeSchema.extend({
  data: optional(z.looseObject({ uuid: optional(z.string()) })),
});
export type RobotUuidResponse = z.output<typeof robotUuidResponseSchema>;

// --- GET /v2/platform-feedback ----------------------------------------------------------------

export const rosTimeSchema = z.looseObject({
  sec: optional(z.number()),
  nanosec: optional(z.number()),
});
export type RosTime = z.output<typeof rosTimeSchema>;

/** Autonomy state; `status` 0..4, `status_text` is the human word. */
export const cortexStatusSchema = z.looseObject({
  status: optional(z.number().int()),
  status_text: optional(z.string()),
  description: optional(z.string()),
});
export type CortexStatus = z.output<typeof cortexStatusSchema>;

/** ROS 2 action goal status: 0 unknown, 1 accepted, 2 executing, 3 canceling, 4 succeeded, 5 canceled, 6 aborted. */
export const NAV_GOAL_STATUS = [
  'unknown',
  'accepted',
  'executing',
  'canceling',
  'succeeded',
  'canceled',
  'aborted',
] as const;

export const navGoalStatusSchema = z.looseObject({
  goal_info: z.unknown().optional(),
  status: optional(z.number().int()),
  status_text: optional(z.string()),
  text: optional(z.string()),
});
export type NavGoalStatus = z.output<typeof navGoalStatusSchema>;

export const navigationFeedbackSchema = z.looseObject({
  nav2_goal_status: optional(navGoalStatusSchema),
  total_distance_remaining: optional(z.number()),
  current_pose_index: optional(z.number().int()),
  number_of_poses_remaining: optional(z.number().int()),
  navigation_time: optional(rosTimeSchema),
  estimated_time_remaining: optional(rosTimeSchema),
  target_pose: z.unknown().optional(),
  final_pose: z.unknown().optional(),
});
export type NavigationFeedback = z.output<typeof navigationFeedbackSchema>;

export const vehicleFeedbackSchema = z.looseObject({
  state: optional(z.string()),
  description: optional(z.string()),
  data: optional(z.array(z.unknown())),
});
export type VehicleFeedback = z.output<typeof vehicleFeedbackSchema>;

export const currentPoseSchema = z.looseObject({
  header: optional(
    z.looseObject({
      stamp: optional(rosTimeSchema),
      frame_id: optional(z.string()),
    }),
  ),
  pose: optional(
    z.looseObject({
      position: optional(
        z.looseObject({
          latitude: optional(z.number()),
          longitude: optional(z.number()),
          altitude: optional(z.number()),
        }),
      ),
      orientation: optional(
        z.looseObject({
          x: optional(z.number()),
          y: optional(z.number()),
          z: optional(z.number()),
          w: optional(z.number()),
        }),
      ),
    }),
  ),
});
export type CurrentPose = z.output<typeof currentPoseSchema>;

export const platformFeedbackSchema = z.looseObject({
  timestamp_utc: optional(rosTimeSchema),
  cortex_status: optional(cortexStatusSchema),
  navigation_feedback: optional(navigationFeedbackSchema),
  vehicle_feedback: optional(vehicleFeedbackSchema),
  current_pose: optional(currentPoseSchema),
  current_command_index: optional(z.number().int()),
  number_commands_remaining: optional(z.number().int()),
});
export type PlatformFeedback = z.output<typeof platformFeedbackSchema>;

/**
 * `{status, message, data: {platform_feedback}}`. `data.platform_feedback` itself is required:
 * without it there is nothing to observe, and reading it as "every field gone" would invent a
 * state change.
 */
export const platformFeedbackResponseSchema = robotEnvelopeSchema.extend({
  data: z.looseObject({ platform_feedback: platformFeedbackSchema }),
});
export type PlatformFeedbackResponse = z.output<typeof platformFeedbackResponseSchema>;

/** What `platformFeedback` returns: `data.platform_feedback`. */
export function platformFeedbackOf(body: PlatformFeedbackResponse): PlatformFeedback {
  return body.data.platform_feedback;
}

// --- GET /v2/teleop-control/status ------------------------------------------------------------

/** `data` of the lease status; no `holder_id` means nobody holds the lease. */
export const leaseDataSchema = z.looseObject({
  holder_id: optional(z.string()),
  expires_at: optional(z.string()),
});
export type LeaseData = z.output<typeof leaseDataSchema>;

/** `data` is required: a status without it says nothing about the lease. */
export const teleopStatusResponseSchema = robotEnvelopeSchema.extend({
  data: leaseDataSchema,
});
export type TeleopStatusResponse = z.output<typeof teleopStatusResponseSchema>;

export interface LeaseStatus {
  holderId?: string;
  expiresAt?: string;
  /** The whole response body as received. */
  raw: unknown;
}

/** What `teleopStatus` returns: the holder and expiry, and the body as received. */
export function leaseStatusOf(body: TeleopStatusResponse, raw: unknown): LeaseStatus {
  const lease: LeaseStatus = { raw };
  if (body.data.holder_id !== undefined) lease.holderId = body.data.holder_id;
  if (body.data.expires_at !== undefined) lease.expiresAt = body.data.expires_at;
  return lease;
}

// --- Request bodies robot-shapes.md gives -------------------------------------------------------

/**
 * `POST /v2/motion-command`: `motion_command` 0 STOP (cancels every queued command), 1 PAUSE,
 * 2 RESUME; `mode` 0 ADD, 1 PREEMPT (ADD when left out).
 */
export const motionCommandRequestSchema = z.looseObject({
  motion_command: z.number().int().min(0).max(2),
  mode: z.number().int().min(0).max(1).default(0),
});
export type MotionCommandRequest = z.output<typeof motionCommandRequestSchema>;

/** `POST /v2/teleop-control/transfer`: the user the lease goes to. */
export const leaseTransferRequestSchema = z.looseObject({ to: z.string().min(1) });

// --- GET /api/robots --------------------------------------------------------------------------

export interface RobotSummary {
  deviceId: string;
  name?: string;
  /** The list entry as received. */
  raw: unknown;
}

function idOf(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

const ID_VALUE = { anyOf: [{ type: 'string', minLength: 1 }, { type: 'number' }] };
const objectWithId = (key: string) => ({
  type: 'object',
  required: [key],
  properties: { [key]: ID_VALUE },
  additionalProperties: true,
});
/** The entry's shape in JSON Schema terms, for the OpenAPI description (the transform has none of its own). */
const ROBOT_ENTRY_JSON_SCHEMA = {
  description: 'A device id, or an object naming it as device_id, deviceId or id (and perhaps its name)',
  anyOf: [
    { type: 'string', minLength: 1 },
    objectWithId('device_id'),
    objectWithId('deviceId'),
    objectWithId('id'),
  ],
};

/** The device id of a robot list element, when it names one readably. */
export function robotIdOf(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry !== '' ? entry : undefined;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return undefined;
  const record = entry as Record<string, unknown>;
  return idOf(record.device_id) ?? idOf(record.deviceId) ?? idOf(record.id);
}

/** One entry of the robot list: a device id string, or an object naming it `device_id`, `deviceId` or `id`. */
export const robotEntrySchema = z
  .unknown()
  .transform((entry, ctx): RobotSummary => {
    if (typeof entry === 'string' && entry !== '') return { deviceId: entry, raw: entry };
    if (typeof entry === 'object' && entry !== null && !Array.isArray(entry)) {
      const record = entry as Record<string, unknown>;
      const deviceId = robotIdOf(record);
      if (deviceId !== undefined) {
        const summary: RobotSummary = { deviceId, raw: entry };
        if (typeof record.name === 'string') summary.name = record.name;
        return summary;
      }
      ctx.addIssue({ code: 'custom', message: 'robot entry has no device_id, deviceId or id' });
      return z.NEVER;
    }
    ctx.addIssue({ code: 'custom', message: 'robot entry must be a device id or an object' });
    return z.NEVER;
  })
  .meta(ROBOT_ENTRY_JSON_SCHEMA);

/** The list's elements as the envelope sees them: checked one by one afterwards (`robotListOf`). */
const robotEntries = z.array(z.unknown().meta(ROBOT_ENTRY_JSON_SCHEMA));

/**
 * The robot list's shape is unspecified; accepted: `["id", ...]`, `[{device_id|deviceId|id, name?}, ...]`,
 * `{data: [...]}`, `{data: {robots: [...]}}` or `{robots: [...]}`. Any other shape fails as a
 * whole; the elements of an accepted one are checked one by one (`robotListOf`).
 */
export const robotListSchema = z.union(
  [
    robotEntries,
    z.looseObject({ data: robotEntries }).transform((body) => body.data),
    z.looseObject({ data: z.looseObject({ robots: robotEntries }) }).transform((body) => body.data.robots),
    z.looseObject({ robots: robotEntries }).transform((body) => body.robots),
  ],
  { error: (issue) => `${ROBOT_LIST_SHAPES}; got ${preview(issue.input)}` },
);

/** What the robot list may look like, for the error when it looks like none of it. */
export const ROBOT_LIST_SHAPES =
  'expected a list of robots: [...], {"data": [...]}, {"data": {"robots": [...]}} or {"robots": [...]}';

/** How much of an unexpected answer an error quotes: enough to recognise it, never a whole body. */
export const PREVIEW_CHARS = 80;

/** The first characters of `value` as JSON, cut at `PREVIEW_CHARS`. */
function preview(value: unknown): string {
  const text = value === undefined ? 'nothing' : JSON.stringify(value);
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
}

/** What `listRobots` returns: the robots the list names, and the elements that name none. */
export type RobotList = ListReading<RobotSummary>;

/** The robot list, element by element (see list-elements.ts). */
export function robotListOf(entries: readonly unknown[]): RobotList {
  return readElements(entries, {
    operation: 'robot.list_robots',
    schema: robotEntrySchema,
    noun: 'robot',
    idOf: robotIdOf,
  });
}
