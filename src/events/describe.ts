import { EVENT, findEntry } from './catalogue.js';
import type { FleetEvent } from './types.js';

/** A `previous`/`current` value for people: status pairs by their text, absent as `none`. */
export function renderValue(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const text = record.text ?? record.status_text ?? record.status;
    if (typeof text === 'string' || typeof text === 'number') return String(text);
    return JSON.stringify(value);
  }
  return String(value);
}

/** `1h 02m`, `3m 05s`, `12s`: how long an incident lasted. */
export function describeDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, '0')}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h ${String(minutes % 60).padStart(2, '0')}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

/**
 * What a count of entities did (`1 vehicle reports its power state again`, `40 vehicles are off the
 * VPN`): the catalogue's `says.one` for exactly one, `says.many` for any other count.
 * `nouns` is the entity's noun in both numbers (`vehicle`, `vehicles`).
 */
export function describeCount(type: string, count: number, nouns: { one: string; many: string }): string {
  const one = count === 1;
  const noun = one ? nouns.one : nouns.many;
  const entry = findEntry(type);
  if (!entry) return `${count} ${noun}: ${type}`;
  return `${count} ${noun} ${one ? entry.says.one : entry.says.many}`;
}

/** What people call each upstream of the monitor (`upstream/<name>` subjects). */
const UPSTREAM_NAMES: Readonly<Record<string, string>> = {
  token: 'the token issuer',
  fleet: 'the fleet API',
  robots: 'the robot gateway',
};

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/**
 * `monitor.upstream.degraded` said plainly, from the window that tipped it: the token issuer
 * failing in any way means fleetwatch cannot authenticate (and sees nothing of the fleet);
 * refusals by an API are fleetwatch's access, not the fleet; anything else is the API failing.
 */
function upstreamDegraded(name: string, data: FleetEvent['data']): string {
  const who = UPSTREAM_NAMES[name] ?? `upstream ${name}`;
  const window = (typeof data.window === 'object' && data.window !== null ? data.window : {}) as Record<
    string,
    unknown
  >;
  const requests = count(window.requests);
  const refused = count(window.authFailures);
  const unreadable = count(window.unreadable);
  const failed = count(window.serverErrors) + count(window.timeouts) + unreadable;
  const byRefusal = Array.isArray(data.reasons) && data.reasons.includes('auth_failures');
  if (name === 'token' && byRefusal) {
    // The issuer refusing the client credentials is fleetwatch's configuration, not an outage.
    return `fleetwatch cannot authenticate: ${who} refuses its client credentials, ${refused} of ${requests} requests refused (400/401/403); check upstream.client_id and upstream.client_secret`;
  }
  const detail = byRefusal
    ? `${refused} of ${requests} requests refused (401/403)`
    : `${failed} of ${requests} requests failed (${unreadable > 0 ? '5xx, no answer, or an answer not as the spec says' : '5xx or no answer'})`;
  if (name === 'token') return `fleetwatch cannot authenticate: ${who} is failing, ${detail}`;
  if (byRefusal) return `fleetwatch is refused by ${who}: ${detail}`;
  return `${who} is failing: ${detail}`;
}

/** `monitor.polling.behind`: how far behind, from the tick that tipped it. */
function paceDetail(event: Pick<FleetEvent, 'type' | 'data'>): string {
  if (event.type !== EVENT.pollingBehind) return '';
  const { waiting, shards, intervalMs } = event.data;
  return `: ${count(waiting)} of ${count(shards)} shards had waited a whole interval (${describeDuration(count(intervalMs))}) for a worker; every entity is still polled, less often`;
}

/** The kind of entity each upstream's list holds (`upstream/<name>` of `monitor.list.unreadable`). */
const LIST_KINDS: Readonly<Record<string, string>> = { fleet: 'vehicle', robots: 'robot' };

/**
 * `monitor.list.unreadable`: how much of the list, what fleetwatch does not see because of it (a
 * robot an element names keeps its own pollers, so only the vehicles' and the nameless ones'), and
 * the first element's fault.
 */
