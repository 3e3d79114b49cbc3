import { z } from 'zod';

/**
 * The one "did it change?" rule for tracked values. A tracked value is stored as `{ value }` so that
 * `null` (a real reading: "no address", "nobody holds the lease") differs from "never observed"
 * (the field itself is null). `undefined` as the current value means "not observed this time": it
 * never counts as a change and keeps what was known. The first observed value is the baseline and
 * is never reported.
 */

export interface Known<T> {
  value: T;
}

export const knownSchema = <T extends z.ZodType>(value: T) => z.object({ value }).nullable();

export interface TrackResult<T> {
  known: Known<T> | null;
  change: { previous: T; current: T } | null;
}

/** The default `keep`: made once, not per call (ARCHITECTURE.md, *Hot paths*). */
function keepCurrent<T>(_previous: T, current: T): T {
  return current;
}

/**
 * `equals` decides what counts as a change; when it says "same", `keep` decides what is stored
 * (default: the current value), e.g. to keep details the current observation left out.
 */
export function track<T>(
  known: Known<T> | null,
  current: T | undefined,
  equals: (a: T, b: T) => boolean = Object.is,
  keep: (previous: T, current: T) => T = keepCurrent,
): TrackResult<T> {
  if (current === undefined) return { known, change: null };
  if (known === null) return { known: { value: current }, change: null };
  if (equals(known.value, current)) return { known: { value: keep(known.value, current) }, change: null };
  return { known: { value: current }, change: { previous: known.value, current } };
}
