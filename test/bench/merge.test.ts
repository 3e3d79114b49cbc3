import { describe, expect, it } from 'vitest';
import type { IdleResult } from '../../bench/idle.js';
import type { SizeResult } from '../../bench/measure.js';
import { SIZES } from '../../bench/options.js';
import {
  describeOlderRows,
  type Machine,
  mergeResults,
  renderBlock,
  type StoredResult,
} from '../../bench/report.js';
import { testMachine } from './machine.js';

/** A partial run (one size, or one mode) keeps the rows of the block it did not measure. */

const machineAt = (commit: string, date: string): Machine => testMachine(commit, date);
const earlier = machineAt('aaa1111', '2026-01-01T10:00:00.000Z');
const later = machineAt('bbb2222', '2026-02-01T10:00:00.000Z');

function result(label: string, mode: 'quiet' | 'contended', cpuPerPoll: number, maxRssMb = 300): SizeResult {
  const spec = SIZES[label]!;
  const entities = spec.vehicles + spec.robots;
  const stats = { count: 10, p50: 20, p99: 50, max: 50 };
  return {
    spec,
    mode,
    entities,
    windowMs: spec.intervalMs * spec.cycles,
    polls: 1000,
    pollsPerSecond: 2000,
    observations: 1000,
    fleetwatch: { cpuMicros: 1, cpuPerPoll, cpuPerObservation: 1, cores: 0.4 },
    redis: { cpuMicros: 1, cpuPerPoll: 20 },
    simulator: { cpuPerPoll: 30 },
    memory: {
      meanRss: 1,
      maxRss: maxRssMb * 2 ** 20,
      maxRssPerThousand: (maxRssMb * 2 ** 20) / (entities / 1000),
    },
    latency: { flips: 10, delivered: 10, beyondPoll: stats, changeToWebhook: stats },
    cycles: { overruns: 0, leaseHeld: 0, staleTicks: 0, withinInterval: true },
    events: 10,
    deliveries: 10,
    undici: { requests: 1000, errors: 0, cpuMicros: 20_000, wallMs: 1000 },
    fleetwatchExit: 'exit 0',
  };
}

const keyOf = (r: StoredResult) =>
  `${r.spec.label} ${r.mode} ${r.fleetwatch.cpuPerPoll} ${r.measured?.commit}`;

