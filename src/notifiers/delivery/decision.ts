import type { RetryPolicy } from '../../lib/retry-policy.js';
import type { DeliveryOutcome } from '../notifier.js';
import type { DeliveryProgress } from './delivery-queue.js';

/**
 * What the delivery worker does with one attempt's outcome, decided without Redis or BullMQ: the
 * worker carries the decision out (see the table in `delivery-worker.ts`).
 *
 * | outcome | decision |
 * |---|---|
 * | `delivered` | `complete` |
 * | `throttled` | `hold` for `retryAfterMs`, at most `max_hold`; not an attempt (`throttled` counted instead) |
 * | `retry`, shutting down | `hold` for 0 ms, progress untouched: the send was cut short by us |
 * | `retry`, attempts left | `hold` for the policy's delay before the next attempt, or the receiver's `Retry-After` (at most `max_hold`) if longer; an attempt |
 * | `retry`, last attempt | `dead-letter`: `gave up after N attempts: <reason>` |
 * | `rejected` | `dead-letter` with the reason; an attempt |
 * | `gone` | `disable` the receiver, dead-letter `<reason> (receiver disabled)`; an attempt |
 *
 * `max_hold` bounds only what the receiver asks for (`Retry-After`): one answer of a receiver in
 * trouble must not stop its notifications for days. The policy's own delays are the operator's
 * (a webhook's `retry_schedule`) and stand as configured.
 *
 * Attempt 1 is sent when the notification's turn comes; the policy is asked only for the delay
 * before attempts 2 and later. Every failure replaces `lastReason` / `lastStatus` in the progress.
 */
export type DeliveryDecision =
  /** Delivered: write the delivered marker and complete the job. */
  | { action: 'complete'; attempt: number }
  /**
   * Put the job back at the head of the queue and hold the whole receiver for `holdMs`.
   * `progress`, when present, is written to the job first; `counted` says whether an attempt was
   * used up (`retry`) or not (`throttled`, or a send cut short by the shutdown). `retryAfter` is
   * there when the receiver said how long to wait.
   */
  | {
      action: 'hold';
      holdMs: number;
      counted: boolean;
      cause: HoldDecisionCause;
      progress?: DeliveryProgress;
      retryAfter?: RetryAfterAsked;
    }
  /** Fail the job for good (it becomes a dead letter) with `reason`, after writing `progress`. */
  | { action: 'dead-letter'; reason: string; progress: DeliveryProgress }
  /** The receiver is gone: write `progress`, disable the receiver, and dead-letter with `reason`. */
  | {
      action: 'disable';
      /** The dead letter's reason. */
      reason: string;
      /** Why the receiver is disabled, as it answered. */
      disabled: { reason: string; status?: number };
      progress: DeliveryProgress;
    };

/**
 * Why a receiver is held: it asked for a pause (`throttled`), the wait before the next attempt
 * (`retry`), or a send the shutdown cut short (`shutdown`, a hold of 0 ms: the next start sends it).
 */
export type HoldDecisionCause = 'throttled' | 'retry' | 'shutdown';

/** A receiver's `Retry-After`: what it asked for, and whether `max_hold` cut it. */
export interface RetryAfterAsked {
  askedMs: number;
  capped: boolean;
}

export interface DecisionContext {
  /** The daemon is stopping and aborted the send under way. */
  shuttingDown: boolean;
  /** The receiver's `max_hold`: the longest its own `Retry-After` may hold it. */
  maxHoldMs: number;
}

export function decide(
  outcome: DeliveryOutcome,
  progress: DeliveryProgress,
  policy: RetryPolicy,
  context: DecisionContext,
): DeliveryDecision {
  const attempt = progress.attempts + 1;
  switch (outcome.kind) {
    case 'delivered':
      return { action: 'complete', attempt };

    case 'throttled': {
      const asked = bounded(outcome.retryAfterMs, context.maxHoldMs);
      return {
        action: 'hold',
        holdMs: asked.holdMs,
        counted: false,
        cause: 'throttled',
        progress: { ...progress, throttled: (progress.throttled ?? 0) + 1, ...failure(outcome) },
        retryAfter: asked.retryAfter,
      };
    }

    case 'retry': {
      // Cut short by the shutdown: not the receiver's failure, so no attempt is used up.
      if (context.shuttingDown) return { action: 'hold', holdMs: 0, counted: false, cause: 'shutdown' };
      const next = { ...progress, attempts: attempt, ...failure(outcome) };
      const delay = attempt >= policy.attempts ? undefined : policy.delayBefore(attempt + 1);
      if (delay === undefined) {
        return {
          action: 'dead-letter',
          reason: `gave up after ${attempt} attempt${attempt === 1 ? '' : 's'}: ${outcome.reason}`,
          progress: next,
        };
      }
      if (outcome.retryAfterMs === undefined) {
        return { action: 'hold', holdMs: delay, counted: true, cause: 'retry', progress: next };
      }
      const asked = bounded(outcome.retryAfterMs, context.maxHoldMs);
      return {
        action: 'hold',
        holdMs: Math.max(delay, asked.holdMs),
        counted: true,
        cause: 'retry',
        progress: next,
        retryAfter: asked.retryAfter,
      };
    }

    case 'rejected':
      return {
        action: 'dead-letter',
        reason: outcome.reason,
        progress: { ...progress, attempts: attempt, ...failure(outcome) },
      };

    case 'gone':
      return {
        action: 'disable',
        reason: `${outcome.reason} (receiver disabled)`,
        disabled: {
          reason: outcome.reason,
          ...(outcome.status === undefined ? {} : { status: outcome.status }),
        },
        progress: { ...progress, attempts: attempt, ...failure(outcome) },
      };
  }
}

/** A receiver's `Retry-After`, cut to `max_hold`. */
function bounded(askedMs: number, maxHoldMs: number): { holdMs: number; retryAfter: RetryAfterAsked } {
  const capped = askedMs > maxHoldMs;
  return { holdMs: capped ? maxHoldMs : askedMs, retryAfter: { askedMs, capped } };
}

/** The last failure, replacing the one before (a status of `undefined` is dropped from the JSON). */
function failure(outcome: Exclude<DeliveryOutcome, { kind: 'delivered' }>): Partial<DeliveryProgress> {
  return { lastReason: outcome.reason, lastStatus: outcome.status };
}
