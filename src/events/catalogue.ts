import { z } from 'zod';
import { powerStateSchema, powerTargetSchema } from '../upstream/schemas/v1.js';
import type { EventData, EventDraft, Severity } from './types.js';

/**
 * The event catalogue: every event type fleetwatch emits, its default severity, the incident it
 * fires or resolves, and a zod schema of its `data`. ARCHITECTURE.md's Events table is the source; the
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
 * `upstream/<name>` (the monitor's own upstream clients), `poller/<name>` (the monitor's own
 * polling pace), `receiver/<name>` (a notification receiver of the config, for the monitor's own
 * delivery trouble), `store/redis` (the monitor's own store) or `incident/<incident id>` (an
 * operator's word on an incident). Each event's `data` names its entity in `vehicleId`,
 * `deviceId`, `upstream`, `poller`, `receiver`, `store` or `incident` respectively: in a detector's
 * draft
 * that field is required only for membership events (the list detectors observe the whole fleet,
 * so the draft is the only place the entity is named) and for `monitor.receiver.disabled` (raised
 * on a `fleet` ref by the delivery worker); per-entity detectors leave it out and the caller, which
 * knows what it polled, supplies it — `toFleetEvent` (cloud-event.ts) fills it and sets `subject`.
 * In a published event the field is always present.
 *
 * Words. Each entry also says how people read it: `says.one` follows one entity's name
 * (`veh-0003 is off the VPN`, see describe.ts), `says.many` a count of them (`40 vehicles
 * are off the VPN`, Slack group titles); `hidesValues` keeps `previous`/`current` out of
 * those sentences. A type without its words does not compile.
 */

export const severitySchema = z.enum(['info', 'warning', 'critical']);

export type SubjectKind = 'vehicle' | 'robot' | 'upstream' | 'poller' | 'receiver' | 'store' | 'incident';

/** The `data` field naming the event's entity, per subject kind. */
export const SUBJECT_ID_FIELD = {
  vehicle: 'vehicleId',
  robot: 'deviceId',
  upstream: 'upstream',
  poller: 'poller',
  receiver: 'receiver',
  store: 'store',
  incident: 'incident',
} as const satisfies Record<SubjectKind, string>;

export type IncidentKey =
  | 'vpn'
  | 'reachability'
  | 'stuck'
  | 'stale'
  | 'health'
  | 'backlog'
  | 'upstream'
  | 'list'
  | 'pace';

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
  powerSupported: 'vehicle.power.supported',
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
  robotCommandQueueBacklog: 'robot.command_queue.backlog',
  robotCommandQueueDrained: 'robot.command_queue.drained',
  upstreamDegraded: 'monitor.upstream.degraded',
  upstreamRecovered: 'monitor.upstream.recovered',
  listUnreadable: 'monitor.list.unreadable',
  listReadable: 'monitor.list.readable',
  pollingBehind: 'monitor.polling.behind',
  pollingCaughtUp: 'monitor.polling.caught_up',
  receiverDisabled: 'monitor.receiver.disabled',
  storeReset: 'monitor.store.reset',
  incidentAcknowledged: 'incident.acknowledged',
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
  /** Answers with a success status but a body not as the spec says (events before it lack it). */
  unreadable: z.number().int().nonnegative().optional(),
});

/** Bounds of the words of an acknowledgement (`incident.acknowledged`), in characters. */
export const ACK_TEXT_LIMITS = { by: 100, comment: 500 } as const;

/** The data every event of a subject kind starts with; the entity field is optional in drafts. */
const ON = {
  vehicle: { severity: severitySchema, vehicleId: entityId.optional() },
  robot: { severity: severitySchema, deviceId: entityId.optional() },
  upstream: { severity: severitySchema, upstream: entityId.optional() },
  poller: { severity: severitySchema, poller: entityId.optional() },
  receiver: { severity: severitySchema, receiver: entityId.optional() },
  store: { severity: severitySchema, store: entityId.optional() },
  incident: { severity: severitySchema, incident: entityId.optional() },
} as const;
/** What a power command that ended carries: what it asked for, what the vehicle reports, how long it took. */
const commandEnded = {
  requested: powerTargetSchema,
  current: powerStateSchema,
  pendingSince: since,
  durationMs,
};

/**
 * What an event says to people, after the entity's name (`veh-0003 is off the VPN`) or
 * after a count of them (`40 vehicles are off the VPN`).
 */
export interface Phrase {
  one: string;
  many: string;
}

