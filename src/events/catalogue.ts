import { z } from 'zod';
import { powerStateSchema, powerTargetSchema } from '../upstream/schemas/v1.js';
import type { EventData, EventDraft, Severity } from './types.js';

/**
 * The event catalogue: every event type fleetwatch emits, its default severity, the incident it
 * fires or resolves, and a zod schema of its `data`. DESIGN.md's Events table is the source; the
 * types below marked "added" are the resolving or failure counterparts an operator expects.
 *
 * Incidents. A firing event opens an incident and its counterpart closes it; an incident is
 * identified by `(subject, incident key)`, so a router can pair them. Every resolving event carries
 * `durationMs` (how long the condition lasted) and `since` (when it started).
 *
 * Power commands. A pending command ends in exactly one of `vehicle.power.command.completed`
 * (cleared, and `state` equals what it requested), `vehicle.power.command.failed` (cleared, and
 * `state` differs; added) or a new `vehicle.power.command.pending` for the other target
 * (superseded). `vehicle.power.command.stuck` fires once when a command has been pending longer
 * than `stuck_after`; it is resolved by `vehicle.power.command.unstuck` (added), emitted alongside
 * whichever of the three ends it, with `outcome` saying which. So the `stuck` incident has one
 * firing and one resolving type like every other incident, and `completed` keeps one meaning.
 *
 * Subjects. Every event's CloudEvents `subject` is `vehicle/<id>`, `robot/<deviceId>`,
 * `upstream/<name>` (the monitor's own upstream clients) or `receiver/<name>` (a notification
 * receiver of the config, for the monitor's own delivery trouble). Each event's `data` names its
 * entity in `vehicleId`, `deviceId`, `upstream` or `receiver` respectively: in a detector's draft
 * that field is required only for membership events (the list detectors observe the whole fleet,
 * so the draft is the only place the entity is named) and for `monitor.receiver.disabled` (raised
 * on a `fleet` ref by the delivery worker); per-entity detectors leave it out and the caller, which
 * knows what it polled, supplies it — `toFleetEvent` (cloud-event.ts) fills it and sets `subject`.
 * In a published event the field is always present.
 */

export const severitySchema = z.enum(['info', 'warning', 'critical']);

export type SubjectKind = 'vehicle' | 'robot' | 'upstream' | 'receiver';

/** The `data` field naming the event's entity, per subject kind. */
export const SUBJECT_ID_FIELD = {
  vehicle: 'vehicleId',
  robot: 'deviceId',
  upstream: 'upstream',
  receiver: 'receiver',
} as const satisfies Record<SubjectKind, string>;

export type IncidentKey = 'vpn' | 'reachability' | 'stuck' | 'stale' | 'health' | 'upstream';

export interface IncidentRole {
  key: IncidentKey;
  role: 'fires' | 'resolves';
  /** The type that closes (for `fires`) or opened (for `resolves`) the incident. */
  counterpart: FleetEventType;
}

/** Every event type, by a name usable in code. */
export const EVENT = {
  vehicleDiscovered: 'vehicle.discovered',
  vehicleRemoved: 'vehicle.removed',
  vpnDisconnected: 'vehicle.vpn.disconnected',
  vpnConnected: 'vehicle.vpn.connected',
  ipChanged: 'vehicle.ip.changed',
  powerChanged: 'vehicle.power.changed',
  powerCommandPending: 'vehicle.power.command.pending',
  powerCommandCompleted: 'vehicle.power.command.completed',
  powerCommandFailed: 'vehicle.power.command.failed',
  powerCommandStuck: 'vehicle.power.command.stuck',
  powerCommandUnstuck: 'vehicle.power.command.unstuck',
  powerReportStale: 'vehicle.power.report.stale',
  powerReportFresh: 'vehicle.power.report.fresh',
  powerUnsupported: 'vehicle.power.unsupported',
  vehicleUnreachable: 'vehicle.unreachable',
  vehicleReachable: 'vehicle.reachable',
  robotDiscovered: 'robot.discovered',
  robotRemoved: 'robot.removed',
  robotHealthDown: 'robot.health.down',
  robotHealthUp: 'robot.health.up',
  robotAutonomyChanged: 'robot.autonomy.changed',
  robotNavigationChanged: 'robot.navigation.changed',
  robotStateChanged: 'robot.state.changed',
  robotLeaseChanged: 'robot.lease.changed',
  robotConfigChanged: 'robot.config.changed',
  upstreamDegraded: 'monitor.upstream.degraded',
  upstreamRecovered: 'monitor.upstream.recovered',
  receiverDisabled: 'monitor.receiver.disabled',
} as const;