describe('merging a run into the stored results', () => {
  it('replaces only the sizes measured again, and keeps where the others came from', () => {
    const stored = [result('1k', 'quiet', 210), result('10k', 'quiet', 180), result('40k', 'quiet', 190)];
    const merged = mergeResults(stored, earlier, [result('10k', 'quiet', 150)], later);
    expect(merged.map(keyOf)).toEqual([
      '1k quiet 210 aaa1111',
      '10k quiet 150 bbb2222',
      '40k quiet 190 aaa1111',
    ]);
  });

  it('merges by size and mode: a contended run keeps the quiet row of the same size', () => {
    const stored = [result('40k', 'quiet', 190), result('40k', 'contended', 260)];
    const merged = mergeResults(
      stored,
      earlier,
      [result('40k', 'contended', 240), result('1k', 'contended', 300)],
      later,
    );
    expect(merged.map(keyOf)).toEqual([
      '1k contended 300 bbb2222',
      '40k quiet 190 aaa1111',
      '40k contended 240 bbb2222',
    ]);
  });

  it('keeps the provenance a stored row already has, whatever the file’s machine says', () => {
    const stored: StoredResult[] = [
      { ...result('1k', 'quiet', 210), measured: { commit: 'ccc3333', date: '2025-12-01T00:00:00.000Z' } },
    ];
    const merged = mergeResults(stored, earlier, [], later);
    expect(merged[0]?.measured).toEqual({ commit: 'ccc3333', date: '2025-12-01T00:00:00.000Z' });
  });

  it('keeps a row’s outage through a rerun without one, with the run the outage is from', () => {
    const cost = { fleetwatchCpuMs: 10, redisCpuMs: 1, redisCommands: 100, redisWrites: 50 };
    const outage = {
      cycles: 2,
      normal: cost,
      outage: { ...cost, fleetwatchCpuMs: 2 },
      judgedAfterMs: { fleet: 1000, robots: 2000 },
      notifications: { 'monitor.upstream.degraded': 2 },
      recovered: true,
    };
    const stored = [{ ...result('40k', 'quiet', 190), outage }];
    const rerun = mergeResults(stored, earlier, [result('40k', 'quiet', 150)], later);
    expect(rerun[0]?.outage).toEqual(outage);
    expect(rerun[0]?.outageMeasured).toEqual({ commit: 'aaa1111', date: '2026-01-01T10:00:00.000Z' });
    expect(describeOlderRows(rerun, later)).toBe(
      'Rows measured in an earlier run: 40k outage on 2026-01-01 at commit `aaa1111`.',
    );
    // A second rerun keeps the outage's own run, not the row it passed through.
    const third = machineAt('ccc3333', '2026-03-01T10:00:00.000Z');
    const again = mergeResults(rerun, later, [result('40k', 'quiet', 140)], third);
    expect(again[0]?.outageMeasured?.commit).toBe('aaa1111');
    // A run with its own outage replaces it and carries no separate provenance.
    const fresh = mergeResults(again, third, [{ ...result('40k', 'quiet', 130), outage }], later);
    expect(fresh[0]?.outageMeasured).toBeUndefined();
    expect(describeOlderRows(fresh, later)).toBeUndefined();
  });

  it('starts from nothing when nothing was stored', () => {
    expect(mergeResults([], undefined, [result('1k', 'quiet', 210)], later).map(keyOf)).toEqual([
      '1k quiet 210 bbb2222',
    ]);
  });
});

describe('the block of a partial run', () => {
  it('names the rows measured earlier, grouped by run, and says nothing when all are fresh', () => {
    const merged = mergeResults(
      [result('1k', 'quiet', 210), result('40k', 'quiet', 190)],
      earlier,
      [result('10k', 'quiet', 150)],
      later,
    );
    expect(describeOlderRows(merged, later)).toBe(
      'Rows measured in an earlier run: 1k, 40k on 2026-01-01 at commit `aaa1111`.',
    );
    const block = renderBlock(merged, later);
    expect(block).toContain('at commit `bbb2222`');
    expect(block).toContain('1k, 40k on 2026-01-01 at commit `aaa1111`');
    expect(block.match(/^\| (1k|10k|40k) \|/gm)).toEqual([
      '| 1k |',
      '| 10k |',
      '| 40k |',
      '| 1k |',
      '| 10k |',
      '| 40k |',
    ]);
    const fresh = mergeResults([], undefined, [result('1k', 'quiet', 210)], later);
    expect(describeOlderRows(fresh, later)).toBeUndefined();
  });

  it('checks the growth target from the smallest size to 40k, and the idle target', () => {
    const merged = mergeResults(
      [result('1k', 'quiet', 210, 240), result('40k', 'quiet', 190, 387)],
      earlier,
      [],
      later,
    );
    const idle: IdleResult = {
      entities: 60,
      settleMs: 60_000,
      rss: { first: 1, last: 1, mean: 1, median: 120 * 2 ** 20, max: 125 * 2 ** 20 },
      heap: { used: 40 * 2 ** 20, total: 50 * 2 ** 20 },
      fleetwatchExit: 'exit 0',
    };
    const block = renderBlock(merged, later, {
      ...idle,
      measured: { commit: later.commit, date: later.date },
    });
    expect(block).toContain(
      '| ≤ 2.0 MB RSS growth per 1,000 entities (max RSS, 1k to 40k) | 3.8 MB | **missed** by 88 % (3.8 vs 2) |',
    );
    expect(block).toContain(
      '| idle RSS of `fleetwatch run` with 60 entities (defaults, queue UI on) ≤ 90.0 MB | 120.0 MB',
    );
    expect(block).toContain('**missed** by 33 % (120 vs 90) |');
  });
});