/** The same words for one entity and for many. */
const alike = (text: string): Phrase => ({ one: text, many: text });

interface Meta<K extends SubjectKind> {
  subject: K;
  severity: Severity;
  incident: IncidentRole | null;
  description: string;
  says: Phrase;
  /** `previous`/`current` are not for people (hashes) or repeat the phrase: sentences leave them out. */
  hidesValues?: true;
}

/** How an entry reads: its meta without the subject, and without the incident unless it has one. */
type Wording = Omit<Meta<SubjectKind>, 'subject' | 'incident'> & { incident?: IncidentRole };

function define<K extends SubjectKind, S extends z.ZodRawShape>(meta: Meta<K>, shape: S) {
  return { ...meta, data: z.strictObject(shape) };
}

/**
 * The events of one subject kind: each gets the subject, and its data starts with `severity` and
 * the entity field, optional in drafts (the caller knows what it polled and names it).
 */
function about<K extends SubjectKind>(subject: K) {
  return <S extends z.ZodRawShape>(wording: Wording, shape: S) =>
    define({ subject, incident: null, ...wording }, { ...ON[subject], ...shape });
}

const vehicle = about('vehicle');
const robot = about('robot');
const receiver = about('receiver');
const store = about('store');
const incident = about('incident');

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

/**
 * `<kind>.discovered` and `<kind>.removed`: the same two events for each kind with a list. Here
 * the entity field is required (the list detectors name it in the draft).
 */
function membershipEvents<K extends 'vehicle' | 'robot', Id extends z.ZodRawShape>(
  subject: K,
  id: Id,
  words: { list: string; lists: string; phraseList: string },
) {
  return {
    discovered: define(
      {
        subject,
        severity: 'info',
        incident: null,
        description: `A ${subject} appeared in ${words.list} (not on the first list).`,
        says: alike(`appeared in ${words.phraseList}`),
      },
      { severity: severitySchema, ...id },
    ),
    removed: define(
      {
        subject,
        severity: 'warning',
        incident: null,
        description: `A ${subject} was missing from \`remove_after\` consecutive ${words.lists}.`,
        says: alike(`left ${words.phraseList}`),
      },
      { severity: severitySchema, ...id, missingSince: since, missedLists: consecutive },
    ),
  };
}

/** One event of an incident pair: its type and wording. */
type PairEvent = Omit<Wording, 'incident'> & { type: FleetEventType };

/**
 * An incident of the consecutive-threshold rule (VPN, reachability, health, upstream, pace) between a
 * good and a bad status. The firing event goes from the good status (null when it was never seen;
 * `never` says so in the schema) to the bad one, since the bad run began, with the counts its
 * detector adds (`data`); the resolving event (info) goes back, with `since` and `durationMs`.
 * Each names the other as its counterpart.
 */
function thresholdIncident<
  K extends SubjectKind,
  Good extends string,
  Bad extends string,
  Extra extends z.ZodRawShape,
>(
  subject: K,
  key: IncidentKey,
  [good, bad]: readonly [Good, Bad],
  firing: PairEvent & { never?: string; data: Extra },
  resolving: Omit<PairEvent, 'severity'>,
) {
  const { type: firingType, never, data, ...firingWords } = firing;
  const { type: resolvingType, ...resolvingWords } = resolving;
  const previous = z.literal(good).nullable();
  return {
    fires: define(
      { subject, ...firingWords, incident: fires(key, resolvingType) },
      {
        ...ON[subject],
        previous: never === undefined ? previous : previous.describe(never),
        current: z.literal(bad),
        since,
        ...data,
      },
    ),
    resolves: define(
      { subject, severity: 'info', ...resolvingWords, incident: resolves(key, firingType) },
      { ...ON[subject], previous: z.literal(bad), current: z.literal(good), since, durationMs },
    ),
  };
}

// --- the catalogue ------------------------------------------------------------------------------

const vehicleMembership = membershipEvents(
  'vehicle',
  { vehicleId: entityId },
  { list: 'the list the client may access', lists: 'vehicle lists', phraseList: 'the vehicle list' },
);
const robotMembership = membershipEvents(
  'robot',
  { deviceId: entityId },
  { list: 'the device list', lists: 'device lists', phraseList: 'the robot list' },
);

