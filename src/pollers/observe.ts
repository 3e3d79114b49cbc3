import type { Observation, ObservationError } from '../events/types.js';
import { isAccessFailure, oneLine, UpstreamError } from '../upstream/errors.js';

/**
 * An upstream failure as an observation error: the client's typed code (`timeout`, `network`,
 * `bad_gateway`, `not_found`, `invalid_payload`, ...) and HTTP status; the message is the client's
 * own one-line, secret-scrubbed text; `class: 'access'` when fleetwatch could not get in (no token,
 * 401, 403: `isAccessFailure`), which no detector counts against the entity. Anything else (a bug)
 * becomes `internal`.
 */
export function toObservationError(error: unknown): ObservationError {
  if (error instanceof UpstreamError) {
    const out: ObservationError = { code: error.code, message: error.message };
    if (error.status !== undefined) out.status = error.status;
    if (isAccessFailure(error)) out.class = 'access';
    return out;
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'internal', message: oneLine(message, 300) };
}

/**
 * Runs one upstream read and turns it into an observation stamped with the time the answer (or
 * the failure) arrived. A failure is an observation error, never thrown, unless `signal` was
 * aborted: a poll cut short by shutdown observed nothing.
 */
export async function observe<T>(
  now: () => number,
  read: () => Promise<T>,
  signal?: AbortSignal,
): Promise<Observation<T>> {
  try {
    const value = await read();
    return { ok: true, at: new Date(now()).toISOString(), value };
  } catch (error) {
    if (signal?.aborted) throw signal.reason ?? error;
    return { ok: false, at: new Date(now()).toISOString(), error: toObservationError(error) };
  }
}

/** The same observation with its value mapped (errors pass through). */
export function mapObservation<T, U>(observation: Observation<T>, map: (value: T) => U): Observation<U> {
  return observation.ok ? { ok: true, at: observation.at, value: map(observation.value) } : observation;
}

/**
 * `Promise.all(items.map(fn))` with at most `limit` calls under way at once; results in order.
 * The first failure stops further calls: those under way are waited for, then it is thrown (so
 * nothing a call does outlives the returned promise).
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failure) {
      const index = next;
      next += 1;
      try {
        results[index] = await fn(items[index]!, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  const workers = Array.from({ length: Math.min(Math.max(1, Math.floor(limit)), items.length) }, worker);
  await Promise.all(workers);
  if (failure) throw failure.error;
  return results;
}
