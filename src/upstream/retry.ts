import type { Logger } from 'pino';
import { onAbort } from '../lib/abort-fanout.js';
import type { HttpLimits } from './config.js';
import { type ErrorContext, UpstreamError } from './errors.js';

/** How often and how patiently to retry; durations in milliseconds. */
export interface RetryPolicy {
  /** Retries after the first attempt (so `retries + 1` attempts at most). */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Source of randomness for the jitter, in [0, 1); `Math.random` by default. */
  random?: () => number;
}

/** The retry policy of the `upstream.http` config section. */
export function retryPolicyOf(http: HttpLimits): RetryPolicy {
  return { retries: http.retries, baseDelayMs: http.retry_base_delay, maxDelayMs: http.retry_max_delay };
}

/**
 * Exponential backoff with full jitter: a uniformly random delay in
 * `[0, min(maxDelay, baseDelay * 2^retryIndex))`. `retryIndex` is 0 before the first retry.
 */
export function backoffDelay(retryIndex: number, policy: RetryPolicy): number {
  const random = policy.random ?? Math.random;
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(retryIndex, 30));
  return Math.floor(random() * ceiling);
}

/** The wait before retry number `retryIndex`: the upstream's Retry-After if it gave one, capped. */
export function retryDelay(retryIndex: number, policy: RetryPolicy, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined) return Math.min(policy.maxDelayMs, Math.max(0, retryAfterMs));
  return backoffDelay(retryIndex, policy);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unlink?.();
      resolve();
    }, ms);
    // Through the fan-out (abort-fanout.ts): in an outage many calls wait out a back-off at once.
    const unlink = signal
      ? onAbort(signal, (reason) => {
          clearTimeout(timer);
          reject(reason);
        })
      : undefined;
  });
}

export interface RetryInfo {
  error: unknown;
  /** 1-based number of the attempt that just failed. */
  attempt: number;
  delayMs: number;
}

/**
 * How much retrying an upstream has earned: gRPC's retry throttling. Every attempt that fails
 * retryably (5xx, time-out, network) takes a token, every other answer gives back a tenth of one,
 * and retries are made only while more than half of the `RETRY_BUDGET_TOKENS` are left.
 *
 * Why: while an upstream fails for everyone, retries add nothing but load, and each holds one of
 * the `max_in_flight` slots for up to another `request_timeout`: a call with three time-outs in a
 * row holds its slot for 40 s. The slots then go to retries instead of first attempts, the
 * counting windows get too few calls to judge the outage (upstream-windows.ts), and the
 * per-entity incidents it causes wait for that judgement. A few failing entities in a fleet that
 * answers keep the budget full (each failure is paid back by ten answers); a failing upstream
 * empties it within a few dozen calls, and its first answers after the outage fill it again.
 */
export const RETRY_BUDGET_TOKENS = 100;
const RETRY_BUDGET_REFUND = 0.1;

export class RetryBudget {
  #tokens = RETRY_BUDGET_TOKENS;

  /** An attempt was answered (whatever the answer, but a retryable failure). */
  answered(): void {
    this.#tokens = Math.min(RETRY_BUDGET_TOKENS, this.#tokens + RETRY_BUDGET_REFUND);
  }

  /** An attempt failed retryably. */
  failed(): void {
    this.#tokens = Math.max(0, this.#tokens - 1);
  }

  /** Whether a retry may be made now. */
  allows(): boolean {
    return this.#tokens > RETRY_BUDGET_TOKENS / 2;
  }
}

export interface RetryOptions<T> {
  policy: RetryPolicy;
  /** Shared by every call to one upstream; without it every retryable failure is retried. */
  budget?: RetryBudget;
  /** A retry was not made because the budget is spent. */
  onThrottled?: (info: Omit<RetryInfo, 'delayMs'>) => void;
  signal?: AbortSignal;
  /** Whether this failure may be retried; default: an `UpstreamError` marked `retryable`. */
  shouldRetry?: (error: unknown) => boolean;
  /**
   * Runs after every failed attempt, before the retry decision. It may settle the operation with
   * a value (for example: the effect the failed request wanted is already visible upstream).
   */
  reconcile?: (error: unknown, attempt: number) => Promise<{ value: T } | undefined>;
  onRetry?: (info: RetryInfo) => void;
  /**
   * The first attempt was made by the caller and failed with this: the decision after it is
   * made here, as if `attempt(1)` had thrown it (see `OperationRunner.run`).
   */
  firstFailure?: { error: unknown };
}

/** Logs each retry at debug level, naming the operation and what it addressed. */
export function retryLog(
  logger: Logger | undefined,
  ctx: ErrorContext,
  message = 'retrying upstream request',
): (info: RetryInfo) => void {
  return ({ error, attempt, delayMs }) =>
    logger?.debug({ err: error, operation: ctx.operation, target: ctx.target, attempt, delayMs }, message);
}

const defaultShouldRetry = (error: unknown) => error instanceof UpstreamError && error.retryable;

/** Runs `attempt` until it succeeds, fails for good, or runs out of retries. */
export async function withRetry<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  options: RetryOptions<T>,
): Promise<T> {
  const shouldRetry = options.shouldRetry ?? defaultShouldRetry;
  const { budget } = options;
  for (let n = 1; ; n++) {
    let error: unknown;
    if (n === 1 && options.firstFailure) error = options.firstFailure.error;
    else {
      try {
        const value = await attempt(n);
        budget?.answered();
        return value;
      } catch (caught) {
        error = caught;
      }
    }
    if (options.signal?.aborted) throw error;
    const retryable = shouldRetry(error);
    if (retryable) budget?.failed();
    else budget?.answered();
    if (options.reconcile) {
      const settled = await options.reconcile(error, n);
      if (settled) return settled.value;
    }
    if (n > options.policy.retries || !retryable) throw error;
    if (budget && !budget.allows()) {
      options.onThrottled?.({ error, attempt: n });
      throw error;
    }
    const retryAfterMs = error instanceof UpstreamError ? error.retryAfterMs : undefined;
    const delayMs = retryDelay(n - 1, options.policy, retryAfterMs);
    options.onRetry?.({ error, attempt: n, delayMs });
    await sleep(delayMs, options.signal);
  }
}
