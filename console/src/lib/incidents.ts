/**
 * Incidents as `GET /api/incidents` gives them, and what the console does with them without the
 * DOM: grouping (by a label, as the notifications' `group_by` groups events), the client-side text
 * filter, and the one-line state an operator reads. Plain TypeScript, so the rules are unit-tested.
 */

export type Severity = 'info' | 'warning' | 'critical';

export const SEVERITIES: readonly Severity[] = ['info', 'warning', 'critical'];

/** The API's `state=` values (README "HTTP API", `/api/incidents`). */
export const INCIDENT_STATE_FILTERS = [
  'open',
  'active',
  'acknowledged',
  'silenced',
  'inhibited',
  'maintenance',
  'closed',
  'all',
] as const;
export type IncidentStateFilter = (typeof INCIDENT_STATE_FILTERS)[number];

export interface Muted {
  reason: 'silenced' | 'maintenance' | 'inhibited';
  /** The silence id, the maintenance window's name or the inhibition rule's name. */
  by: string;
  source?: { type: string; subject: string };
}

export interface Acknowledgement {
  by: string;
  comment: string;
  at: string;
  until: string;
  active: boolean;
  eventId: string;
}

export interface Incident {
  id: string;
  subject: string;
  key: string;
  type: string;
  severity: Severity;
  state: 'open' | 'closed';
  since: string;
  changedAt: string;
  durationMs: number;
  eventId: string;
  closedAt: string | null;
  closedBy: string | null;
  muted: Muted | null;
  acknowledged: boolean;
  acknowledgement: Acknowledgement | null;
}

export interface IncidentPage {
  items: Incident[];
  nextCursor: string | null;
  total: number;
}

export function severityRank(severity: string): number {
  const rank = SEVERITIES.indexOf(severity as Severity);
  return rank < 0 ? -1 : rank;
}

/** The labels a list can be grouped by: those of `group_by` that an incident has. */
export const GROUP_LABELS = ['type', 'kind', 'severity', 'subject'] as const;
export type GroupLabel = (typeof GROUP_LABELS)[number];

export function kindOf(subject: string): string {
  const slash = subject.indexOf('/');
  return slash > 0 ? subject.slice(0, slash) : '';
}

export function labelOf(incident: Incident, label: GroupLabel): string {
  return label === 'kind' ? kindOf(incident.subject) : incident[label];
}

export interface IncidentGroup {
  /** The label's value shared by the group. */
  key: string;
  items: Incident[];
  /** The most severe of the group. */
  severity: Severity;
  /** How many of the group page right now (open, neither muted nor acknowledged). */
  active: number;
}

/**
 * Groups by one label: the most severe groups first, then the larger, then by name; inside a
 * group the incidents keep the API's order (oldest first).
 */
export function groupIncidents(items: readonly Incident[], label: GroupLabel): IncidentGroup[] {
  const groups = new Map<string, IncidentGroup>();
  for (const incident of items) {
    const key = labelOf(incident, label);
    let group = groups.get(key);
    if (!group) {
      group = { key, items: [], severity: incident.severity, active: 0 };
      groups.set(key, group);
    }
    group.items.push(incident);
    if (severityRank(incident.severity) > severityRank(group.severity)) group.severity = incident.severity;
    if (isActive(incident)) group.active += 1;
  }
  return [...groups.values()].sort(
    (a, b) =>
      severityRank(b.severity) - severityRank(a.severity) ||
      b.items.length - a.items.length ||
      (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
}

export function isActive(incident: Incident): boolean {
  return incident.state === 'open' && incident.muted === null && !incident.acknowledged;
}

/** Case-insensitive: every word of `text` is in the type or the subject. Empty text keeps all. */
export function matchesText(incident: Incident, text: string): boolean {
  const words = text
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word !== '');
  const haystack = `${incident.type} ${incident.subject}`.toLowerCase();
  return words.every((word) => haystack.includes(word));
}

/** The entity page of a subject (`vehicle/veh-0001` → vehicle, veh-0001); none for others. */
export function entityOf(subject: string): { page: 'vehicle' | 'robot'; id: string } | undefined {
  const slash = subject.indexOf('/');
  if (slash <= 0 || slash === subject.length - 1) return undefined;
  const kind = subject.slice(0, slash);
  if (kind !== 'vehicle' && kind !== 'robot') return undefined;
  return { page: kind, id: subject.slice(slash + 1) };
}

/** The state in words: what an operator needs to know before acting. */
export function describeState(incident: Incident): string[] {
  const lines: string[] = [];
  if (incident.state === 'closed') {
    lines.push(`closed${incident.closedBy ? ` by ${incident.closedBy}` : ''}`);
    return lines;
  }
  if (incident.muted) {
    const { reason, by, source } = incident.muted;
    if (reason === 'silenced') lines.push(`silenced (silence ${by})`);
    else if (reason === 'maintenance') lines.push(`in maintenance (${by})`);
    else lines.push(`inhibited by rule ${by}${source ? ` (${source.type} on ${source.subject})` : ''}`);
  }
  if (incident.acknowledged && incident.acknowledgement) {
    lines.push(`acknowledged by ${incident.acknowledgement.by}`);
  }
  if (lines.length === 0) lines.push('active');
  return lines;
}
