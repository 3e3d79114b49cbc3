import { z } from 'zod';
import type { Detector, DetectorResult, Observation, ObservationError } from '../types.js';

/** The two clocks a detector may read: when the observation was made, and the caller's now. */
export interface Clock {
  /** `observation.at` in epoch ms (the caller's now when `at` is unreadable). */
  at: number;
  /** `context.now` (the observation time when `now` is unusable). */
  now: number;
}

export interface DetectorSpec<State, Options> {
  /** The state before anything was observed. */
  initial(): State;
  /** The previous state when it is usable, else undefined (it is then treated as absent). */
  parseState(raw: unknown): State | undefined;
  /** Options with defaults filled in; must accept anything. */
  options(raw: unknown): Options;
  /** A successful observation. `value` is unchecked: validate it, ignore what is unusable. */
  onValue(state: State, value: unknown, clock: Clock, options: Options): DetectorResult<State>;
  /** A failed observation: may feed reachability counters, never a state-change event. */
  onError(state: State, error: ObservationError, clock: Clock, options: Options): DetectorResult<State>;
}

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
  return error;
}

/**
 * Wraps a detector's two handlers into a `Detector` that honours the contract whatever it is given:
 * an unusable previous state is treated as absent, a malformed observation or context changes
 * nothing, and an unexpected exception yields the (parsed) previous state and no events.
 */
export function defineDetector<State, Value, Options, Accepts = Partial<Options>>(
  spec: DetectorSpec<State, Options>,
): Detector<State, Value, Accepts> {
  return (previous, observation: Observation<Value>, context) => {
    let state: State;
    try {
      state = spec.parseState(previous) ?? spec.initial();
    } catch {
      state = spec.initial();
    }
    try {
      const raw: unknown = observation;
      if (!isRecord(raw)) return { state, events: [] };
      const options = spec.options(isRecord(context) ? context.options : undefined);
      const clock = clockOf(raw, context);
      if (raw.ok === true) return spec.onValue(state, raw.value, clock, options);
      if (raw.ok === false) return spec.onError(state, errorOf(raw.error), clock, options);
      return { state, events: [] };
    } catch {
      return { state, events: [] };
    }
  };
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
