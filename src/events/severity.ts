import { findEntry } from './catalogue.js';
import type { FleetEvent, Severity } from './types.js';

/** fleetwatch's three severities, ordered: what every part of it compares events by. */
const SEVERITY_RANK: Readonly<Record<Severity, number>> = { info: 0, warning: 1, critical: 2 };

export function severityRank(severity: Severity): number {
  return SEVERITY_RANK[severity];
}

export function isSeverity(value: unknown): value is Severity {
  return typeof value === 'string' && Object.hasOwn(SEVERITY_RANK, value);
}

/** The higher of two severities. */
export function maxSeverity(a: Severity, b: Severity): Severity {
  return SEVERITY_RANK[a] >= SEVERITY_RANK[b] ? a : b;
}

/** The event's severity (`data.severity`), falling back to the catalogue's, then `info`. */
export function severityOf(event: Pick<FleetEvent, 'type' | 'data'>): Severity {
  const declared = event.data?.severity;
  if (isSeverity(declared)) return declared;
  return findEntry(event.type)?.severity ?? 'info';
}

/** The highest severity among `events`; `fallback` when there are none. */
export function highestSeverity(
  events: Iterable<Pick<FleetEvent, 'type' | 'data'>>,
  fallback: Severity,
): Severity {
  let highest: Severity | undefined;
  for (const event of events) {
    const severity = severityOf(event);
    highest = highest === undefined ? severity : maxSeverity(highest, severity);
  }
  return highest ?? fallback;
}
