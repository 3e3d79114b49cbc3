import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../src/lib/retry-after.js';
import {
  backoffDelay,
  createUpstream,
  RETRY_BUDGET_TOKENS,
  RetryBudget,
  type RetryPolicy,
  retryDelay,
  ServiceUnavailableError,
  type Upstream,
  withRetry,
} from '../../src/upstream/index.js';
import { FakeUpstream, testConfig } from './fake-upstream.js';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');

  it.each([
    ['0', 0],
    ['7', 7_000],
    [' 120 ', 120_000],
    ['Sun, 01 Mar 2026 12:00:30 GMT', 30_000],
    ['Sun, 01 Mar 2026 11:00:00 GMT', 0],
  ])('%j → %i ms', (header, expected) => {
    expect(parseRetryAfter(header, now)).toBe(expected);
  });

  it.each([[undefined], [''], ['soon'], ['-5'], ['1.5']])('%j → undefined', (header) => {
    expect(parseRetryAfter(header, now)).toBeUndefined();
  });
});

describe('backoff', () => {
  const policy: RetryPolicy = { retries: 10, baseDelayMs: 100, maxDelayMs: 1_000 };

  it('is full jitter below an exponentially growing ceiling capped by maxDelay', () => {
    const top = { ...policy, random: () => 0.999_999 };
    expect([0, 1, 2, 3, 4, 5, 20].map((n) => backoffDelay(n, top))).toEqual([
      99, 199, 399, 799, 999, 999, 999,
    ]);
    expect(backoffDelay(3, { ...policy, random: () => 0 })).toBe(0);
    for (let i = 0; i < 200; i++) {
      const delay = backoffDelay(i % 12, policy);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(1_000);
    }
  });

  it('takes Retry-After instead, capped by maxDelay', () => {
    expect(retryDelay(0, policy, 300)).toBe(300);
    expect(retryDelay(0, policy, 3_600_000)).toBe(1_000);
  });

  it('withRetry stops after `retries` retries and rethrows the last error', async () => {
    let attempts = 0;
    const error = new ServiceUnavailableError({ operation: 'x' });
    await expect(
      withRetry(
        async () => {
          attempts++;
          throw error;
        },
        { policy: { retries: 3, baseDelayMs: 1, maxDelayMs: 2 } },
      ),
    ).rejects.toBe(error);
    expect(attempts).toBe(4);
  });

  it('withRetry does not retry what is not retryable', async () => {
    let attempts = 0;
    await expect(
      withRetry(
        async () => {
          attempts++;
          throw new Error('boom');
        },
        { policy: { retries: 3, baseDelayMs: 1, maxDelayMs: 2 } },
      ),
    ).rejects.toThrow('boom');
    expect(attempts).toBe(1);
  });

  it('withRetry decides on a first attempt its caller made (`firstFailure`): it goes on from the second, or gives up at once', async () => {
    const numbers: number[] = [];
    const value = await withRetry(
      async (n) => {
        numbers.push(n);
        if (n < 3) throw new ServiceUnavailableError({ operation: 'x' });
        return 'answered';
      },
      {
        policy: { retries: 3, baseDelayMs: 1, maxDelayMs: 2 },
        firstFailure: { error: new ServiceUnavailableError({ operation: 'x' }) },
      },
    );
    expect(value).toBe('answered');
    expect(numbers).toEqual([2, 3]);

    const budget = new RetryBudget();
    let attempts = 0;
    await expect(
      withRetry(
        async () => {
          attempts++;
          return 'never asked';
        },
        {
          policy: { retries: 3, baseDelayMs: 1, maxDelayMs: 2 },
          budget,
          firstFailure: { error: new Error('boom') },
        },
      ),
    ).rejects.toThrow('boom');
    expect(attempts).toBe(0);
  });
});

