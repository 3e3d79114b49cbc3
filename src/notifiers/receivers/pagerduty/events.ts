import { createHash } from 'node:crypto';
import { CATALOGUE } from '../../../events/catalogue.js';
import { describeEvent } from '../../../events/describe.js';
import { incidentId, incidentRefOf } from '../../../events/incident-ref.js';
import { severityOf } from '../../../events/severity.js';
import type { FleetEvent, Severity } from '../../../events/types.js';
import { consolePageUrl, type Notification } from '../../notifier.js';
import type { PagerDutySeverity } from './config.js';

/**
 * A notification as PagerDuty Events API v2 events (pure). PagerDuty keeps one alert per
 * `dedup_key`, so each fleetwatch incident is one key, and a notification becomes at most three
 * events per incident, in the order its incidents first appear:
 *
 * | what the notification holds for the incident | events |
 * |---|---|
 * | a firing event | `trigger` (of its latest firing event) |
 * | an `incident.acknowledged` | `acknowledge` (after the `trigger` when the incident also fires in it) |
 * | a resolving event, or the entity's `<kind>.removed` | `resolve`; then `trigger` / `acknowledge` if it fired again after |
 *
 * An incident that fired and resolved within one notification is sent as its `resolve` only: it
 * is over, nobody is paged for it (PagerDuty ignores the resolve of a key it never saw), and the
 * other receivers still show it. Alertmanager's PagerDuty integration behaves the same way.
 *
 * Events of no incident (a power change, a removal, `monitor.store.reset`) are a `trigger` with a
 * key of their own (the event id), which someone resolves in PagerDuty, or skipped with
 * `changes: skip`. A removal also resolves every incident its entity kind can have: fleetwatch
 * closes them when an entity leaves the fleet, and a removed entity never sends their resolution.
 *
 * Dedup keys are `<installation>/<subject>#<incident key>` (`production/vehicle/veh-0003#vpn`),
 * so two installations on one routing key keep their alerts apart; a key longer than PagerDuty's
 * 255 characters is replaced by `sha256:<hex of it>`.
 */

export type EventAction = 'trigger' | 'acknowledge' | 'resolve';

export interface EventPayload {
  summary: string;
  source: string;
  severity: PagerDutySeverity;
  timestamp: string;
  component: string;
  group: string;
  class: string;
  custom_details: Record<string, unknown>;
}

/** One Events API event without its routing key (added when it is sent: it is a secret). */
export interface PlannedEvent {
  event_action: EventAction;
  dedup_key: string;
  payload?: EventPayload;
  client?: string;
  client_url?: string;
  links?: Array<{ href: string; text: string }>;
}

export interface PlanOptions {
  severityMap: Readonly<Record<Severity, PagerDutySeverity>>;
  changes: 'trigger' | 'skip';
  /** `console.url`: triggers link to the entity's page and the Incidents page. */
  consoleUrl?: string | undefined;
}

/** PagerDuty's limits on a summary and a dedup key. */
export const MAX_SUMMARY_CHARS = 1_024;
export const MAX_DEDUP_KEY_CHARS = 255;
/** `custom_details` larger than this (as JSON) carry the event's identity without its data. */
export const MAX_DETAILS_BYTES = 64 * 1_024;

const ENTITY_PAGES = new Set(['vehicle', 'robot']);

/** The installation an event comes from: its `source` is `fleetwatch/<installation>`. */
export function installationOf(event: FleetEvent): string {
  const slash = event.source.indexOf('/');
  return slash === -1 ? event.source : event.source.slice(slash + 1);
}

