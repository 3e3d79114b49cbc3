/**
 * How often, and how far apart, something is tried again after a passing failure: a count of
 * attempts and the wait before each one after the first. A receiver kind chooses its policy (see
 * `NotifierFactory.retryPolicy`); the delivery worker only asks it.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included; after the last, the work is given up. */
  readonly attempts: number;
  /**
   * Milliseconds to wait before attempt `attempt` (2 … `attempts`), jittered; 0 for attempt 1;
   * `undefined` when there is no such attempt.
   */
  delayBefore(attempt: number): number | undefined;
  /** One line for logs: `8 attempts, exponential back-off (full jitter) from 1000 ms to 300000 ms` */
  readonly description: string;
}

export interface ExponentialBackoff {
  /** The ceiling of the first back-off (before attempt 2); it doubles every attempt. */
  baseMs: number;
  /** The largest ceiling. */
  capMs: number;
  attempts: number;
}

/** Policy settings that replace a kind's defaults (tests, and operators through code). */
export interface RetryPolicyOverrides {
  /** Replaces parts of the exponential back-off, for kinds that back off exponentially. */
  backoff?: Partial<ExponentialBackoff>;
  /** Replaces the schedule (delay before each attempt), for kinds that retry on a schedule. */
  schedule?: readonly number[];
  /** Source of the jitter, in [0, 1); `Math.random` by default. */
  random?: () => number;
}

/**
 * Full jitter (a uniformly random delay between 0 and the ceiling `min(cap, base · 2^(n-2))`):
 * receivers coming back from an outage are not met by every held sender at the same instant.
 */
export function exponentialPolicy(
  backoff: ExponentialBackoff,
  random: () => number = Math.random,
): RetryPolicy {
  const { baseMs, capMs, attempts } = backoff;
  if (!Number.isInteger(attempts) || attempts < 1) throw new RangeError('attempts must be at least 1');
  if (!(baseMs >= 0 && capMs >= baseMs)) throw new RangeError('need 0 <= baseMs <= capMs');
  return {
    attempts,
    description: `${attempts} attempts, exponential back-off (full jitter) from ${baseMs} ms to ${capMs} ms`,
    delayBefore(attempt) {
      checkAttempt(attempt);
      if (attempt === 1) return 0;
      if (attempt > attempts) return undefined;
      const ceiling = Math.min(capMs, baseMs * 2 ** Math.min(attempt - 2, 40));
      return Math.round(ceiling * unit(random()));
    },
  };
}

/** `defaults` with the overrides' back-off and jitter source applied. */
export function backoffPolicy(
  defaults: ExponentialBackoff,
  overrides: RetryPolicyOverrides = {},
): RetryPolicy {
  return exponentialPolicy({ ...defaults, ...overrides.backoff }, overrides.random ?? Math.random);
}

export function checkAttempt(attempt: number): void {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError('attempts are counted from 1');
}

function unit(value: number): number {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0.5;
}
