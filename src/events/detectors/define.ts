import { z } from 'zod';
import type { Detector, DetectorResult, Observation, ObservationError } from '../types.js';

/** The two clocks a detector may read: when the observation was made, and the caller's now. */
export interface Clock {
  /** `observation.at` in epoch ms (the caller's now when `at` is unreadable). */
  at: number;
  /** `context.now` (the observation time when `now` is unusable). */
  now: number;
}

export type DetectorSpec<State, Options> = {
  /** The state before anything was observed. */
  initial(): State;
  /** The stored state: a previous state it rejects is unusable, and treated as absent. */
  state: z.ZodType<State>;
  /** A successful observation. `value` is unchecked: validate it, ignore what is unusable. */
  onValue(state: State, value: unknown, clock: Clock, options: Options): DetectorResult<State>;
  /**
   * A failed observation: may feed reachability counters, never a state-change event. Left out,
   * a failed observation changes nothing. Never called for an `access` error (fleetwatch could not
   * get in): that is not the entity failing (`countsAgainstEntity`).
   */
  onError?(state: State, error: ObservationError, clock: Clock, options: Options): DetectorResult<State>;
  /**
   * How to put an incident this detector owns back into its state after the store was emptied
   * (store-marker.ts): per incident key, the state given an open incident, so that the next
   * observation resolves it (with its true duration) or keeps it open without firing again.
   */
  seeds?: Readonly<Record<string, (state: State, incident: SeedIncident) => State>>;
} & OptionsSpec<Options>;

/** An open incident to seed a detector's state with (see `DetectorSpec.seeds`). */
export interface SeedIncident {
  /** The catalogue incident key. */
  key: string;
  /** When the incident began (epoch ms). */
  since: number;
  /** The latest firing event's data (what it reported when it fired). */
  data: Readonly<Record<string, unknown>>;
}

/** A detector that can also seed its state with open incidents (see `DetectorSpec.seeds`). */
export type SeedableDetector<State, Value, Options> = Detector<State, Value, Options> & {
  /** The incident keys it can seed. */
  readonly seeds: readonly string[];
  /**
   * `previous` (an unusable one counts as absent) with the incident seeded; undefined when the
   * detector does not own the key or the incident cannot be put into its state.
   */
  seed(previous: unknown, incident: SeedIncident): State | undefined;
};

