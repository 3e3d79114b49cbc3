import type { IncidentKey } from '../catalogue.js';
import { isRecord } from './define.js';
import { thresholdStateSchema } from './threshold.js';

/**
 * Where each incident lives in the stored state, and how far along it is. The detectors own their
 * state, so this is where the notification step learns, from a snapshot alone, whether an incident
 * of one subject fires — without waiting for the event that says so to reach it — and whether that
 * is settled for a given time (the inhibition wait, notifiers/muting/mutes.ts):
 *
 * - `clear`: not firing, no bad streak under way;
 * - `pending`: a bad streak is under way but has not reached its threshold (it may fire soon);
 * - `firing`: the incident is open;
 * - `resolving`: open, with a good streak under way that has not reached its threshold.
 *
 * An incident of a rule without a threshold (stale, stuck, backlog) is `clear` or `firing`.
 */

export type IncidentStatus = 'clear' | 'pending' | 'firing' | 'resolving';

/** The snapshot an incident's state is kept in (`{kind}:{id}:{facet}`; the monitor's under `fleet`). */
export interface IncidentFacet {
  kind: 'vehicle' | 'robot' | 'fleet';
  id: string;
  facet: string;
}

export interface IncidentSource {
  ref: IncidentFacet;
  /**
   * True when an observation's time is the END of what it observed (a counting window): it then
   * covers only times before it. Otherwise an observation at `t` covers `t` and everything before.
   */
  windowEnd: boolean;
  status(state: unknown): IncidentStatus | undefined;
}

function thresholdStatus(field: string) {
  return (state: unknown): IncidentStatus | undefined => {
    if (!isRecord(state)) return undefined;
    if (state[field] === null) return 'clear';
    const parsed = thresholdStateSchema.safeParse(state[field]);
    if (!parsed.success) return undefined;
    const { alerting, streak } = parsed.data;
    if (alerting === true) return streak > 0 ? 'resolving' : 'firing';
    return streak > 0 ? 'pending' : 'clear';
  };
}

function openWhile(field: string, open: (value: unknown) => boolean) {
  return (state: unknown): IncidentStatus | undefined => {
    if (!isRecord(state) || !Object.hasOwn(state, field)) return undefined;
    return open(state[field]) ? 'firing' : 'clear';
  };
}

const isSet = (value: unknown) => value !== null && value !== undefined;

type Kind = 'vehicle' | 'robot' | 'upstream' | 'poller';

/**
 * Per incident key: the subject kind, the facet that holds it, and how to read its status. The
 * monitor's own subjects (`upstream`, `poller`) are kept under `fleet`, `{kind}` by default, or
 * `fleetId`, with the subject's name as the facet.
 */
const SOURCES: {
  readonly [Key in IncidentKey]: {
    kind: Kind;
    facet: string;
    fleetId?: string;
    status: IncidentSource['status'];
  };
} = {
  vpn: { kind: 'vehicle', facet: 'link', status: thresholdStatus('vpn') },
  reachability: { kind: 'vehicle', facet: 'power', status: thresholdStatus('reachability') },
  stale: { kind: 'vehicle', facet: 'power', status: openWhile('staleSince', isSet) },
  stuck: { kind: 'vehicle', facet: 'power', status: openWhile('stuck', (value) => value === true) },
  health: { kind: 'robot', facet: 'health', status: thresholdStatus('health') },
  backlog: { kind: 'robot', facet: 'command_queue', status: openWhile('backlogSince', isSet) },
  // The facet is the upstream's name; its observations are counting windows, stamped at their end.
  upstream: { kind: 'upstream', facet: '', status: thresholdStatus('health') },
  // The facet is the name of the upstream that serves the list; its observations are list reads.
  list: { kind: 'upstream', facet: '', fleetId: 'list', status: thresholdStatus('list') },
  // The facet is the poller's name; its observations are ticks, stamped at the tick's start.
  pace: { kind: 'poller', facet: '', status: thresholdStatus('pace') },
};

/** The facets (per entity kind) the table names, for the test that checks them against the pollers. */
export const INCIDENT_FACETS: readonly { key: IncidentKey; kind: Kind; facet: string }[] = Object.entries(
  SOURCES,
).map(([key, source]) => ({ key: key as IncidentKey, kind: source.kind, facet: source.facet }));

/** Where the incident `key` of `subject` is kept; undefined when that subject cannot have it. */
export function incidentSource(subject: string, key: string): IncidentSource | undefined {
  if (!Object.hasOwn(SOURCES, key)) return undefined;
  const source = SOURCES[key as IncidentKey];
  const slash = subject.indexOf('/');
  const kind = subject.slice(0, Math.max(0, slash));
  const id = subject.slice(slash + 1);
  if (slash <= 0 || id === '' || kind !== source.kind) return undefined;
  if (source.kind === 'upstream' || source.kind === 'poller') {
    return {
      ref: { kind: 'fleet', id: source.fleetId ?? source.kind, facet: id },
      windowEnd: source.fleetId === undefined,
      status: source.status,
    };
  }
  return { ref: { kind: source.kind, id, facet: source.facet }, windowEnd: false, status: source.status };
}

/** Whether an observation made at `observedMs` covers time `t` (see `IncidentSource.windowEnd`). */
export function coversTime(
  source: Pick<IncidentSource, 'windowEnd'>,
  observedMs: number,
  t: number,
): boolean {
  return source.windowEnd ? observedMs > t : observedMs >= t;
}