const vpn = thresholdIncident(
  'vehicle',
  'vpn',
  ['connected', 'disconnected'],
  {
    type: EVENT.vpnDisconnected,
    severity: 'warning',
    description: '`vpnConnected` was false for `failure_threshold` consecutive vehicle lists.',
    says: { one: 'is off the VPN', many: 'are off the VPN' },
    never: 'null when the vehicle was never seen connected.',
    data: { consecutive },
  },
  {
    type: EVENT.vpnConnected,
    description:
      'The vehicle reconnected (`success_threshold` consecutive lists); carries the outage duration.',
    says: { one: 'is back on the VPN', many: 'are back on the VPN' },
  },
);

const reachability = thresholdIncident(
  'vehicle',
  'reachability',
  ['reachable', 'unreachable'],
  {
    type: EVENT.vehicleUnreachable,
    severity: 'warning',
    description: 'Power status failed with a gateway error or time-out `failure_threshold` times in a row.',
    says: { one: 'is unreachable', many: 'are unreachable' },
    never: 'null when the vehicle never answered.',
    data: { consecutiveFailures: consecutive, lastError: errorRef },
  },
  {
    type: EVENT.vehicleReachable,
    description:
      'Power status answers again (`success_threshold` times in a row); carries the outage duration.',
    says: { one: 'is reachable again', many: 'are reachable again' },
  },
);

const health = thresholdIncident(
  'robot',
  'health',
  ['up', 'down'],
  {
    type: EVENT.robotHealthDown,
    severity: 'critical',
    description: '`failure_threshold` consecutive failed health checks.',
    says: { one: 'fails its health check', many: 'fail their health check' },
    never: 'null when the robot never passed a check.',
    data: { consecutiveFailures: consecutive, lastError: errorRef },
  },
  {
    type: EVENT.robotHealthUp,
    description: '`success_threshold` consecutive good health checks after being down; carries the duration.',
    says: { one: 'passes its health check again', many: 'pass their health check again' },
  },
);

const upstream = thresholdIncident(
  'upstream',
  'upstream',
  ['healthy', 'degraded'],
  {
    type: EVENT.upstreamDegraded,
    severity: 'critical',
    description:
      'An upstream (token issuer, fleet API, robot gateway) failed: error ratio or 401/403 count over the limit for `failure_threshold` windows.',
    says: { one: 'is failing', many: 'are failing' },
    data: {
      consecutiveWindows: consecutive,
      reasons: z.array(z.enum(['error_ratio', 'auth_failures'])).min(1),
      window: upstreamWindow,
      errorRatio: z.number().min(0),
    },
  },
  {
    type: EVENT.upstreamRecovered,
    description: 'The upstream is healthy again for `success_threshold` windows; carries the duration.',
    says: { one: 'has recovered', many: 'have recovered' },
  },
);

/** At most this many of a list's elements not as the spec says are named in its event. */
export const MAX_LIST_EXAMPLES = 3;

const list = thresholdIncident(
  'upstream',
  'list',
  ['readable', 'unreadable'],
  {
    type: EVENT.listUnreadable,
    severity: 'warning',
    description:
      "A list (the fleet API's vehicles, the robot gateway's robots) held elements not as the spec says for `failure_threshold` lists in a row. The rest of the list is observed as usual; a vehicle such an element names is not watched for its VPN state and address, a robot it names keeps its other pollers, and an element naming nothing cannot be told apart: a new entity behind it is not discovered.",
    says: { one: 'lists elements not as the spec says', many: 'list elements not as the spec says' },
    hidesValues: true,
    data: {
      consecutiveLists: consecutive,
      rejected: z
        .number()
        .int()
        .positive()
        .describe('Elements not as the spec says in the list that tipped it.'),
      elements: z.number().int().positive().describe('Elements of that list in all.'),
      unnamed: z.number().int().nonnegative().describe('Of the rejected, those naming no entity.'),
      examples: z
        .array(
          z.strictObject({
            id: z.string().nullable().describe('The entity the element names; null when it names none.'),
            message: z.string().max(240).describe('What is not as the spec says.'),
          }),
        )
        .max(MAX_LIST_EXAMPLES),
    },
  },
  {
    type: EVENT.listReadable,
    description:
      'Every element of the list is as the spec says again, for `success_threshold` lists; carries the duration.',
    says: {
      one: 'lists every element as the spec says again',
      many: 'list every element as the spec says again',
    },
    hidesValues: true,
  },
);