// --- building blocks ----------------------------------------------------------------------------

const entityId = z.string().min(1);
const isoTime = z.iso.datetime({ offset: true });
const durationMs = z.number().int().nonnegative().describe('How long the condition lasted, in milliseconds.');
const since = isoTime.describe('Observation time at which the condition was first seen.');
const consecutive = z.number().int().positive();
/** Reported timestamps are passed through as received (the upstream parser checked them). */
const reportedTime = z.string();
const errorRef = z
  .strictObject({ code: z.string(), status: z.number().int().optional() })
  .describe('The observation error, without its message.');
/** `status` is the numeric code when the robot reported one, `text` its human word. */
const statusPair = z.strictObject({ status: z.number().int().nullable(), text: z.string().nullable() });
const configPart = z.enum(['activeSite', 'loadedRoute', 'loadedZoneSet']);
export const configDiffSchema = z.strictObject({
  added: z.array(z.string()),
  removed: z.array(z.string()),
  changed: z.array(z.string()),
  /** True when a list was cut short. */
  truncated: z.boolean(),
});
const upstreamWindow = z.strictObject({
  requests: z.number().int().nonnegative(),
  authFailures: z.number().int().nonnegative(),
  serverErrors: z.number().int().nonnegative(),
  timeouts: z.number().int().nonnegative(),
});

const onVehicle = { severity: severitySchema, vehicleId: entityId.optional() };
const onRobot = { severity: severitySchema, deviceId: entityId.optional() };
const onUpstream = { severity: severitySchema, upstream: entityId.optional() };
const onReceiver = { severity: severitySchema, receiver: entityId.optional() };

interface Meta<K extends SubjectKind> {
  subject: K;
  severity: Severity;
  incident: IncidentRole | null;
  description: string;
}

function define<K extends SubjectKind, S extends z.ZodRawShape>(meta: Meta<K>, shape: S) {
  return { ...meta, data: z.strictObject(shape) };
}

const fires = (key: IncidentKey, counterpart: FleetEventType): IncidentRole => ({
  key,
  role: 'fires',
  counterpart,
});
const resolves = (key: IncidentKey, counterpart: FleetEventType): IncidentRole => ({
  key,
  role: 'resolves',
  counterpart,
});

// --- the catalogue ------------------------------------------------------------------------------