/** Options with defaults filled in (must accept anything); left out by a detector that takes none. */
type OptionsSpec<Options> = undefined extends Options
  ? { options?(raw: unknown): Options }
  : { options(raw: unknown): Options };

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The times an event can carry: RFC 3339 (and the catalogue's date-time) writes years 0000–9999
 * only, so a clock reading outside them is as unusable as NaN. Keeping both clocks inside also
 * keeps every difference between them a safe integer.
 */
const EARLIEST_MS = Date.parse('0000-01-01T00:00:00.000Z');
const LATEST_MS = Date.parse('9999-12-31T23:59:59.999Z');

function usableTime(value: unknown): number | undefined {
  return typeof value === 'number' && value >= EARLIEST_MS && value <= LATEST_MS ? value : undefined;
}

/**
 * A time kept in a detector's state. Only `clockOf` readings are stored, so any other number means
 * the snapshot is corrupt: the state is then unusable (treated as absent) rather than turned into
 * durations and times no event can carry.
 */
export const storedTimeSchema = z.number().min(EARLIEST_MS).max(LATEST_MS);

export function clockOf(observation: unknown, context: unknown): Clock {
  const now = isRecord(context) ? usableTime(context.now) : undefined;
  const reported =
    isRecord(observation) && typeof observation.at === 'string' ? Date.parse(observation.at) : undefined;
  const at = usableTime(reported) ?? now ?? 0;
  return { at, now: now ?? at };
}

function errorOf(raw: unknown): ObservationError {
  const source = isRecord(raw) ? raw : {};
  const error: ObservationError = {
    code: typeof source.code === 'string' && source.code !== '' ? source.code : 'unknown',
    message: typeof source.message === 'string' ? source.message : '',
  };
  const status = source.status;
  if (typeof status === 'number' && Number.isInteger(status)) error.status = status;
  if (source.class === 'access') error.class = 'access';
  return error;
}

/**
 * The one rule for failures that are not the entity's: an observation error of class `access`
 * (no token, 401 after re-authentication, 403; see ObservationError) says nothing about the entity,
 * so no detector sees it. The pipeline still records it as the facet's last error and counts it;
 * the upstream windows turn it into the monitor's own incident.
 */
export function countsAgainstEntity(error: ObservationError): boolean {
  return error.class !== 'access';
}

/**
 * Wraps a detector's two handlers into a `Detector` that honours the contract whatever it is given:
 * an unusable previous state is treated as absent, a malformed observation or context changes
 * nothing, an `access` error changes nothing (`countsAgainstEntity`), and an unexpected exception
 * yields the (parsed) previous state and no events.
 */
export function defineDetector<State, Value, Options, Accepts = Partial<Options>>(
  spec: DetectorSpec<State, Options>,
): SeedableDetector<State, Value, Accepts> {
  const usable = (previous: unknown): State => {
    try {
      const parsed = spec.state.safeParse(previous);
      return parsed.success ? parsed.data : spec.initial();
    } catch {
      return spec.initial();
    }
  };
  // The same options object comes with every observation of a poll job: read once per object.
  const readOptions = new WeakMap<object, Options>();
  const optionsOf = (raw: unknown): Options => {
    // Without `options` the detector takes none: Options is undefined (see OptionsSpec).
    if (!spec.options) return undefined as Options;
    if (!isRecord(raw)) return spec.options(raw);
    if (readOptions.has(raw)) return readOptions.get(raw) as Options;
    const options = spec.options(raw);
    readOptions.set(raw, options);
    return options;
  };
  const detector: Detector<State, Value, Accepts> = (previous, observation: Observation<Value>, context) => {
    const state = usable(previous);
    try {
      const raw: unknown = observation;
      if (!isRecord(raw)) return { state, events: [] };
      const options = optionsOf(isRecord(context) ? context.options : undefined);
      const clock = clockOf(raw, context);
      if (raw.ok === true) return spec.onValue(state, raw.value, clock, options);
      if (raw.ok === false) {
        const error = errorOf(raw.error);
        if (!countsAgainstEntity(error)) return { state, events: [] };
        return spec.onError?.(state, error, clock, options) ?? { state, events: [] };
      }
      return { state, events: [] };
    } catch {
      return { state, events: [] };
    }
  };
  const seeds = spec.seeds ?? {};
  return Object.assign(detector, {
    seeds: Object.keys(seeds),
    seed(previous: unknown, incident: SeedIncident): State | undefined {
      const seedOne = Object.hasOwn(seeds, incident.key) ? seeds[incident.key] : undefined;
      if (!seedOne) return undefined;
      try {
        const seeded = spec.state.safeParse(seedOne(usable(previous), incident));
        return seeded.success ? seeded.data : undefined;
      } catch {
        return undefined;
      }
    },
  });
}

/** ISO 8601 for an epoch-ms time; never throws (out-of-range times clamp to the epoch). */
export function isoOf(ms: number): string {
  const date = new Date(ms);
  return Number.isFinite(date.getTime()) ? date.toISOString() : new Date(0).toISOString();
}

/** A non-negative whole number of milliseconds between two times. */
export function elapsed(from: number, to: number): number {
  const ms = Math.round(to - from);
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/** The error as it appears in event data: code and status, never the message. */
export function errorRef(error: ObservationError): { code: string; status?: number } {
  return error.status === undefined ? { code: error.code } : { code: error.code, status: error.status };
}

export { isRecord };

/**
 * A detector of the monitor's own subjects (`upstream/<name>`, `poller/<name>`), whose snapshots
 * live under `fleet` and so name no entity: its drafts get `data[field] = name`, which makes the
 * events' subject `<kind>/<name>` (see `toFleetEvent`).
 */
export function naming<State, Value, Options>(
  detector: Detector<State, Value, Options>,
  field: string,
  name: string,
): Detector<State, Value, Options> {
  return (previous, observation, context) => {
    const result = detector(previous, observation, context);
    return {
      state: result.state,
      events: result.events.map((draft) => ({ ...draft, data: { ...draft.data, [field]: name } })),
    };
  };
}
