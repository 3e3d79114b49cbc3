import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_SCHEDULE_MS } from '../../../../src/notifiers/receivers/webhook/config.js';
import { attemptCount, delayForAttempt } from '../../../../src/notifiers/receivers/webhook/retry-schedule.js';

describe('retry schedule', () => {
  const schedule = DEFAULT_RETRY_SCHEDULE_MS;

  it('has as many attempts as entries', () => {
    expect(attemptCount(schedule)).toBe(8);
    expect(delayForAttempt(schedule, 8, () => 0.5)).toBe(36_000_000);
    expect(delayForAttempt(schedule, 9, () => 0.5)).toBeUndefined();
  });

  it('gives the entry itself at the middle of the jitter range', () => {
    expect(schedule.map((_, index) => delayForAttempt(schedule, index + 1, () => 0.5))).toEqual([
      ...schedule,
    ]);
  });

  it('jitters by at most ±20 %, and never a delay of 0', () => {
    expect(delayForAttempt(schedule, 2, () => 0)).toBe(4_000);
    expect(delayForAttempt(schedule, 2, () => 0.999_999)).toBe(6_000);
    expect(delayForAttempt(schedule, 3, () => 0.25)).toBe(270_000);
    expect(delayForAttempt(schedule, 1, () => 0)).toBe(0);
    expect(delayForAttempt(schedule, 1, () => 0.99)).toBe(0);
    for (let i = 0; i < 1_000; i++) {
      const delay = delayForAttempt(schedule, 4, Math.random) ?? -1;
      expect(delay).toBeGreaterThanOrEqual(1_440_000);
      expect(delay).toBeLessThanOrEqual(2_160_000);
    }
  });

  it('tolerates a random source out of range and refuses attempt numbers below 1', () => {
    expect(delayForAttempt([10_000], 1, () => 7)).toBe(12_000);
    expect(delayForAttempt([10_000], 1, () => Number.NaN)).toBe(10_000);
    expect(() => delayForAttempt(schedule, 0)).toThrow(RangeError);
    expect(() => delayForAttempt(schedule, 1.5)).toThrow(RangeError);
  });
});