const pace = thresholdIncident(
  'poller',
  'pace',
  ['on_pace', 'behind'],
  {
    type: EVENT.pollingBehind,
    severity: 'warning',
    description:
      "fleetwatch cannot keep a poller's `interval`: for `failure_threshold` ticks in a row, some of its shards still had an earlier tick's job waiting for a worker (not started) when the tick came; every entity is still polled, less often.",
    says: { one: 'is behind its interval', many: 'are behind their interval' },
    hidesValues: true,
    data: {
      consecutiveTicks: consecutive,
      shards: z.number().int().positive().describe('Shards (jobs) of the tick that tipped it.'),
      coalesced: z
        .number()
        .int()
        .positive()
        .describe(
          'Of those, the shards whose earlier job was still queued or running: the tick added none for them.',
        ),
      waiting: z
        .number()
        .int()
        .positive()
        .describe(
          'Of those, the shards whose earlier job had not started: no worker took it for a whole interval.',
        ),
      intervalMs: z.number().int().positive().describe("The poller's interval, in milliseconds."),
    },
  },
  {
    type: EVENT.pollingCaughtUp,
    description:
      'Every shard of the poller was done before its next tick for `success_threshold` ticks; carries the duration.',
    says: { one: 'keeps its interval again', many: 'keep their interval again' },
    hidesValues: true,
  },
);