describe('the retry budget', () => {
  const policy: RetryPolicy = { retries: 3, baseDelayMs: 0, maxDelayMs: 0 };
  const failing = (count: { attempts: number }) => async () => {
    count.attempts += 1;
    throw new ServiceUnavailableError({ operation: 'x' });
  };

  it('stops retrying an upstream that fails for most calls, and retries again once it answers', async () => {
    const budget = new RetryBudget();
    const count = { attempts: 0 };
    const throttled: number[] = [];
    const onThrottled = ({ attempt }: { attempt: number }) => throttled.push(attempt);
    // Each call fails all its attempts: 4 tokens a call while retries are still made.
    let calls = 0;
    while (budget.allows()) {
      await expect(withRetry(failing(count), { policy, budget, onThrottled })).rejects.toThrow();
      calls += 1;
    }
    expect(count.attempts).toBeLessThanOrEqual(RETRY_BUDGET_TOKENS / 2 + 4);
    expect(calls).toBeGreaterThan(RETRY_BUDGET_TOKENS / 2 / 4 - 1);
    // The call that spent it stopped retrying there; now a failing call is tried once, and said so.
    expect(throttled).toHaveLength(1);
    throttled.length = 0;
    count.attempts = 0;
    await expect(withRetry(failing(count), { policy, budget, onThrottled })).rejects.toThrow();
    expect(count.attempts).toBe(1);
    expect(throttled).toEqual([1]);
    // Answers pay it back (a tenth of a token each), then failures are retried again.
    for (let i = 0; i < 60; i += 1) await withRetry(async () => 'ok', { policy, budget });
    count.attempts = 0;
    await expect(withRetry(failing(count), { policy, budget })).rejects.toThrow();
    expect(count.attempts).toBe(4);
  });

  it('is not spent by a few failing calls among many answered ones', async () => {
    const budget = new RetryBudget();
    for (let round = 0; round < 200; round += 1) {
      for (let i = 0; i < 40; i += 1) await withRetry(async () => 'ok', { policy, budget });
      const count = { attempts: 0 };
      await expect(withRetry(failing(count), { policy, budget })).rejects.toThrow();
      expect(count.attempts).toBe(4);
    }
  });

  it('is not spent by answers that are not retryable (a 404 is an answer)', async () => {
    const budget = new RetryBudget();
    for (let i = 0; i < 3 * RETRY_BUDGET_TOKENS; i += 1) {
      await expect(
        withRetry(
          async () => {
            throw new Error('not found');
          },
          { policy, budget },
        ),
      ).rejects.toThrow();
    }
    expect(budget.allows()).toBe(true);
  });
});

describe('Retry-After from the service', () => {
  let fake: FakeUpstream;
  let upstream: Upstream;
  const PATH = '/v1/vehicles/v-1/power/status';
  const OK = { status: 'success', data: { state: 'on', pendingCommand: null, updatedAt: null } };

  beforeEach(async () => {
    fake = await FakeUpstream.start();
  });

  afterEach(async () => {
    await upstream.close();
    await fake.close();
  });

  it('is honoured (seconds form)', async () => {
    upstream = createUpstream({
      config: testConfig(fake.url, { http: { retries: 2, retry_base_delay: 1, retry_max_delay: 5_000 } }),
    });
    fake.sequence('GET', PATH, [
      [503, undefined, { 'retry-after': '1' }],
      [200, OK],
    ]);
    await upstream.tokens.getToken();
    const started = performance.now();
    await upstream.fleet.getPowerStatus('v-1');
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(3_000);
    expect(fake.count('GET', PATH)).toBe(2);
  });

  it('is capped by retry_max_delay, and the whole retry sequence stays bounded', async () => {
    upstream = createUpstream({
      config: testConfig(fake.url, { http: { retries: 3, retry_base_delay: 1, retry_max_delay: 50 } }),
    });
    fake.sequence('GET', PATH, [[503, undefined, { 'retry-after': '3600' }]]);
    await upstream.tokens.getToken();
    const started = performance.now();
    await expect(upstream.fleet.getPowerStatus('v-1')).rejects.toBeInstanceOf(ServiceUnavailableError);
    const elapsed = performance.now() - started;
    expect(fake.count('GET', PATH)).toBe(4);
    expect(elapsed).toBeGreaterThanOrEqual(3 * 50 - 5);
    expect(elapsed).toBeLessThan(2_000);
  });

  it('the retryAfterMs of the error carries what the service asked for', async () => {
    upstream = createUpstream({ config: testConfig(fake.url, { http: { retries: 0 } }) });
    fake.sequence('GET', PATH, [[503, undefined, { 'retry-after': '42' }]]);
    const error = await upstream.fleet.getPowerStatus('v-1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect((error as ServiceUnavailableError).retryAfterMs).toBe(42_000);
  });
});
