import { describe, expect, it } from 'vitest';
import { splitThreads, threadCpuMicros } from '../../bench/proc.js';

describe('fleetwatch’s CPU by thread', () => {
  const before = new Map([
    [100, 1_000],
    [101, 0],
    [102, 500],
    [103, 500],
    [110, 2_000],
  ]);
  const after = new Map([
    [100, 4_000],
    [101, 0],
    [102, 1_500],
    [103, 1_200],
    [110, 20_000],
    // Started during the window (a libuv pool thread, say): all its time is in the window.
    [111, 300],
  ]);

  it('names the process’s own thread the main one and the busiest other the poll thread', () => {
    expect(splitThreads(100, before, after, true)).toEqual({
      main: 3_000,
      pollThread: 18_000,
      helpers: 1_000 + 700 + 300,
    });
  });

  it('counts every other thread a helper when fleetwatch polls on its main thread', () => {
    expect(splitThreads(100, before, after, false)).toEqual({ main: 3_000, helpers: 18_000 + 2_000 });
  });

  it('reads every thread of a live process', () => {
    const threads = threadCpuMicros(process.pid);
    expect(threads.has(process.pid)).toBe(true);
    expect(threads.size).toBeGreaterThan(1);
    for (const micros of threads.values()) expect(micros).toBeGreaterThanOrEqual(0);
  });
});