const DEFINITIONS = {
  [EVENT.vehicleDiscovered]: define(
    {
      subject: 'vehicle',
      severity: 'info',
      incident: null,
      description: 'A vehicle appeared in the list the client may access (not on the first list).',
    },
    { severity: severitySchema, vehicleId: entityId },
  ),
  [EVENT.vehicleRemoved]: define(
    {
      subject: 'vehicle',
      severity: 'warning',
      incident: null,
      description: 'A vehicle was missing from `remove_after` consecutive vehicle lists.',
    },
    {
      severity: severitySchema,
      vehicleId: entityId,
      missingSince: since,
      missedLists: consecutive,
    },
  ),
  [EVENT.vpnDisconnected]: define(
    {
      subject: 'vehicle',
      severity: 'warning',
      incident: fires('vpn', EVENT.vpnConnected),
      description: '`vpnConnected` was false for `failure_threshold` consecutive vehicle lists.',
    },
    {
      ...onVehicle,
      previous: z.literal('connected').nullable().describe('null when the vehicle was never seen connected.'),
      current: z.literal('disconnected'),
      since,
      consecutive,
    },
  ),
  [EVENT.vpnConnected]: define(
    {
      subject: 'vehicle',
      severity: 'info',
      incident: resolves('vpn', EVENT.vpnDisconnected),
      description:
        'The vehicle reconnected (`success_threshold` consecutive lists); carries the outage duration.',
    },
    {
      ...onVehicle,
      previous: z.literal('disconnected'),
      current: z.literal('connected'),
      since,
      durationMs,
    },
  ),
  [EVENT.ipChanged]: define(
    {
      subject: 'vehicle',
      severity: 'info',
      incident: null,
      description:
        "The vehicle's VPN `ipAddress` changed, appeared (previous null) or disappeared (current null).",
    },
    { ...onVehicle, previous: z.string().nullable(), current: z.string().nullable() },
  ),
  [EVENT.powerChanged]: define(
    {
      subject: 'vehicle',
      severity: 'info',
      incident: null,
      description: 'The reported power `state` changed.',
    },
    {
      ...onVehicle,
      previous: powerStateSchema,
      current: powerStateSchema,
      updatedAt: reportedTime.nullable(),
    },
  ),
  [EVENT.powerCommandPending]: define(
    {
      subject: 'vehicle',
      severity: 'info',
      incident: null,
      description:
        'A power command appeared, or the pending one changed to the other target (previous is then that target).',
    },
    {
      ...onVehicle,
      requested: powerTargetSchema,
      previous: powerTargetSchema.nullable(),
      current: powerTargetSchema,
      state: powerStateSchema,
      pendingSince: since,
    },
  ),
  [EVENT.powerCommandCompleted]: define(
    {
      subject: 'vehicle',
      severity: 'info',
      incident: null,
      description:
        'The pending command cleared and `state` equals what it requested; durationMs is how long it took.',
    },
    {
      ...onVehicle,
      requested: powerTargetSchema,
      current: powerStateSchema,
      pendingSince: since,
      durationMs,
    },
  ),
  [EVENT.powerCommandFailed]: define(
    {
      subject: 'vehicle',
      severity: 'warning',
      incident: null,
      description: 'The pending command cleared but `state` is not what it requested.',
    },
    {
      ...onVehicle,
      requested: powerTargetSchema,
      current: powerStateSchema,
      pendingSince: since,
      durationMs,
    },
  ),
  [EVENT.powerCommandStuck]: define(
    {
      subject: 'vehicle',
      severity: 'warning',
      incident: fires('stuck', EVENT.powerCommandUnstuck),
      description: 'A power command has been pending longer than `stuck_after` (fires once per command).',
    },
    {
      ...onVehicle,
      requested: powerTargetSchema,
      current: powerStateSchema,
      pendingSince: since,
      pendingForMs: z.number().int().nonnegative(),
      stuckAfterMs: z.number().int().nonnegative(),
    },
  ),
  [EVENT.powerCommandUnstuck]: define(
    {
      subject: 'vehicle',
      severity: 'info',
      incident: resolves('stuck', EVENT.powerCommandStuck),
      description:
        'A stuck command ended: completed, failed, or superseded by a command for the other target; durationMs is its whole pending time.',
    },
    {
      ...onVehicle,
      requested: powerTargetSchema,
      current: powerStateSchema,
      outcome: z.enum(['completed', 'failed', 'superseded']),
      since: since.describe('When the command was first seen pending.'),
      durationMs,
    },
  ),
  [EVENT.powerReportStale]: define(
    {
      subject: 'vehicle',
      severity: 'warning',
      incident: fires('stale', EVENT.powerReportFresh),
      description: '`updatedAt` is null (never reported) or older than `stale_after`.',
    },
    {
      ...onVehicle,
      updatedAt: reportedTime.nullable(),
      ageMs: z.number().int().nonnegative().nullable().describe('null when updatedAt is null or unreadable.'),
      staleAfterMs: z.number().int().nonnegative(),
      current: powerStateSchema,
    },
  ),
  [EVENT.powerReportFresh]: define(
    {
      subject: 'vehicle',
      severity: 'info',
      incident: resolves('stale', EVENT.powerReportStale),
      description: 'The power report is fresh again after being stale.',
    },
    { ...onVehicle, updatedAt: reportedTime, current: powerStateSchema, since, durationMs },
  ),
  [EVENT.powerUnsupported]: define(
    {
      subject: 'vehicle',
      severity: 'info',
      incident: null,
      description:
        'Power status, which used to answer, now answers 404: the vehicle no longer supports power control here (polled rarely from now on).',
    },
    {
      ...onVehicle,
      previous: z.literal('supported'),
      current: z.literal('unsupported'),
      error: errorRef,
    },
  ),
  [EVENT.vehicleUnreachable]: define(
    {
      subject: 'vehicle',
      severity: 'warning',
      incident: fires('reachability', EVENT.vehicleReachable),
      description: 'Power status failed with a gateway error or time-out `failure_threshold` times in a row.',
    },
    {
      ...onVehicle,
      previous: z.literal('reachable').nullable().describe('null when the vehicle never answered.'),
      current: z.literal('unreachable'),
      since,
      consecutiveFailures: consecutive,
      lastError: errorRef,
    },
  ),
  [EVENT.vehicleReachable]: define(
    {
      subject: 'vehicle',
      severity: 'info',
      incident: resolves('reachability', EVENT.vehicleUnreachable),
      description:
        'Power status answers again (`success_threshold` times in a row); carries the outage duration.',
    },
    {
      ...onVehicle,
      previous: z.literal('unreachable'),
      current: z.literal('reachable'),
      since,
      durationMs,
    },
  ),
  [EVENT.robotDiscovered]: define(
    {
      subject: 'robot',
      severity: 'info',
      incident: null,
      description: 'A robot appeared in the device list (not on the first list).',
    },
    { severity: severitySchema, deviceId: entityId },
  ),
  [EVENT.robotRemoved]: define(
    {
      subject: 'robot',
      severity: 'warning',
      incident: null,
      description: 'A robot was missing from `remove_after` consecutive device lists.',
    },
    {
      severity: severitySchema,
      deviceId: entityId,
      missingSince: since,
      missedLists: consecutive,
    },
  ),
  [EVENT.robotHealthDown]: define(
    {
      subject: 'robot',
      severity: 'critical',
      incident: fires('health', EVENT.robotHealthUp),
      description: '`failure_threshold` consecutive failed health checks.',
    },
    {
      ...onRobot,
      previous: z.literal('up').nullable().describe('null when the robot never passed a check.'),
      current: z.literal('down'),
      since,
      consecutiveFailures: consecutive,
      lastError: errorRef,
    },
  ),
  [EVENT.robotHealthUp]: define(
    {
      subject: 'robot',
      severity: 'info',
      incident: resolves('health', EVENT.robotHealthDown),
      description:
        '`success_threshold` consecutive good health checks after being down; carries the duration.',
    },
    { ...onRobot, previous: z.literal('down'), current: z.literal('up'), since, durationMs },
  ),
  [EVENT.robotAutonomyChanged]: define(
    {
      subject: 'robot',
      severity: 'info',
      incident: null,
      description: '`cortex_status` (autonomy state) changed.',
    },
    { ...onRobot, previous: statusPair, current: statusPair },
  ),
  [EVENT.robotNavigationChanged]: define(
    {
      subject: 'robot',
      severity: 'info',
      incident: null,
      description: 'The navigation goal status changed; severity warning when it is aborted (6).',
    },
    { ...onRobot, previous: statusPair, current: statusPair },
  ),
  [EVENT.robotStateChanged]: define(
    {
      subject: 'robot',
      severity: 'info',
      incident: null,
      description: '`vehicle_feedback.state` changed.',
    },
    { ...onRobot, previous: z.string(), current: z.string() },
  ),
  [EVENT.robotLeaseChanged]: define(
    {
      subject: 'robot',
      severity: 'info',
      incident: null,
      description: 'The teleoperation lease holder appeared, changed or went (null = nobody holds it).',
    },
    {
      ...onRobot,
      previous: z.string().nullable(),
      current: z.string().nullable(),
      expiresAt: z.string().nullable(),
    },
  ),
  [EVENT.robotConfigChanged]: define(
    {
      subject: 'robot',
      severity: 'info',
      incident: null,
      description:
        'The active site, loaded route or loaded zone set changed (one event per part); previous/current are stable hashes.',
    },
    {
      ...onRobot,
      part: configPart,
      previous: z.string(),
      current: z.string(),
      diff: configDiffSchema,
      summary: z.string().max(240),
    },
  ),
  [EVENT.upstreamDegraded]: define(
    {
      subject: 'upstream',
      severity: 'critical',
      incident: fires('upstream', EVENT.upstreamRecovered),
      description:
        'An upstream (token issuer, fleet API, robot gateway) failed: error ratio or 401/403 count over the limit for `failure_threshold` windows.',
    },
    {
      ...onUpstream,
      previous: z.literal('healthy').nullable(),
      current: z.literal('degraded'),
      since,
      consecutiveWindows: consecutive,
      reasons: z.array(z.enum(['error_ratio', 'auth_failures'])).min(1),
      window: upstreamWindow,
      errorRatio: z.number().min(0),
    },
  ),
  [EVENT.upstreamRecovered]: define(
    {
      subject: 'upstream',
      severity: 'info',
      incident: resolves('upstream', EVENT.upstreamDegraded),
      description: 'The upstream is healthy again for `success_threshold` windows; carries the duration.',
    },
    {
      ...onUpstream,
      previous: z.literal('degraded'),
      current: z.literal('healthy'),
      since,
      durationMs,
    },
  ),
  [EVENT.receiverDisabled]: define(
    {
      subject: 'receiver',
      severity: 'critical',
      incident: null,
      description:
        'A notification receiver answered that it is gone for good (webhook 410; Slack `channel_is_archived` or a revoked webhook): it is disabled, and its notifications go to the dead letters until `fleetwatch receiver enable`.',
    },
    {
      ...onReceiver,
      kind: z.string().min(1).describe('The receiver kind: `slack`, `webhook`.'),
      reason: z.string().describe("The receiver's answer, without secrets."),
    },
  ),
};

