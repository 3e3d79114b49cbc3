/**
 * Reading the detector states stored in snapshots (events/detectors), leniently: a state this
 * version does not know (another `v`, a half-written shape) reads as "nothing known", never as a
 * wrong value, and nothing here throws.
 */

export type StoredState = Readonly<Record<string, unknown>>;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A detector state of version 1, or undefined. */
export function stateV1(state: unknown): StoredState | undefined {
  return isRecord(state) && state.v === 1 ? state : undefined;
}

export const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

const numberOrNull = (value: unknown): number | null => (typeof value === 'number' ? value : null);

/** ISO 8601 of an epoch-ms time; null when there is none. */
export const iso = (ms: unknown): string | null =>
  typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : null;

/** A consecutive-threshold state (events/detectors/threshold.ts) as stored. */
export interface ThresholdReading {
  /** Whether the incident is open; null before the first good observation or firing. */
  alerting: boolean | null;
  /** Consecutive observations against the settled status. */
  streak: number;
  streakSince: number | null;
  incidentSince: number | null;
}

export function readThreshold(value: unknown): ThresholdReading | null {
  if (!isRecord(value)) return null;
  const { alerting, streak } = value;
  return {
    alerting: typeof alerting === 'boolean' ? alerting : null,
    streak: typeof streak === 'number' ? streak : 0,
    streakSince: numberOrNull(value.streakSince),
    incidentSince: numberOrNull(value.incidentSince),
  };
}

/**
 * What the last observation said and whether the incident is open: `good: false, alerting: false`
 * is a run of bad observations that has not crossed the threshold yet. `badSince` is the start of
 * the open incident, or of the current bad run.
 */
export function lastObserved(state: ThresholdReading | null): {
  good: boolean | null;
  alerting: boolean;
  badSince: string | null;
} {
  if (!state) return { good: null, alerting: false, badSince: null };
  const alerting = state.alerting === true;
  const streak = state.streak > 0;
  // `streak` counts observations against the settled status: bad while not alerting, good while alerting.
  const good = state.alerting === null ? (streak ? false : null) : alerting ? streak : !streak;
  const badSince = alerting ? iso(state.incidentSince) : good === false ? iso(state.streakSince) : null;
  return { good, alerting, badSince };
}

/**
 * The status fleetwatch has SETTLED on, the one its events announced: an open incident is bad
 * until the success threshold resolves it; a closed one is good even while a failure streak below
 * the threshold builds up. An entity never seen good whose failures have not reached the threshold
 * yet is bad: it was never seen otherwise. Undefined: nothing known.
 */
export function settledGood(state: ThresholdReading | null): boolean | undefined {
  if (!state) return undefined;
  if (state.alerting === true) return false;
  if (state.alerting === false) return true;
  return state.streak > 0 ? false : undefined;
}

/** A status with its number and its word (`cortex_status`, navigation goal status). */
export interface StatusPair {
  status: number | null;
  text: string | null;
}

export function readStatusPair(value: unknown): StatusPair | null {
  if (!isRecord(value)) return null;
  return { status: numberOrNull(value.status), text: stringOrNull(value.text) };
}

/** A tracked value (events/detectors/change.ts): `{ value }` once observed, else null. */
export function known(tracked: unknown): { value: unknown } | null {
  return isRecord(tracked) && Object.hasOwn(tracked, 'value') ? { value: tracked.value } : null;
}
