import { createHash } from 'node:crypto';
import { catalogueEntry, isFleetEventType } from '../../events/catalogue.js';
import { isSeverity, maxSeverity, severityOf } from '../../events/severity.js';
import type { FleetEvent } from '../../events/types.js';
import { canonicalJson } from '../../lib/stable-hash.js';

/**
 * Labels: the flat string map routes match on and groups are keyed by (Alertmanager's labels).
 *
 * Built-in labels of every event: `type`, `subject`, `severity`, `kind` (`vehicle`, `robot` or
 * `upstream`, from the subject) and `incident` (the catalogue's incident key, e.g. `vpn`; absent
 * when the type belongs to no incident). Entity tags (config `entity_tags`) are added under their
 * own names; a tag can never shadow a built-in label (the config schema rejects such names).
 *
 * Incident view. A resolving event (`vehicle.vpn.connected`) belongs to the incident its firing
 * counterpart (`vehicle.vpn.disconnected`) opened, the way an Alertmanager alert keeps its labels
 * when it resolves. `incidentLabels` gives those labels: `type` becomes the firing type and
 * `severity` the higher of the event's own and the firing type's. Routing matches either view
 * (so `severity: warning` routes also carry the resolution of a warning incident) and grouping uses
 * the incident view (so a resolution lands in the group whose incident it closes).
 */

export type Labels = Record<string, string>;

/** An entity's tags (config `entity_tags`): tag name → value. */
export type Tags = Readonly<Record<string, string>>;

export const BUILTIN_LABELS = ['type', 'subject', 'severity', 'kind', 'incident'] as const;

export type BuiltinLabel = (typeof BUILTIN_LABELS)[number];

/** `group_by: ['...']`: group by every label, i.e. one group per incident (or per type and subject). */
export const GROUP_BY_ALL = '...';

/** Severity belongs to events (`events/severity.ts`); routing names it among its labels. */
export { isSeverity, maxSeverity, severityOf, severityRank } from '../../events/severity.js';

/** `vehicle`, `robot` or `upstream`: the part of the subject before the first `/`. */
export function kindOf(subject: string): string {
  const slash = subject.indexOf('/');
  return slash > 0 ? subject.slice(0, slash) : '';
}

/** The incident an event fires or resolves, if any. */
export function incidentOf(
  type: string,
): { key: string; role: 'fires' | 'resolves'; counterpart: string } | undefined {
  if (!isFleetEventType(type)) return undefined;
  return catalogueEntry(type).incident ?? undefined;
}

/** True when the event closes an incident (`vehicle.vpn.connected`, `robot.health.up`, ...). */
export function isResolving(event: FleetEvent): boolean {
  return incidentOf(event.type)?.role === 'resolves';
}

/** The event's own labels. Entity tags come after the built-ins and never replace one. */
export function labelsFor(event: FleetEvent, tags: Tags = {}): Labels {
  const labels: Labels = {};
  for (const [name, value] of Object.entries(tags)) {
    if (typeof value === 'string') labels[name] = value;
  }
  labels.type = event.type;
  labels.subject = event.subject;
  labels.severity = severityOf(event);
  labels.kind = kindOf(event.subject);
  const incident = incidentOf(event.type);
  if (incident) labels.incident = incident.key;
  else delete labels.incident;
  return labels;
}

/**
 * The labels of the incident the event belongs to: for a resolving event, `type` is the firing
 * counterpart and `severity` the higher of its own and the counterpart's catalogue severity; any
 * other event's labels come back unchanged (the same object).
 */
export function incidentLabels(labels: Labels): Labels {
  const type = labels.type;
  if (type === undefined) return labels;
  const incident = incidentOf(type);
  if (incident?.role !== 'resolves' || !isFleetEventType(incident.counterpart)) return labels;
  const own = isSeverity(labels.severity) ? labels.severity : 'info';
  return {
    ...labels,
    type: incident.counterpart,
    severity: maxSeverity(own, catalogueEntry(incident.counterpart).severity),
  };
}

/** The values of `groupBy` in the labels (missing labels are `""`); `['...']` takes every label. */
export function groupLabels(groupBy: readonly string[], labels: Labels): Labels {
  if (groupBy.includes(GROUP_BY_ALL)) {
    return Object.fromEntries(
      Object.keys(labels)
        .sort()
        .map((name) => [name, labels[name] ?? '']),
    );
  }
  return Object.fromEntries(groupBy.map((name) => [name, labels[name] ?? '']));
}

const READABLE_MAX = 80;

/** Characters kept as they are in the readable part of a key; everything else becomes `_`. */
function readable(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]/g, '_');
}

/**
 * A stable group key: `<receiver>~<routeId>~<name=value,...>~<hash>`, e.g.
 * `ops~0.1~type=vehicle.vpn.disconnected~5f0c2e9a1b7d3c44`. The hash (sha256 of the canonical JSON
 * of route, receiver and group labels, 16 hex digits) makes it unique; the rest is for people and is
 * cut to 80 characters. Only `[A-Za-z0-9._=,~-]`: no `:`, so it is safe in BullMQ job ids, Redis
 * keys and URLs.
 */
export function groupKey(
  routeId: string,
  receiver: string,
  groupBy: readonly string[],
  labels: Labels,
): string {
  const values = groupLabels(groupBy, labels);
  const hash = createHash('sha256')
    .update(canonicalJson({ routeId, receiver, labels: values }))
    .digest('hex')
    .slice(0, 16);
  let text = Object.entries(values)
    .map(([name, value]) => `${readable(name)}=${readable(value)}`)
    .join(',');
  if (text.length > READABLE_MAX) text = text.slice(0, READABLE_MAX);
  return `${readable(receiver)}~${readable(routeId)}~${text || 'all'}~${hash}`;
}

/** Where an event goes for one route match: the group's key and labels. */
export interface GroupRef {
  key: string;
  labels: Labels;
}

/** The group an event joins under a route: group labels from the incident view of its labels. */
export function groupFor(
  event: FleetEvent,
  tags: Tags,
  route: { routeId: string; receiver: string; groupBy: readonly string[] },
): GroupRef {
  const labels = incidentLabels(labelsFor(event, tags));
  return {
    key: groupKey(route.routeId, route.receiver, route.groupBy, labels),
    labels: groupLabels(route.groupBy, labels),
  };
}