function listDetail(event: Pick<FleetEvent, 'type' | 'subject' | 'data'>): string {
  if (event.type !== EVENT.listUnreadable) return '';
  const { rejected, elements, unnamed, examples } = event.data;
  const name = event.subject.slice(event.subject.indexOf('/') + 1);
  const noun = NOUNS[LIST_KINDS[name] ?? ''] ?? ENTITY;
  const first = Array.isArray(examples) ? (examples[0] as { message?: unknown } | undefined) : undefined;
  const example = typeof first?.message === 'string' ? `; e.g. ${first.message}` : '';
  const named = count(rejected) - count(unnamed);
  const unseen =
    named > 0 && name === 'fleet'
      ? `; ${named === 1 ? 'the vehicle it names is' : `the ${named} vehicles they name are`} not watched for VPN state and address`
      : '';
  const nameless =
    count(unnamed) > 0
      ? `; ${count(unnamed)} ${count(unnamed) === 1 ? 'names' : 'name'} no ${noun.one}: a new ${noun.one} behind ${count(unnamed) === 1 ? 'it' : 'them'} is not discovered`
      : '';
  // The example last: a title cut short (Slack's header) keeps what is not watched.
  return `: ${count(rejected)} of ${count(elements)} elements${unseen}${nameless}${example}`;
}

/**
 * `monitor.receiver.disabled`: what the receiver answered, and the way back (its notifications
 * wait in the dead letters meanwhile).
 */
function receiverDetail(event: Pick<FleetEvent, 'type' | 'subject' | 'data'>): string {
  if (event.type !== EVENT.receiverDisabled) return '';
  const name = event.subject.slice(event.subject.indexOf('/') + 1);
  const reason =
    typeof event.data.reason === 'string' && event.data.reason !== '' ? ` (${event.data.reason})` : '';
  return `${reason}; its notifications wait as dead letters: run fleetwatch receiver enable ${name}, then fleetwatch dlq replay --all --receiver ${name}`;
}

/**
 * One human sentence for an event: `veh-0003 is off the VPN`, `veh-0003 reports a new power
 * state: off → on`. Used by the console printer and as the plain-text fallback of notifications.
 * The monitor's own upstreams are named for people (`the token issuer has recovered`).
 */
export function describeEvent(event: Pick<FleetEvent, 'type' | 'subject' | 'data'>): string {
  const acknowledged = describeAcknowledgement(event);
  if (acknowledged !== undefined) return acknowledged;
  const id = event.subject.slice(event.subject.indexOf('/') + 1);
  const upstream = event.subject.startsWith('upstream/');
  if (upstream && event.type === 'monitor.upstream.degraded') return upstreamDegraded(id, event.data);
  const entity = upstream
    ? (UPSTREAM_NAMES[id] ?? `upstream ${id}`)
    : event.subject.startsWith('poller/')
      ? `poller ${id}`
      : event.subject.startsWith('receiver/')
        ? `receiver ${id}`
        : id;
  const entry = findEntry(event.type);
  const phrase = entry?.says.one ?? event.type;
  const data = event.data;
  const part = typeof data.part === 'string' ? ` (${data.part})` : '';
  const change =
    'previous' in data && 'current' in data && !entry?.hidesValues
      ? `: ${renderValue(data.previous)} → ${renderValue(data.current)}`
      : typeof data.requested === 'string'
        ? `: power ${data.requested}`
        : '';
  const duration = typeof data.durationMs === 'number' ? ` after ${describeDuration(data.durationMs)}` : '';
  return `${entity} ${phrase}${part}${change}${duration}${paceDetail(event)}${listDetail(event)}${receiverDetail(event)}`;
}

/**
 * An acknowledgement reads as the incident it is about: `veh-0003 is off the VPN:
 * acknowledged by dana: on it`.
 */
function describeAcknowledgement(event: Pick<FleetEvent, 'type' | 'data'>): string | undefined {
  if (event.type !== EVENT.incidentAcknowledged) return undefined;
  const { entity, firing, by, comment } = event.data;
  if (typeof entity !== 'string' || typeof firing !== 'string') return undefined;
  const name = entity.slice(entity.indexOf('/') + 1);
  const phrase = findEntry(firing)?.says.one ?? firing;
  return `${name} ${phrase}: acknowledged by ${String(by)}: ${String(comment)}`;
}