const DEFINITIONS = {
  [EVENT.vehicleDiscovered]: vehicleMembership.discovered,
  [EVENT.vehicleRemoved]: vehicleMembership.removed,
  [EVENT.vpnDisconnected]: vpn.fires,
  [EVENT.vpnConnected]: vpn.resolves,
  [EVENT.ipChanged]: vehicle(
    {
      severity: 'info',
      description:
        "The vehicle's VPN `ipAddress` changed, appeared (previous null) or disappeared (current null).",
      says: alike('changed VPN address'),
    },
    { previous: z.string().nullable(), current: z.string().nullable() },
  ),
  [EVENT.powerChanged]: vehicle(
    {
      severity: 'info',
      description: 'The reported power `state` changed.',
      says: { one: 'reports a new power state', many: 'report a new power state' },
    },
    { previous: powerStateSchema, current: powerStateSchema, updatedAt: reportedTime.nullable() },
  ),
  [EVENT.powerCommandPending]: vehicle(
    {
      severity: 'info',
      description:
        'A power command appeared, or the pending one changed to the other target (previous is then that target).',
      says: { one: 'has a power command pending', many: 'have a power command pending' },
    },
    {
      requested: powerTargetSchema,
      previous: powerTargetSchema.nullable(),
      current: powerTargetSchema,
      state: powerStateSchema,
      pendingSince: since,
    },
  ),
  [EVENT.powerCommandCompleted]: vehicle(
    {
      severity: 'info',
      description:
        'The pending command cleared and `state` equals what it requested; durationMs is how long it took.',
      says: { one: 'completed its power command', many: 'completed their power command' },
    },
    commandEnded,
  ),
  [EVENT.powerCommandFailed]: vehicle(
    {
      severity: 'warning',
      description: 'The pending command cleared but `state` is not what it requested.',
      says: {
        one: 'dropped its power command without reaching the state',
        many: 'dropped their power command without reaching the state',
      },
    },
    commandEnded,
  ),
  [EVENT.powerCommandStuck]: vehicle(
    {
      severity: 'warning',
      incident: fires('stuck', EVENT.powerCommandUnstuck),
      description: 'A power command has been pending longer than `stuck_after` (fires once per command).',
      says: { one: 'has a power command stuck pending', many: 'have a power command stuck pending' },
      hidesValues: true,
    },
    {
      requested: powerTargetSchema,
      current: powerStateSchema,
      pendingSince: since,
      pendingForMs: z.number().int().nonnegative(),
      stuckAfterMs: z.number().int().nonnegative(),
    },
  ),
  [EVENT.powerCommandUnstuck]: vehicle(
    {
      severity: 'info',
      incident: resolves('stuck', EVENT.powerCommandStuck),
      description:
        'A stuck command ended: completed, failed, or superseded by a command for the other target; durationMs is its whole pending time.',
      says: { one: 'no longer has a stuck power command', many: 'no longer have a stuck power command' },
    },
    {
      requested: powerTargetSchema,
      current: powerStateSchema,
      outcome: z.enum(['completed', 'failed', 'superseded']),
      since: since.describe('When the command was first seen pending.'),
      durationMs,
    },
  ),
  [EVENT.powerReportStale]: vehicle(
    {
      severity: 'warning',
      incident: fires('stale', EVENT.powerReportFresh),
      description: '`updatedAt` is null (never reported) or older than `stale_after`.',
      says: {
        one: 'has not reported its power state recently',
        many: 'have not reported their power state recently',
      },
    },
    {
      updatedAt: reportedTime.nullable(),
      ageMs: z.number().int().nonnegative().nullable().describe('null when updatedAt is null or unreadable.'),
      staleAfterMs: z.number().int().nonnegative(),
      current: powerStateSchema,
    },
  ),
  [EVENT.powerReportFresh]: vehicle(
    {
      severity: 'info',
      incident: resolves('stale', EVENT.powerReportStale),
      description: 'The power report is fresh again after being stale.',
      says: { one: 'reports its power state again', many: 'report their power state again' },
    },
    { updatedAt: reportedTime, current: powerStateSchema, since, durationMs },
  ),
  [EVENT.powerUnsupported]: vehicle(
    {
      severity: 'info',
      description:
        'Power status, which used to answer, now answers 404: the vehicle no longer supports power control here (polled rarely from now on).',
      says: { one: 'no longer supports power control', many: 'no longer support power control' },
    },
    { previous: z.literal('supported'), current: z.literal('unsupported'), error: errorRef },
  ),
  [EVENT.powerSupported]: vehicle(
    {
      severity: 'info',
      description:
        'Power status answers again after 404s: the vehicle supports power control (again) and is polled at the usual interval from now on.',
      says: { one: 'supports power control again', many: 'support power control again' },
    },
    {
      previous: z.literal('unsupported'),
      current: z.literal('supported'),
      unsupportedSince: isoTime
        .nullable()
        .describe('When the vehicle was first seen without power control; null when not known.'),
    },
  ),
  [EVENT.vehicleUnreachable]: reachability.fires,
  [EVENT.vehicleReachable]: reachability.resolves,
  [EVENT.robotDiscovered]: robotMembership.discovered,
  [EVENT.robotRemoved]: robotMembership.removed,
  [EVENT.robotHealthDown]: health.fires,
  [EVENT.robotHealthUp]: health.resolves,
  [EVENT.robotAutonomyChanged]: robot(
    {
      severity: 'info',
      description: '`cortex_status` (autonomy state) changed.',
      says: alike('changed autonomy state'),
    },
    { previous: statusPair, current: statusPair },
  ),
  [EVENT.robotNavigationChanged]: robot(
    {
      severity: 'info',
      description: 'The navigation goal status changed; severity warning when it is aborted (6).',
      says: alike('changed navigation status'),
    },
    { previous: statusPair, current: statusPair },
  ),
  [EVENT.robotStateChanged]: robot(
    {
      severity: 'info',
      description: '`vehicle_feedback.state` changed.',
      says: alike('changed vehicle state'),
    },
    { previous: z.string(), current: z.string() },
  ),
  [EVENT.robotLeaseChanged]: robot(
    {
      severity: 'info',
      description: 'The teleoperation lease holder appeared, changed or went (null = nobody holds it).',
      says: alike('changed teleoperation lease holder'),
    },
    { previous: z.string().nullable(), current: z.string().nullable(), expiresAt: z.string().nullable() },
  ),
  [EVENT.robotConfigChanged]: robot(
    {
      severity: 'info',
      description:
        'The active site, loaded route or loaded zone set changed (one event per part); previous/current are stable hashes.',
      says: { one: 'changed its loaded configuration', many: 'changed their loaded configuration' },
      hidesValues: true,
    },
    {
      part: configPart,
      previous: z.string(),
      current: z.string(),
      diff: configDiffSchema,
      summary: z.string().max(240),
    },
  ),
  [EVENT.robotCommandQueueBacklog]: robot(
    {
      severity: 'warning',
      incident: fires('backlog', EVENT.robotCommandQueueDrained),
      description:
        'The command queue grew from fewer than `backlog_threshold` queued commands to at least that many (once per backlog).',
      says: { one: 'has a command backlog', many: 'have a command backlog' },
    },
    {
      previous: z.number().int().nonnegative().describe('Queued commands at the reading before.'),
      current: z.number().int().positive().describe('Queued commands now.'),
      threshold: z.number().int().positive(),
    },
  ),
  [EVENT.robotCommandQueueDrained]: robot(
    {
      severity: 'info',
      incident: resolves('backlog', EVENT.robotCommandQueueBacklog),
      description: 'The command queue is empty again after a backlog; carries the backlog duration.',
      says: { one: 'emptied its command queue', many: 'emptied their command queue' },
    },
    {
      previous: z.number().int().positive().describe('Queued commands at the reading before.'),
      current: z.literal(0),
      since,
      durationMs,
    },
  ),
  [EVENT.upstreamDegraded]: upstream.fires,
  [EVENT.upstreamRecovered]: upstream.resolves,
  [EVENT.listUnreadable]: list.fires,
  [EVENT.listReadable]: list.resolves,
  [EVENT.pollingBehind]: pace.fires,
  [EVENT.pollingCaughtUp]: pace.resolves,
  [EVENT.receiverDisabled]: receiver(
    {
      severity: 'critical',
      description:
        'A notification receiver answered that it is gone for good (webhook 410; Slack `channel_is_archived` or a revoked webhook): it is disabled, and its notifications go to the dead letters until `fleetwatch receiver enable`.',
      says: {
        one: 'was disabled: it answered that it is gone for good',
        many: 'were disabled: they answered that they are gone for good',
      },
    },
    {
      kind: z.string().min(1).describe('The receiver kind: `slack`, `webhook`.'),
      reason: z.string().describe("The receiver's answer, without secrets."),
    },
  ),
  [EVENT.storeReset]: store(
    {
      severity: 'critical',
      description:
        'fleetwatch found its Redis store emptied (a restart without persistence, a flush, a failover to an empty replica): the store marker written at installation start was gone. One replica re-created it, carried the incidents open before the loss over without announcing them again, and the fleet is re-baselined silently. Queued notifications, aggregation groups, silences and dead letters were lost with the store.',
      says: {
        one: 'was found emptied: open incidents were carried over, the fleet is re-baselined silently',
        many: 'were found emptied: open incidents were carried over, the fleet is re-baselined silently',
      },
    },
    {
      epoch: z.string().min(1).describe('The new store marker.'),
      previousEpoch: z.string().min(1).describe('The marker that was lost.'),
      carriedOver: z
        .number()
        .int()
        .nonnegative()
        .describe(
          'Open incidents the announcing replica carried over from before the loss (not announced again); other replicas add those only they knew.',
        ),
      lastSeenAt: isoTime.describe('When the replica that noticed last saw the old marker.'),
    },
  ),
  [EVENT.incidentAcknowledged]: incident(
    {
      severity: 'info',
      description:
        'An operator acknowledged an open incident (`fleetwatch ack`, `POST /api/incidents/{id}/ack`): its reminders stop until it resolves or `until` passes. It goes to the groups that hold the incident, so it shows in their next notification.',
      says: { one: 'was acknowledged', many: 'were acknowledged' },
    },
    {
      entity: z
        .string()
        .min(1)
        .describe('The subject of the incident: `vehicle/<id>`, `robot/<id>`, `upstream/<name>`.'),
      key: z.string().min(1).describe('The incident key (`vpn`, `health`, ...).'),
      firing: z.string().min(1).describe('The firing event type of the incident.'),
      since: since.describe('When the incident started.'),
      by: z.string().min(1).max(ACK_TEXT_LIMITS.by).describe('Who acknowledged it.'),
      comment: z.string().min(1).max(ACK_TEXT_LIMITS.comment).describe('Why, or what is being done.'),
      until: isoTime.describe('When the acknowledgement ends unless the incident resolves first.'),
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
  says: Phrase;
  /** Sentences leave `previous`/`current` out (see `Meta.hidesValues`). */
  hidesValues: boolean;
}

/** Every event type, in catalogue order. */
export const FLEET_EVENT_TYPES: readonly FleetEventType[] = Object.values(EVENT);

export function isFleetEventType(type: unknown): type is FleetEventType {
  return typeof type === 'string' && Object.hasOwn(DEFINITIONS, type);
}

export function catalogueEntry(type: FleetEventType): CatalogueEntry {
  const definition: Meta<SubjectKind> = DEFINITIONS[type];
  const { subject, severity, incident, description, says } = definition;
  return {
    type,
    subject,
    severity,
    incident,
    description,
    says,
    hidesValues: definition.hidesValues === true,
  };
}

export const CATALOGUE: readonly CatalogueEntry[] = FLEET_EVENT_TYPES.map(catalogueEntry);

const ENTRIES = new Map<string, CatalogueEntry>(CATALOGUE.map((entry) => [entry.type, entry]));

/** The entry of any type name, undefined for a type fleetwatch does not know. */
export function findEntry(type: string): CatalogueEntry | undefined {
  return ENTRIES.get(type);
}

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
