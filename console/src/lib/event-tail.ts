/**
 * The live events page's memory and filters, without the DOM: a bounded list, newest first, and the
 * client-side filters (type and subject globs as the API reads them, a minimum severity, which the
 * stream itself does not filter).
 */
import { severityRank } from './incidents.js';

/**
 * An event as the stream delivers it (`StreamedEvent` of stream.ts, which needs the DOM; this
 * module does not, so the server-side type check and the unit tests read it too).
 */
export interface TailEvent {
  streamId: string;
  id: string;
  type: string;
  subject: string;
  time: string;
  data: Record<string, unknown>;
  /** The sentence fleetwatch says the event in, when the API sent it. */
  summary?: string;
}

/** The page keeps at most this many events (the oldest go first). */
export const MAX_TAIL_EVENTS = 1_000;

/**
 * A glob as the API reads `type=` (`*` any run of characters, `?` one character, anchored), so the
 * page filters what it holds the way the server filters what it sends.
 */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (const char of glob) {
    if (char === '*') source += '.*';
    else if (char === '?') source += '.';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}

export function isGlob(text: string): boolean {
  return /[*?]/.test(text);
}

export interface TailFilter {
  /** A type glob; empty for any. */
  type: string;
  /** A subject, or a glob of one; empty for any. */
  subject: string;
  /** Minimum severity; empty for any. */
  severity: string;
}

export function eventSeverity(event: Pick<TailEvent, 'data'>): string {
  const severity = event.data['severity'];
  return typeof severity === 'string' ? severity : '';
}

export function tailMatcher(filter: TailFilter): (event: TailEvent) => boolean {
  const type = filter.type.trim() === '' ? undefined : globToRegExp(filter.type.trim());
  const subject = filter.subject.trim() === '' ? undefined : globToRegExp(filter.subject.trim());
  const minimum = filter.severity === '' ? -1 : severityRank(filter.severity);
  return (event) =>
    (!type || type.test(event.type)) &&
    (!subject || subject.test(event.subject)) &&
    severityRank(eventSeverity(event)) >= minimum;
}

/** Adds events (in arrival order) to a newest-first list, skipping ones it holds, bounded by `max`. */
export function prepend<Event extends TailEvent>(
  list: readonly Event[],
  arrived: readonly Event[],
  max = MAX_TAIL_EVENTS,
): Event[] {
  const known = new Set(list.map((event) => event.id));
  const fresh: Event[] = [];
  for (const event of arrived) {
    if (known.has(event.id)) continue;
    known.add(event.id);
    fresh.push(event);
  }
  if (fresh.length === 0) return list as Event[];
  return [...fresh.reverse(), ...list].slice(0, max);
}

/** Data a row shows in its own columns (severity, the subject's id) or first (the change). */
const SAID_ELSEWHERE = new Set(['severity', 'previous', 'current', 'vehicleId', 'deviceId']);

function short(value: unknown): string {
  if (value === null || value === undefined) return '—';
  // A status pair (`{"status": 4, "text": "SUCCEEDED"}`) by its text, as the receivers write it.
  if (typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    const text = record['text'] ?? record['status_text'];
    if (typeof text === 'string' && text !== '') return short(text);
  }
  if (typeof value === 'string') return value.length > 60 ? `${value.slice(0, 59)}…` : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

/**
 * An event in one line: the sentence the API sent with it (as the CLI and the notifications word
 * it), else what its data says (`summarize`).
 */
export function sayEvent(event: { summary?: string; data: Record<string, unknown> }, maxFields = 4): string {
  return typeof event.summary === 'string' && event.summary !== ''
    ? event.summary
    : summarize(event.data, maxFields);
}

/**
 * What an event's data says, in one line: its `summary` field when it has one (a configuration
 * change's), else the key data — `previous → current` when both are there, then the other fields
 * (at most `maxFields`).
 */
export function summarize(data: Record<string, unknown>, maxFields = 4): string {
  const summary = data['summary'];
  if (typeof summary === 'string' && summary !== '') {
    return summary.length > 200 ? `${summary.slice(0, 199)}…` : summary;
  }
  const parts: string[] = [];
  if ('previous' in data || 'current' in data)
    parts.push(`${short(data['previous'])} → ${short(data['current'])}`);
  const rest = Object.entries(data).filter(([name]) => !SAID_ELSEWHERE.has(name));
  for (const [name, value] of rest.slice(0, maxFields)) parts.push(`${name} ${short(value)}`);
  if (rest.length > maxFields) parts.push('…');
  return parts.join(', ');
}
