import { describe, expect, it } from 'vitest';
import { exponentialPolicy, type RetryPolicy } from '../../../src/lib/retry-policy.js';
import { type DeliveryDecision, decide } from '../../../src/notifiers/delivery/decision.js';
import type { DeliveryProgress } from '../../../src/notifiers/delivery/delivery-queue.js';
import type { DeliveryOutcome } from '../../../src/notifiers/notifier.js';

/** Three attempts: 1 s before the second, 4 s before the third. */
const POLICY: RetryPolicy = {
  attempts: 3,
  description: 'test',
  delayBefore: (attempt) => [0, 1_000, 4_000][attempt - 1],
};

const fresh: DeliveryProgress = { attempts: 0 };
const once: DeliveryProgress = { attempts: 1, lastReason: 'HTTP 500', lastStatus: 500 };
const twice: DeliveryProgress = { attempts: 2, throttled: 1, lastReason: 'HTTP 503', lastStatus: 503 };

/** The receiver's max_hold in these rows. */
const MAX_HOLD = 60_000;
const running = { shuttingDown: false, maxHoldMs: MAX_HOLD };
const stopping = { shuttingDown: true, maxHoldMs: MAX_HOLD };

interface Row {
  name: string;
  outcome: DeliveryOutcome;
  progress: DeliveryProgress;
  context?: { shuttingDown: boolean; maxHoldMs: number };
  policy?: RetryPolicy;
  decision: DeliveryDecision;
}

/** Progress after a failure: `lastStatus` is always written, `undefined` when the answer had none. */
function after(
  attempts: number,
  lastReason: string,
  lastStatus?: number,
  throttled?: number,
): DeliveryProgress {
  return { attempts, ...(throttled === undefined ? {} : { throttled }), lastReason, lastStatus };
}

/** The receiver asked for a pause: no attempt used; `askedMs` is its Retry-After as it said it. */
const pause = (holdMs: number, progress: DeliveryProgress, askedMs = holdMs): DeliveryDecision => ({
  action: 'hold',
  holdMs,
  counted: false,
  cause: 'throttled',
  progress,
  retryAfter: { askedMs, capped: askedMs > MAX_HOLD },
});

/** The wait before the next attempt, which counted. */
const backOff = (holdMs: number, progress: DeliveryProgress, askedMs?: number): DeliveryDecision => ({
  action: 'hold',
  holdMs,
  counted: true,
  cause: 'retry',
  progress,
  ...(askedMs === undefined ? {} : { retryAfter: { askedMs, capped: askedMs > MAX_HOLD } }),
});

const cutShort: DeliveryDecision = { action: 'hold', holdMs: 0, counted: false, cause: 'shutdown' };

const deadLetter = (reason: string, progress: DeliveryProgress): DeliveryDecision => ({
  action: 'dead-letter',
  reason,
  progress,
});

const retry = (reason: string, status?: number, retryAfterMs?: number): DeliveryOutcome => ({
  kind: 'retry',
  reason,
  ...(status === undefined ? {} : { status }),
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
});

const throttled = (retryAfterMs: number, status?: number): DeliveryOutcome => ({
  kind: 'throttled',
  reason: 'HTTP 429',
  retryAfterMs,
  ...(status === undefined ? {} : { status }),
});

