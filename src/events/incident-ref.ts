import { catalogueEntry, EVENT, isFleetEventType } from './catalogue.js';
import type { FleetEvent } from './types.js';

/**
 * Which open incident an event is about, the way every receiver that tracks incidents on its own
 * side (Alertmanager alerts, PagerDuty dedup keys) and the aggregation groups name it. An incident
 * is open for `(subject, key)` at most once at a time, so `<subject>#<key>` names it while it is
 * open; the stored record's id (`vpn-veh-0003-1f2e3d4c`) is not known to a resolving event.
 */
export interface IncidentRef {
  /** `<subject>#<key>`: `vehicle/veh-0003#vpn`. */
  id: string;
  subject: string;
  /** The catalogue's incident key: `vpn`, `health`, ... */
  key: string;
  /** The firing type of the incident. */
  firing: string;
  /** What the event does to it. */
  role: 'fires' | 'resolves' | 'acknowledges';
}

export function incidentId(subject: string, key: string): string {
  return `${subject}#${key}`;
}

/** The incident the event fires, resolves or acknowledges; undefined for any other event. */
export function incidentRefOf(event: FleetEvent): IncidentRef | undefined {
  if (event.type === EVENT.incidentAcknowledged) {
    const { entity, key, firing } = event.data as { entity?: unknown; key?: unknown; firing?: unknown };
    if (typeof entity !== 'string' || typeof key !== 'string' || typeof firing !== 'string') return undefined;
    return { id: incidentId(entity, key), subject: entity, key, firing, role: 'acknowledges' };
  }
  if (!isFleetEventType(event.type)) return undefined;
  const incident = catalogueEntry(event.type).incident;
  if (!incident) return undefined;
  const firing = incident.role === 'fires' ? event.type : incident.counterpart;
  return {
    id: incidentId(event.subject, incident.key),
    subject: event.subject,
    key: incident.key,
    firing,
    role: incident.role,
  };
}

/**
 * When the incident an event fires began: its `since` (or `pendingSince`: the first bad reading,
 * before the threshold confirmed it) when the event carries a readable one, else the event's time.
 * The incident record and every receiver that says when an incident started read it here.
 */
export function incidentStart(event: Pick<FleetEvent, 'time' | 'data'>): string {
  for (const name of ['since', 'pendingSince'] as const) {
    const value = event.data[name];
    if (typeof value === 'string' && Number.isFinite(Date.parse(value))) return value;
  }
  return event.time;
}
