import type { Severity } from '../events/types.js';
import type { Muted, Mutes } from '../notifiers/muting/mutes.js';
import { compileMatcher, globProblem, type Matcher } from '../notifiers/routing/matcher.js';
import { acknowledgedAt, CLOSED_MAX, type IncidentRecord, type IncidentStore } from '../store/incidents.js';

/**
 * The incidents as `fleetwatch incidents` and `GET /api/incidents` show them: the records the
 * commit keeps (store/incidents.ts), each with whether it is muted right now — asked of the same
 * muting the notification step uses (`Mutes`: silences, maintenance windows and whatever else
 * mutes an event), never judged here — and whether it is acknowledged.
 *
 * Filters: `type` and `subject` are globs of the matcher language (any of several), `severity` a
 * minimum, `states` any of `INCIDENT_STATES` (default `open`). Sorted by `since`, oldest first
 * (then by id); paged with an opaque cursor.
 */

export const INCIDENT_STATES = [
  /** Every open incident. */
  'open',
  /** Open, neither muted nor acknowledged: what pages. */
  'active',
  'acknowledged',
  'silenced',
  'inhibited',
  'maintenance',
  /** Closed in the last 7 days (at most 10,000 kept). */
  'closed',
  /** Open and closed. */
  'all',
] as const;

export type IncidentStateFilter = (typeof INCIDENT_STATES)[number];

export function isIncidentState(value: string): value is IncidentStateFilter {
  return (INCIDENT_STATES as readonly string[]).includes(value);
}

export interface IncidentFilter {
  type?: readonly string[];
  subject?: readonly string[];
  severity?: Severity;
  states?: readonly IncidentStateFilter[];
}

/** Why a filter cannot be used (one line per problem, naming the field); empty when it can. */
export function filterProblems(filter: IncidentFilter): string[] {
  const problems: string[] = [];
  for (const field of ['type', 'subject'] as const) {
    for (const glob of filter[field] ?? []) {
      const problem = globProblem(glob);
      if (problem) problems.push(`${field}: "${glob}" ${problem}`);
    }
  }
  return problems;
}

export interface AcknowledgementView {
  by: string;
  comment: string;
  at: string;
  until: string;
  /** False once `until` has passed (or the incident closed). */
  active: boolean;
  eventId: string;
}

export interface IncidentView {
  id: string;
  subject: string;
  key: string;
  /** The firing type. */
  type: string;
  severity: Severity;
  state: 'open' | 'closed';
  since: string;
  /** The latest firing event's time, or when it closed. */
  changedAt: string;
  /** How long it has lasted (until now, or until it closed). */
  durationMs: number;
  eventId: string;
  closedAt: string | null;
  closedBy: string | null;
  /** Muted right now (open incidents only): why and by what. */
  muted: Muted | null;
  acknowledged: boolean;
  acknowledgement: AcknowledgementView | null;
}

export interface IncidentPage {
  items: IncidentView[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
  /** Incidents matching the filter. */
  total: number;
}

export function toView(record: IncidentRecord, muted: Muted | undefined, now: number): IncidentView {
  const end = record.closedAt === undefined ? now : Date.parse(record.closedAt);
  const acknowledged = acknowledgedAt(record, now);
  return {
    id: record.id,
    subject: record.subject,
    key: record.key,
    type: record.type,
    severity: record.severity,
    state: record.state,
    since: record.since,
    changedAt: record.changedAt,
    durationMs: Math.max(0, Math.round(end - Date.parse(record.since))) || 0,
    eventId: record.eventId,
    closedAt: record.closedAt ?? null,
    closedBy: record.closedBy ?? null,
    muted: record.state === 'open' ? (muted ?? null) : null,
    acknowledged,
    acknowledgement: record.ack ? { ...record.ack, active: acknowledged } : null,
  };
}

function matchesState(view: IncidentView, states: readonly IncidentStateFilter[]): boolean {
  return states.some((state) => {
    switch (state) {
      case 'all':
        return true;
      case 'closed':
        return view.state === 'closed';
      case 'open':
        return view.state === 'open';
      case 'active':
        return view.state === 'open' && view.muted === null && !view.acknowledged;
      case 'acknowledged':
        return view.state === 'open' && view.acknowledged;
      default:
        // silenced, inhibited, maintenance: the reason the muting gives.
        return view.state === 'open' && view.muted?.reason === state;
    }
  });
}

/** Cursors are opaque to clients: the sort key of the page's last item, base64url. */
export function encodeCursor(view: Pick<IncidentView, 'since' | 'id'>): string {
  return Buffer.from(JSON.stringify([view.since, view.id]), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): [since: string, id: string] | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && value.every((part) => typeof part === 'string')) {
      return [value[0] as string, value[1] as string];
    }
  } catch {
    // not a cursor of ours
  }
  return undefined;
}

function compare(a: Pick<IncidentView, 'since' | 'id'>, b: Pick<IncidentView, 'since' | 'id'>): number {
  if (a.since !== b.since) return a.since < b.since ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export interface IncidentReaderOptions {
  incidents: IncidentStore;
  /** Without it, nothing is reported muted. */
  mutes?: Mutes;
  now?: () => number;
}

export class IncidentReader {
  readonly #incidents: IncidentStore;
  readonly #mutes: Mutes | undefined;
  readonly #now: () => number;

  constructor(options: IncidentReaderOptions) {
    this.#incidents = options.incidents;
    this.#mutes = options.mutes;
    this.#now = options.now ?? Date.now;
  }

  /** One incident, open or closed (kept 7 days); undefined when there is none with that id. */
  async one(id: string): Promise<IncidentView | undefined> {
    const record = await this.#incidents.get(id);
    if (!record) return undefined;
    const [view] = await this.#views([record]);
    return view;
  }

  /** Incidents matching `filter` (see `filterProblems` for what it must be), one page. */
  async list(filter: IncidentFilter, page: { limit: number; cursor?: string }): Promise<IncidentPage> {
    const states = filter.states && filter.states.length > 0 ? filter.states : (['open'] as const);
    const wantsClosed = states.includes('closed') || states.includes('all');
    const wantsOpen = states.some((state) => state !== 'closed');
    const records = [
      ...(wantsOpen ? await this.#incidents.open() : []),
      ...(wantsClosed ? await this.#incidents.closed(CLOSED_MAX) : []),
    ];
    const matcher: Matcher = compileMatcher({
      ...(filter.type && filter.type.length > 0 ? { type: filter.type } : {}),
      ...(filter.subject && filter.subject.length > 0 ? { subject: filter.subject } : {}),
      ...(filter.severity ? { severity: filter.severity } : {}),
    });
    const matching = records.filter((record) =>
      matcher.matchesLabels({ type: record.type, subject: record.subject, severity: record.severity }),
    );
    const views = (await this.#views(matching)).filter((view) => matchesState(view, states)).sort(compare);
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
    const start =
      after === undefined
        ? 0
        : views.findIndex((view) => compare(view, { since: after[0], id: after[1] }) > 0);
    const from = start < 0 ? views.length : start;
    const items = views.slice(from, from + page.limit);
    const last = items.at(-1);
    const more = from + items.length < views.length;
    return { items, nextCursor: more && last ? encodeCursor(last) : null, total: views.length };
  }

  async #views(records: readonly IncidentRecord[]): Promise<IncidentView[]> {
    const now = this.#now();
    const check =
      this.#mutes && records.some((record) => record.state === 'open')
        ? await this.#mutes.at(now)
        : undefined;
    return records.map((record) =>
      toView(record, record.state === 'open' ? check?.(record.event) : undefined, now),
    );
  }
}