const rows: Row[] = [
  {
    name: 'delivered on the first attempt: complete',
    outcome: { kind: 'delivered', status: 200 },
    progress: fresh,
    decision: { action: 'complete', attempt: 1 },
  },
  {
    name: 'delivered after two failed attempts: complete, attempt 3',
    outcome: { kind: 'delivered' },
    progress: twice,
    decision: { action: 'complete', attempt: 3 },
  },
  {
    name: 'throttled: hold for Retry-After, no attempt used, the throttle counted',
    outcome: throttled(30_000, 429),
    progress: once,
    decision: pause(30_000, after(1, 'HTTP 429', 429, 1)),
  },
  {
    name: 'throttled again: the throttle count grows',
    outcome: throttled(500, 429),
    progress: twice,
    decision: pause(500, after(2, 'HTTP 429', 429, 2)),
  },
  {
    name: 'throttled for longer than max_hold: held for max_hold, the ask kept and marked capped',
    outcome: throttled(99_999_999_000, 503),
    progress: fresh,
    decision: pause(MAX_HOLD, after(0, 'HTTP 429', 503, 1), 99_999_999_000),
  },
  {
    name: 'throttled for exactly max_hold: not capped',
    outcome: throttled(MAX_HOLD, 429),
    progress: fresh,
    decision: pause(MAX_HOLD, after(0, 'HTTP 429', 429, 1)),
  },
  {
    name: 'throttled while shutting down: still held, still not an attempt',
    outcome: throttled(2_000),
    progress: fresh,
    context: stopping,
    decision: pause(2_000, after(0, 'HTTP 429', undefined, 1)),
  },
  {
    name: 'retry on attempt 1: hold for the policy delay before attempt 2, attempt counted',
    outcome: retry('HTTP 500', 500),
    progress: fresh,
    decision: backOff(1_000, after(1, 'HTTP 500', 500)),
  },
  {
    name: 'retry with a Retry-After longer than the policy delay: the Retry-After',
    outcome: retry('HTTP 503', 503, 9_000),
    progress: once,
    decision: backOff(9_000, after(2, 'HTTP 503', 503), 9_000),
  },
  {
    name: 'retry with a Retry-After shorter than the policy delay: the policy delay',
    outcome: retry('HTTP 503', 503, 10),
    progress: once,
    decision: backOff(4_000, after(2, 'HTTP 503', 503), 10),
  },
  {
    name: 'retry with a Retry-After longer than max_hold: max_hold, marked capped',
    outcome: retry('HTTP 503', 503, 86_400_000),
    progress: once,
    decision: backOff(MAX_HOLD, after(2, 'HTTP 503', 503), 86_400_000),
  },
  {
    name: "retry whose policy delay is longer than max_hold: the operator's delay stands",
    outcome: retry('HTTP 500', 500),
    progress: once,
    policy: { attempts: 3, description: 'hours', delayBefore: () => 7_200_000 },
    decision: backOff(7_200_000, after(2, 'HTTP 500', 500)),
  },
  {
    name: 'the same with a longer Retry-After: the policy delay, the ask marked capped',
    outcome: retry('HTTP 503', 503, 86_400_000),
    progress: once,
    policy: { attempts: 3, description: 'hours', delayBefore: () => 7_200_000 },
    decision: backOff(7_200_000, after(2, 'HTTP 503', 503), 86_400_000),
  },
  {
    name: 'retry on the last attempt: dead letter with the last reason',
    outcome: retry('connection refused'),
    progress: twice,
    decision: deadLetter(
      'gave up after 3 attempts: connection refused',
      after(3, 'connection refused', undefined, 1),
    ),
  },
  {
    name: 'retry with a one-attempt policy: dead letter after 1 attempt',
    outcome: retry('HTTP 502', 502),
    progress: fresh,
    policy: exponentialPolicy({ baseMs: 1_000, capMs: 1_000, attempts: 1 }),
    decision: deadLetter('gave up after 1 attempt: HTTP 502', after(1, 'HTTP 502', 502)),
  },
  {
    name: 'retry past the policy (attempts already used up): dead letter',
    outcome: retry('HTTP 500', 500),
    progress: { attempts: 5 },
    decision: deadLetter('gave up after 6 attempts: HTTP 500', after(6, 'HTTP 500', 500)),
  },
  {
    name: 'retry of a send the shutdown aborted: hold 0, progress untouched, no attempt',
    outcome: retry('aborted'),
    progress: twice,
    context: stopping,
    decision: cutShort,
  },
  {
    name: 'rejected: dead letter at once with the reason, attempt counted',
    outcome: { kind: 'rejected', reason: 'HTTP 400: invalid_payload', status: 400 },
    progress: fresh,
    decision: deadLetter('HTTP 400: invalid_payload', after(1, 'HTTP 400: invalid_payload', 400)),
  },
  {
    name: 'rejected while shutting down: the same',
    outcome: { kind: 'rejected', reason: 'HTTP 404', status: 404 },
    progress: once,
    context: stopping,
    decision: deadLetter('HTTP 404', after(2, 'HTTP 404', 404)),
  },
  {
    name: 'gone: disable the receiver and dead-letter this notification',
    outcome: { kind: 'gone', reason: 'HTTP 410', status: 410 },
    progress: once,
    decision: {
      action: 'disable',
      reason: 'HTTP 410 (receiver disabled)',
      disabled: { reason: 'HTTP 410', status: 410 },
      progress: after(2, 'HTTP 410', 410),
    },
  },
  {
    name: 'gone without a status (Slack channel_is_archived): no status recorded',
    outcome: { kind: 'gone', reason: 'channel_is_archived' },
    progress: fresh,
    decision: {
      action: 'disable',
      reason: 'channel_is_archived (receiver disabled)',
      disabled: { reason: 'channel_is_archived' },
      progress: after(1, 'channel_is_archived'),
    },
  },
];

describe('decide: what one delivery outcome comes to', () => {
  it.each(rows)('$name', ({ outcome, progress, context, policy, decision }) => {
    const before = structuredClone(progress);
    const decided = decide(outcome, progress, policy ?? POLICY, context ?? running);
    expect(decided).toStrictEqual(decision);
    // The job's progress is read, never changed in place.
    expect(progress).toStrictEqual(before);
  });

  it('asks the policy for the delay before the next attempt only', () => {
    const asked: number[] = [];
    const policy: RetryPolicy = {
      attempts: 8,
      description: 'recording',
      delayBefore: (attempt) => {
        asked.push(attempt);
        return 100 * attempt;
      },
    };
    const retry: DeliveryOutcome = { kind: 'retry', reason: 'HTTP 500', status: 500 };
    expect(decide(retry, { attempts: 3 }, policy, running)).toMatchObject({ action: 'hold', holdMs: 500 });
    decide({ kind: 'throttled', reason: '429', retryAfterMs: 1 }, { attempts: 3 }, policy, running);
    decide(retry, { attempts: 3 }, policy, stopping);
    decide({ kind: 'delivered' }, { attempts: 3 }, policy, running);
    expect(asked).toEqual([5]);
  });

  it('dead-letters when the policy has no delay for the next attempt', () => {
    const policy: RetryPolicy = { attempts: 8, description: 'short', delayBefore: () => undefined };
    expect(decide({ kind: 'retry', reason: 'HTTP 500' }, fresh, policy, running)).toMatchObject({
      action: 'dead-letter',
      reason: 'gave up after 1 attempt: HTTP 500',
    });
  });
});
