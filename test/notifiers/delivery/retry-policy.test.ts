import { describe, expect, it } from 'vitest';
import { exponentialPolicy } from '../../../src/lib/retry-policy.js';
import { CONSOLE_BACKOFF } from '../../../src/notifiers/receivers/console/index.js';
import { retryPolicyFor } from '../../../src/notifiers/receivers/kinds.js';
import { SLACK_BACKOFF } from '../../../src/notifiers/receivers/slack/index.js';
import { schedulePolicy } from '../../../src/notifiers/receivers/webhook/retry-schedule.js';

/** What every parsed receiver config has besides its kind's own fields. */
const HOLD = { max_hold: 300_000 };
const top = () => 0.999_999;
const middle = () => 0.5;

describe('retry policies', () => {
  it('Slack: full jitter under a ceiling of 1 s doubling to 5 min, 8 attempts', () => {
    const policy = retryPolicyFor({ ...HOLD, kind: 'slack', name: 'ops' }, { random: top });
    expect(policy.attempts).toBe(8);
    expect(SLACK_BACKOFF).toEqual({ baseMs: 1_000, capMs: 300_000, attempts: 8 });
    const ceilings = [2, 3, 4, 5, 6, 7, 8].map((attempt) => policy.delayBefore(attempt));
    expect(ceilings).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000]);
    expect(policy.delayBefore(1)).toBe(0);
    expect(policy.delayBefore(9)).toBeUndefined();
    const long = exponentialPolicy({ baseMs: 1_000, capMs: 300_000, attempts: 20 }, top);
    expect(long.delayBefore(20)).toBe(300_000);
    // Full jitter: anything from 0 to the ceiling.
    expect(exponentialPolicy(SLACK_BACKOFF, () => 0).delayBefore(5)).toBe(0);
    expect(exponentialPolicy(SLACK_BACKOFF, middle).delayBefore(5)).toBe(4_000);
  });

  it('Slack back-off is configurable', () => {
    const policy = retryPolicyFor(
      { ...HOLD, kind: 'slack', name: 'ops' },
      { backoff: { baseMs: 10, attempts: 3 }, random: top },
    );
    expect(policy.attempts).toBe(3);
    expect([policy.delayBefore(2), policy.delayBefore(3), policy.delayBefore(4)]).toEqual([
      10,
      20,
      undefined,
    ]);
  });

  it("webhooks: the receiver's retry_schedule, one attempt per entry, the first not waited for", () => {
    const policy = retryPolicyFor(
      { ...HOLD, kind: 'webhook', name: 'bridge', retry_schedule: [5_000, 60_000, 300_000] },
      { random: middle },
    );
    expect(policy.attempts).toBe(3);
    expect([1, 2, 3, 4].map((attempt) => policy.delayBefore(attempt))).toEqual([
      0,
      60_000,
      300_000,
      undefined,
    ]);
    const jittered = schedulePolicy([0, 10_000], () => 0);
    expect(jittered.delayBefore(2)).toBe(8_000);
    expect(
      retryPolicyFor({ ...HOLD, kind: 'webhook', name: 'bridge', retry_schedule: [0, 1] }, { schedule: [0] })
        .attempts,
    ).toBe(1);
  });

  it('console: the same back-off as Slack, each kind owning its own', () => {
    expect(CONSOLE_BACKOFF).toEqual({ baseMs: 1_000, capMs: 300_000, attempts: 8 });
    const policy = retryPolicyFor({ ...HOLD, kind: 'console', name: 'terminal' }, { random: top });
    expect(policy.attempts).toBe(8);
    expect([2, 3, 9].map((attempt) => policy.delayBefore(attempt))).toEqual([1_000, 2_000, undefined]);
  });

  it('refuses nonsense', () => {
    expect(() => exponentialPolicy({ baseMs: 10, capMs: 5, attempts: 3 })).toThrow(RangeError);
    expect(() => exponentialPolicy({ baseMs: 10, capMs: 50, attempts: 0 })).toThrow(RangeError);
    expect(() => schedulePolicy([])).toThrow(RangeError);
    expect(() => schedulePolicy([0]).delayBefore(0)).toThrow(RangeError);
    expect(() => retryPolicyFor({ ...HOLD, kind: 'pager', name: 'night' })).toThrow(
      'receiver night: no notifier for kind "pager"',
    );
  });
});
