import { describe, expect, it } from 'vitest';
import { EVENTS_JOB_OPTIONS, notifyQueueName, pollQueueName, QUEUE_NAMES } from '../../src/queues/names.js';

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
});
