import { afterEach, describe, expect, it, vi } from 'vitest';
import type { PollQueues } from '../../src/pollers/poll-queue.js';
import { PollScheduler } from '../../src/pollers/scheduler.js';

// No job is ever planned here, so the queues are never touched.
const queues = {} as PollQueues;

afterEach(() => {
  vi.useRealTimers();
});

describe("the scheduler's beat", () => {
  it('beats at start, then on each second of the wall clock, until stopped', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: 5_000_250 });
    const beats: number[] = [];
    const scheduler = new PollScheduler({
      queues,
      pollers: [{ name: 'vehicles', intervalMs: 1, lane: 'fleet' }],
      plan: async () => {
        beats.push(Date.now());
        return [];
      },
    });
    scheduler.start();
    await vi.advanceTimersByTimeAsync(2_900);
    expect(beats).toEqual([5_000_250, 5_001_000, 5_002_000, 5_003_000]);

    await scheduler.stop();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(beats).toHaveLength(4);
    expect(vi.getTimerCount()).toBe(0);
  });
});
