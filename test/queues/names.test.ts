import { describe, expect, it } from 'vitest';
import {
  EVENTS_JOB_OPTIONS,
  eventsRedeliveryMs,
  notifyQueueName,
  pollQueueName,
  QUEUE_NAMES,
} from '../../src/queues/names.js';

describe('queue names', () => {
  it('names the core queues, poll queues and notify queues', () => {
    expect(QUEUE_NAMES).toEqual({ events: 'events' });
    expect(pollQueueName('robots')).toBe('poll-robots');
    expect(notifyQueueName('slack')).toBe('notify-slack');
    expect(() => notifyQueueName('a:b')).toThrow(/receiver/);
  });

  it('keeps completed event jobs long enough to dedup re-added events', () => {
    expect(EVENTS_JOB_OPTIONS.removeOnComplete).toEqual({ age: 86_400, count: 100_000 });
  });

  it('bounds a redelivery by two kills of the workers holding a job and every retry of its back-off', () => {
    // BullMQ's exponential back-off: delay × 2^(attempt − 1) before each retry.
    const { attempts = 1, backoff } = EVENTS_JOB_OPTIONS;
    const delay = typeof backoff === 'object' ? (backoff.delay ?? 0) : 0;
    let retries = 0;
    for (let attempt = 1; attempt < attempts; attempt += 1) retries += delay * 2 ** (attempt - 1);
    expect(retries).toBe(127_000);
    expect(eventsRedeliveryMs(30_000)).toBe(4 * 30_000 + retries);
    expect(eventsRedeliveryMs(5_000)).toBe(4 * 5_000 + retries);
  });
});
