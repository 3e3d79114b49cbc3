import type { DefaultJobOptions } from 'bullmq';
import { z } from 'zod';

/** BullMQ queue names (all under the `{<prefix>}` BullMQ prefix, see `bullPrefix`). */
export const QUEUE_NAMES = {
  /** CloudEvents relayed from the outbox; job id = event id, job name = event type. */
  events: 'events',
} as const;

export type CoreQueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

/** A receiver's name: it names the receiver's queue and keys, so the config, API and CLI take only this. */
export const RECEIVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** A receiver name where a person gives one (config, API path or query, CLI option). */
export const receiverNameField = z.string().regex(RECEIVER_NAME, {
  error: 'must be a receiver name (1 to 64 letters, digits, _ or -)',
});

/**
 * One poll queue per upstream the pollers read from (`poll-fleet`, `poll-robots`: see
 * pollers/poller.ts `POLL_LANES`); job ids are derived from the tick, so replicas' ticks dedup.
 */
export function pollQueueName<Lane extends string>(lane: Lane): `poll-${Lane}` {
  return `poll-${lane}`;
}

/** One notify queue per receiver (`notify-ops`, `notify-pager`, ...). */
export function notifyQueueName(receiver: string): `notify-${string}` {
  if (!RECEIVER_NAME.test(receiver)) {
    throw new TypeError(`invalid receiver name ${JSON.stringify(receiver)}: use letters, digits, _ or -`);
  }
  return `notify-${receiver}`;
}

/**
 * Events queue. Finished jobs are the dedup record for the relay (a re-added event id is ignored
 * only while its job still exists), so completed jobs stay a day and failed ones a week. A relay
 * re-adds an entry at most `claimIdleMs` (seconds) after a crash, far inside that window.
 */
const EVENTS_ATTEMPTS = 8;
const EVENTS_BACKOFF_MS = 1_000;

export const EVENTS_JOB_OPTIONS: DefaultJobOptions = {
  attempts: EVENTS_ATTEMPTS,
  backoff: { type: 'exponential', delay: EVENTS_BACKOFF_MS },
  removeOnComplete: { age: 86_400, count: 100_000 },
  removeOnFail: { age: 7 * 86_400 },
};

/**
 * How long after its first dispatch an event may come back to the notification step, which is how
 * long an aggregation group keeps the ids it took after it went idle. A worker killed mid-job
 * leaves the job locked for `takeover` and the stalled check, every `takeover`, moves it back: up
 * to 2 × `takeover` a kill, and two kills of the workers holding one job are allowed for; a
 * dispatch that failed is retried after the job's back-off (1 s doubling over its 7 retries:
 * 127 s). With the default `takeover_after` of 30 s: 4 × 30 s + 127 s = 247 s.
 */
export function eventsRedeliveryMs(takeoverMs: number): number {
  let backoff = 0;
  for (let retry = 0; retry < EVENTS_ATTEMPTS - 1; retry += 1) backoff += EVENTS_BACKOFF_MS * 2 ** retry;
  return 2 * 2 * takeoverMs + backoff;
}

/** Poll jobs: keep finished ones long enough that a late tick from another replica still dedups. */
export const POLL_JOB_OPTIONS: DefaultJobOptions = {
  attempts: 1,
  removeOnComplete: { age: 3_600, count: 10_000 },
  removeOnFail: { age: 86_400, count: 10_000 },
};