export type FleetEventType = (typeof EVENT)[keyof typeof EVENT];

/** The `data` a detector puts in a draft of `T`. */
export type DraftData<T extends FleetEventType> = z.output<(typeof DEFINITIONS)[T]['data']>;

export interface CatalogueEntry {
  type: FleetEventType;
  subject: SubjectKind;
  severity: Severity;
  incident: IncidentRole | null;
  description: string;
}

/** Every event type, in catalogue order. */
export const FLEET_EVENT_TYPES: readonly FleetEventType[] = Object.values(EVENT);

export function isFleetEventType(type: unknown): type is FleetEventType {
  return typeof type === 'string' && Object.hasOwn(DEFINITIONS, type);
}

export function catalogueEntry(type: FleetEventType): CatalogueEntry {
  const { subject, severity, incident, description } = DEFINITIONS[type];
  return { type, subject, severity, incident, description };
}

export const CATALOGUE: readonly CatalogueEntry[] = FLEET_EVENT_TYPES.map(catalogueEntry);

/** Schema of a detector's draft data (the entity field optional except on membership events). */
export function draftDataSchema(type: FleetEventType): z.ZodObject {
  return DEFINITIONS[type].data;
}

const eventDataSchemas = new Map<FleetEventType, z.ZodObject>();

/** Schema of a published event's data: the entity field (`vehicleId`, `deviceId`, `upstream`) is required. */
export function eventDataSchema(type: FleetEventType): z.ZodObject {
  let schema = eventDataSchemas.get(type);
  if (!schema) {
    const definition = DEFINITIONS[type];
    const field = SUBJECT_ID_FIELD[definition.subject];
    schema = (definition.data as z.ZodObject).extend({ [field]: entityId });
    eventDataSchemas.set(type, schema);
  }
  return schema;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function buildEventSchema(type: FleetEventType) {
  const definition = DEFINITIONS[type];
  const field = SUBJECT_ID_FIELD[definition.subject];
  return z
    .strictObject({
      specversion: z.literal('1.0'),
      id: z.string().min(1).describe('Stable: a retried hand-off carries the same id.'),
      source: z.string().regex(/^fleetwatch\/.+$/),
      type: z.literal(type),
      // Any id: upstream ids are opaque strings (a newline included).
      subject: z.string().regex(new RegExp(`^${escapeRegExp(definition.subject)}/[\\s\\S]+$`)),
      time: isoTime.describe('Observation time.'),
      datacontenttype: z.literal('application/json'),
      data: eventDataSchema(type),
    })
    .superRefine((event, ctx) => {
      const id = (event.data as Record<string, unknown>)[field];
      if (event.subject !== `${definition.subject}/${String(id)}`) {
        ctx.addIssue({
          code: 'custom',
          path: ['subject'],
          message: `subject must be ${definition.subject}/<data.${field}>`,
        });
      }
    })
    .meta({ title: type, description: definition.description });
}

type FleetEventSchema = ReturnType<typeof buildEventSchema>;
const eventSchemas = new Map<FleetEventType, FleetEventSchema>();

/** The full CloudEvents 1.0 object of one type, as delivered to webhooks and the event log. */
export function fleetEventSchema(type: FleetEventType): FleetEventSchema {
  let schema = eventSchemas.get(type);
  if (!schema) {
    schema = buildEventSchema(type);
    eventSchemas.set(type, schema);
  }
  return schema;
}

/** Any fleetwatch event: the per-type schemas, discriminated on `type`. */
export const anyFleetEventSchema = z.discriminatedUnion(
  'type',
  FLEET_EVENT_TYPES.map((type) => fleetEventSchema(type)) as [FleetEventSchema, ...FleetEventSchema[]],
);

/** Leaves out keys whose value is undefined, so drafts stay plain JSON. */
function definedOnly(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([, value]) => value !== undefined));
}

/** A typed draft; `severity` defaults to the catalogue's. */
export function draft<T extends FleetEventType>(
  type: T,
  data: Omit<DraftData<T>, 'severity'> & { severity?: Severity },
): EventDraft {
  const severity = data.severity ?? DEFINITIONS[type].severity;
  return { type, data: { ...definedOnly(data), severity } as EventData };
}

/** Checks a draft against the catalogue: known type, data matching its schema. */
export function validateDraft(candidate: EventDraft): { ok: true } | { ok: false; problems: string[] } {
  if (!isFleetEventType(candidate.type))
    return { ok: false, problems: [`unknown event type ${candidate.type}`] };
  const result = draftDataSchema(candidate.type).safeParse(candidate.data);
  if (result.success) return { ok: true };
  return {
    ok: false,
    problems: result.error.issues.map(
      (issue) => `${candidate.type}: data.${issue.path.join('.')}: ${issue.message}`,
    ),
  };
}