/** The dedup key of `name` (an incident id or `event/<id>`) in the event's installation. */
export function dedupKey(event: FleetEvent, name: string): string {
  const key = `${installationOf(event)}/${name}`;
  return key.length <= MAX_DEDUP_KEY_CHARS ? key : `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/** At most 1,024 characters (code points, so no character is cut in half); a cut one ends in `…`. */
export function boundedSummary(text: string): string {
  const chars = [...text];
  return chars.length <= MAX_SUMMARY_CHARS ? text : `${chars.slice(0, MAX_SUMMARY_CHARS - 1).join('')}…`;
}

export function kindOf(subject: string): string {
  const slash = subject.indexOf('/');
  return slash === -1 ? subject : subject.slice(0, slash);
}

function customDetails(event: FleetEvent, incident: string | undefined): Record<string, unknown> {
  const identity = {
    event_id: event.id,
    type: event.type,
    subject: event.subject,
    ...(incident === undefined ? {} : { incident }),
  };
  const details = { ...identity, data: event.data };
  const bytes = Buffer.byteLength(JSON.stringify(details));
  if (bytes <= MAX_DETAILS_BYTES) return details;
  return { ...identity, data: `left out: ${bytes} bytes of JSON; the event log has event ${event.id}` };
}

function links(event: FleetEvent, base: string): Array<{ href: string; text: string }> {
  const kind = kindOf(event.subject);
  const id = event.subject.slice(kind.length + 1);
  const found: Array<{ href: string; text: string }> = [];
  if (ENTITY_PAGES.has(kind) && id !== '') {
    found.push({ href: consolePageUrl(base, kind, id), text: `${kind} ${id} in fleetwatch` });
  }
  found.push({ href: consolePageUrl(base, 'incidents'), text: 'open incidents in fleetwatch' });
  return found;
}

export function trigger(
  event: FleetEvent,
  key: string,
  incident: string | undefined,
  options: PlanOptions,
): PlannedEvent {
  return {
    event_action: 'trigger',
    dedup_key: key,
    payload: {
      summary: boundedSummary(describeEvent(event)),
      source: event.subject,
      severity: options.severityMap[severityOf(event)],
      timestamp: event.time,
      component: kindOf(event.subject),
      group: installationOf(event),
      class: event.type,
      custom_details: customDetails(event, incident),
    },
    client: 'fleetwatch',
    ...(options.consoleUrl === undefined
      ? {}
      : { client_url: options.consoleUrl, links: links(event, options.consoleUrl) }),
  };
}

/** The incident keys an entity kind can have open (a removal closes them all). */
function incidentKeysOf(kind: string): string[] {
  const keys = new Set<string>();
  for (const entry of CATALOGUE) {
    if (entry.subject === kind && entry.incident?.role === 'fires') keys.add(entry.incident.key);
  }
  return [...keys];
}

const REMOVED = /^(vehicle|robot)\.removed$/;

/** What one notification says about one incident, reduced to what PagerDuty needs. */
export interface IncidentSteps {
  /** `<subject>#<key>` */
  id: string;
  dedupKey: string;
  /** The event that closed it (a resolving event or a removal), when one did. */
  resolve?: FleetEvent;
  /** The latest firing event since it was last closed. */
  trigger?: FleetEvent;
  /** The latest acknowledgement since that firing (or of an incident opened earlier). */
  acknowledge?: FleetEvent;
}

export type Step = { kind: 'incident'; steps: IncidentSteps } | { kind: 'change'; event: FleetEvent };

function record(steps: IncidentSteps, role: 'fires' | 'resolves' | 'acknowledges', event: FleetEvent): void {
  switch (role) {
    case 'fires':
      // A reminder repeats the same firing event: it stays one trigger.
      if (steps.trigger?.id === event.id) return;
      steps.trigger = event;
      delete steps.acknowledge;
      return;
    case 'resolves':
      steps.resolve = event;
      delete steps.trigger;
      delete steps.acknowledge;
      return;
    case 'acknowledges':
      // An acknowledgement of an incident this notification already closed is out of date.
      if (steps.resolve !== undefined && steps.trigger === undefined) return;
      steps.acknowledge = event;
  }
}

/** What a notification says, incident by incident and change by change, in first-appearance order. */
export function stepsOf(notification: Notification): Step[] {
  const order: Step[] = [];
  const incidents = new Map<string, IncidentSteps>();
  // Keyed by dedup key: the same incident id in two installations is two alerts.
  const incident = (event: FleetEvent, id: string): IncidentSteps => {
    const key = dedupKey(event, id);
    let steps = incidents.get(key);
    if (!steps) {
      steps = { id, dedupKey: key };
      incidents.set(key, steps);
      order.push({ kind: 'incident', steps });
    }
    return steps;
  };
  for (const event of notification.events) {
    const ref = incidentRefOf(event);
    if (ref) {
      record(incident(event, ref.id), ref.role, event);
      continue;
    }
    order.push({ kind: 'change', event });
    const removed = REMOVED.exec(event.type);
    if (removed?.[1]) {
      for (const key of incidentKeysOf(removed[1]))
        record(incident(event, incidentId(event.subject, key)), 'resolves', event);
    }
  }
  return order;
}

/** A change's own trigger (`<installation>/event/<id>`), or nothing with `changes: skip`. */
export function changeTrigger(event: FleetEvent, options: PlanOptions): PlannedEvent | undefined {
  if (options.changes !== 'trigger') return undefined;
  return trigger(event, dedupKey(event, `event/${event.id}`), undefined, options);
}

/** An incident's events: its resolve, then its trigger, then its acknowledgement, as it has them. */
export function incidentEvents(steps: IncidentSteps, options: PlanOptions): PlannedEvent[] {
  const { id, dedupKey: key, resolve, trigger: firing, acknowledge } = steps;
  const planned: PlannedEvent[] = [];
  if (resolve) planned.push({ event_action: 'resolve', dedup_key: key });
  if (firing) planned.push(trigger(firing, key, id, options));
  if (acknowledge) planned.push({ event_action: 'acknowledge', dedup_key: key });
  return planned;
}

/** The Events API events of a notification, one alert per incident, in the order they are to be sent. */
export function planEvents(notification: Notification, options: PlanOptions): PlannedEvent[] {
  const planned: PlannedEvent[] = [];
  for (const step of stepsOf(notification)) {
    if (step.kind === 'incident') planned.push(...incidentEvents(step.steps, options));
    else {
      const change = changeTrigger(step.event, options);
      if (change) planned.push(change);
    }
  }
  return planned;
}
