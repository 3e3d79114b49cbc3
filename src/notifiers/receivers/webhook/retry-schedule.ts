import type { RetryPolicy } from '../../../lib/retry-policy.js';

/**
 * A webhook receiver's `retry_schedule` (pure): entry `n - 1` is the delay before attempt `n`, so
 * the schedule's length is the number of attempts, and after the last one the notification goes
 * to the dead-letter state. Delays get ±20 % jitter so that receivers recovering from an outage
 * are not hit by every held notification in the same second; a delay of 0 stays 0.
 */

export const JITTER = 0.2;

/** How many attempts a schedule allows. */
export function attemptCount(schedule: readonly number[]): number {
  return schedule.length;
}

/**
 * Milliseconds to wait before attempt `attempt` (1-based), jittered by ±20 % with `random`
 * (a number in [0, 1), `Math.random` by default); `undefined` when the schedule has no such
 * attempt, i.e. the previous one was the last.
 */
export function delayForAttempt(
  schedule: readonly number[],
  attempt: number,
  random: () => number = Math.random,
): number | undefined {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError('attempts are counted from 1');
  const base = schedule[attempt - 1];
  if (base === undefined) return undefined;
  if (base <= 0) return 0;
  const factor = 1 + JITTER * (2 * clampUnit(random()) - 1);
  return Math.max(0, Math.round(base * factor));
}

/**
 * A schedule as the delivery worker's retry policy: entry n - 1 is the delay before attempt n,
 * except that attempt 1 is sent when the notification's turn comes (a first entry of 0s, the
 * usual, is not waited for: holding the first attempt would hold every notification behind it).
 */
export function schedulePolicy(schedule: readonly number[], random: () => number = Math.random): RetryPolicy {
  const attempts = attemptCount(schedule);
  if (attempts < 1) throw new RangeError('a retry schedule lists at least one attempt');
  return {
    attempts,
    description: `${attempts} attempts on the schedule [${schedule.map((ms) => `${ms} ms`).join(', ')}]`,
    delayBefore(attempt) {
      // delayForAttempt refuses attempt numbers below 1 as the other policies do.
      if (attempt === 1) return 0;
      return delayForAttempt(schedule, attempt, random);
    },
  };
}

function clampUnit(value: number): number {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0.5;
}
