import type { Machine } from '../../bench/report.js';

/** The machine a test's benchmark block names: fixed numbers, `commit` and `date` as given. */
export function testMachine(commit = 'abc1234', date = '2026-01-02T03:04:05.000Z'): Machine {
  return {
    cpu: 'Test CPU',
    cores: 2,
    memoryGiB: 8,
    kernel: '6.1',
    node: 'v20.0.0',
    redis: '7.0.15',
    commit,
    date,
  };
}
