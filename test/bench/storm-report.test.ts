import { describe, expect, it } from 'vitest';
import {
  type Machine,
  mergeConsoleReport,
  mergeSoakReport,
  mergeStormReport,
  renderStormBlock,
  STORM_BLOCK_END,
  STORM_BLOCK_START,
} from '../../bench/report.js';
import type { StormRun } from '../../bench/storm.js';
import { testMachine } from './machine.js';

const machine: Machine = testMachine();

const run = (events: number, groupBy: StormRun['groupBy'], cpuMs: number): StormRun => ({
  events,
  groupBy,
  cpuMs,
  wallMs: cpuMs * 1.1,
  redisCpuMs: cpuMs / 10,
  bytesWritten: events * 4_000,
  notifications: groupBy === 'type' ? 2 : 2 * events,
  carried: 2 * events,
});

describe('the storm block', () => {
  it('puts one row per size: CPU per event of both waves, one group against one group each', () => {
    const block = renderStormBlock(
      { runs: [run(1_000, 'type', 4_000), run(1_000, '...', 2_000), run(4_000, 'type', 40_000)] },
      machine,
    );
    expect(block.startsWith(STORM_BLOCK_START)).toBe(true);
    expect(block.endsWith(STORM_BLOCK_END)).toBe(true);
    // 4,000 ms over 2,000 events (down and up); the reference 1,000 µs; a size without its
    // reference has no row.
    expect(block).toContain('| 1,000 | 2000 µs |');
    expect(block).toContain('| 2 (2,000 events) | 1000 µs |');
    expect(block).toContain('| 2.0× |');
    expect(block).not.toContain('| 4,000 |');
  });

  it('goes before the soak and the console sections, and a new run replaces only it', () => {
    const soak = mergeSoakReport(undefined, '<!-- bench:soak:start -->soak<!-- bench:soak:end -->');
    const both = mergeConsoleReport(soak, '<!-- bench:console:start -->page<!-- bench:console:end -->');
    const first = mergeStormReport(both, `${STORM_BLOCK_START}one${STORM_BLOCK_END}`);
    expect(first.indexOf('## Storm')).toBeGreaterThan(0);
    expect(first.indexOf('## Storm')).toBeLessThan(first.indexOf('## Soak'));
    expect(first.indexOf('## Soak')).toBeLessThan(first.indexOf('## Console'));
    const second = mergeStormReport(first, `${STORM_BLOCK_START}two${STORM_BLOCK_END}`);
    expect(second).toBe(first.replace('one', 'two'));
  });
});