/** How people call the entities of a kind: `Vehicle` / `Vehicles` as labels, `vehicle` / `vehicles` in sentences. */
export interface Noun {
  label: string;
  labelMany: string;
  one: string;
  many: string;
}

const NOUNS: Record<string, Noun> = {
  vehicle: { label: 'Vehicle', labelMany: 'Vehicles', one: 'vehicle', many: 'vehicles' },
  robot: { label: 'Robot', labelMany: 'Robots', one: 'robot', many: 'robots' },
  upstream: { label: 'Upstream', labelMany: 'Upstreams', one: 'upstream', many: 'upstreams' },
  poller: { label: 'Poller', labelMany: 'Pollers', one: 'poller', many: 'pollers' },
  receiver: { label: 'Receiver', labelMany: 'Receivers', one: 'receiver', many: 'receivers' },
  store: { label: 'Store', labelMany: 'Stores', one: 'store', many: 'stores' },
  incident: { label: 'Incident', labelMany: 'Incidents', one: 'incident', many: 'incidents' },
};
const ENTITY: Noun = { label: 'Entity', labelMany: 'Entities', one: 'entity', many: 'entities' };

/** The entity an event is about, from its `subject` (`vehicle/veh-0003` → vehicle, veh-0003). */
export function entityOf(subject: string): { kind: string; id: string; noun: Noun } {
  const slash = subject.indexOf('/');
  const kind = slash === -1 ? '' : subject.slice(0, slash);
  return { kind, id: subject.slice(slash + 1), noun: NOUNS[kind] ?? ENTITY };
}

/**
 * The title of several events told together (a notification): one event's sentence; one subject's
 * latest with the count; `3 vehicles are off the VPN` for one type; else the counts.
 */
export function describeEvents(events: readonly FleetEvent[]): string {
  const first = events[0];
  if (!first) return 'No events';
  if (events.length === 1) return describeEvent(first);
  const types = new Set(events.map((event) => event.type));
  const subjects = new Set(events.map((event) => event.subject));
  const entity = entityOf(first.subject);
  if (types.size === 1) {
    if (subjects.size === 1) return `${describeEvent(events.at(-1) ?? first)} (${events.length} events)`;
    return describeCount(first.type, subjects.size, entity.noun);
  }
  const kinds = new Set(events.map((event) => entityOf(event.subject).kind));
  const what = kinds.size === 1 ? `${entity.noun.one} events` : 'fleet events';
  return `${events.length} ${what} (${types.size} types)`;
}

/** `previous → current`, or just `current` when there was no previous; hidden values are not shown. */
export function describeChange(event: Pick<FleetEvent, 'type' | 'data'>): string | undefined {
  const data = event.data;
  if (findEntry(event.type)?.hidesValues) return undefined;
  const hasPrevious = 'previous' in data && data.previous !== undefined;
  const hasCurrent = 'current' in data && data.current !== undefined;
  if (hasPrevious && hasCurrent) return `${renderValue(data.previous)} → ${renderValue(data.current)}`;
  if (hasCurrent) return renderValue(data.current);
  return undefined;
}

/**
 * What tells apart events of one type whose values are hidden, in a list of them: the part that
 * changed (`loadedRoute`) or the power requested (`power off`), as the sentence says them.
 */
export function hiddenDetail(event: Pick<FleetEvent, 'type' | 'data'>): string | undefined {
  if (!findEntry(event.type)?.hidesValues) return undefined;
  const data = event.data;
  if (typeof data.part === 'string') return data.part;
  if (typeof data.requested === 'string') return `power ${data.requested}`;
  return undefined;
}

/** Since when the state an event reports holds (ISO 8601): `since`, `pendingSince` or `missingSince`. */
export function sinceOf(event: Pick<FleetEvent, 'data'>): string | undefined {
  const data = event.data;
  for (const key of ['since', 'pendingSince', 'missingSince'] as const) {
    const value = data[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}
