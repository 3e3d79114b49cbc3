import { attemptCount, delayForAttempt } from '../webhook/retry-schedule.js';

/**
 * How often, and how far apart, a notification is tried when its receiver answers with a passing
 * failure (`retry` outcome: 5xx, network error, time-out). One policy per receiver kind:
 *
 * - **webhook**: the receiver's own `retry_schedule` (Standard Webhooks reference schedule by
 *   default: 0s, 5s, 5m, 30m, 2h, 5h, 10h, 10h; ±20 % jitter), one attempt per entry.
 * - **slack** (and any kind without a schedule): exponential back-off with full jitter, base 1 s,
 *   doubling, capped at 5 min, 8 attempts.
 *
 * Attempt 1 is sent when the notification's turn comes (a schedule's first entry, normally 0s, is
 * not waited for: holding the first attempt would hold every notification behind it). A receiver's
 * `Retry-After` on a `retry` outcome lengthens the delay, never shortens it. A `throttled` outcome
 * (429) is not an attempt and does not consult the policy.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included; after the last, the notification is dead-lettered. */
  readonly attempts: number;
  /**
   * Milliseconds to wait before attempt `attempt` (2 … `attempts`), jittered; `undefined` when
   * there is no such attempt.
   */
  delayBefore(attempt: number): number | undefined;
  /** One line for logs: `8 attempts, exponential from 1s to 5m` */
  readonly description: string;
}

export interface ExponentialBackoff {
  /** The ceiling of the first back-off (before attempt 2); it doubles every attempt. */
  baseMs: number;
  /** The largest ceiling. */
  capMs: number;
  attempts: number;
}

export const SLACK_BACKOFF: Readonly<ExponentialBackoff> = {
  baseMs: 1_000,
  capMs: 5 * 60_000,
  attempts: 8,
};

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

/** A webhook `retry_schedule` (see `retry-schedule.ts`): entry n - 1 is the delay before attempt n. */
export function schedulePolicy(schedule: readonly number[], random: () => number = Math.random): RetryPolicy {
  const attempts = attemptCount(schedule);
  if (attempts < 1) throw new RangeError('a retry schedule lists at least one attempt');
  return {
    attempts,
    description: `${attempts} attempts on the schedule [${schedule.map((ms) => `${ms} ms`).join(', ')}]`,
    delayBefore(attempt) {
      checkAttempt(attempt);
      if (attempt === 1) return 0;
      return delayForAttempt(schedule, attempt, random);
    },
  };
}

/** Policy settings that replace the defaults (tests, and operators through code). */
export interface RetryPolicyOverrides {
  /** Back-off of Slack receivers (and kinds without a `retry_schedule`). */
  slack?: Partial<ExponentialBackoff>;
  /** Replaces every webhook receiver's `retry_schedule`. */
  webhookSchedule?: readonly number[];
  random?: () => number;
}

/** The policy of one configured receiver. */
export function retryPolicyFor(
  receiver: { kind: string; retry_schedule?: unknown },
  overrides: RetryPolicyOverrides = {},
): RetryPolicy {
  const random = overrides.random ?? Math.random;
  const schedule = overrides.webhookSchedule ?? scheduleOf(receiver.retry_schedule);
  if (receiver.kind === 'webhook' && schedule) return schedulePolicy(schedule, random);
  return exponentialPolicy({ ...SLACK_BACKOFF, ...overrides.slack }, random);
}

function scheduleOf(value: unknown): readonly number[] | undefined {
  return Array.isArray(value) && value.length > 0 && value.every((ms) => typeof ms === 'number')
    ? (value as number[])
    : undefined;
}

function checkAttempt(attempt: number): void {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError('attempts are counted from 1');
}

function unit(value: number): number {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0.5;
}
