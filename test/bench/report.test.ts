import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { summariseHops } from '../../bench/hops.js';
import type { SizeResult } from '../../bench/measure.js';
import { SIZES } from '../../bench/options.js';
import {
  BLOCK_END,
  BLOCK_START,
  type Machine,
  renderBlock,
  type StoredIdle,
  type StoredSoak,
} from '../../bench/report.js';
import type { SoakResult } from '../../bench/soak.js';
import { testMachine } from './machine.js';

const machine: Machine = testMachine();

const stats = (p50: number, p99: number) => ({ count: 100, p50, p99, max: p99 });

/** A result of `label` with the numbers that differ between the tests; the rest is plausible. */
function result(
  label: string,
  mode: SizeResult['mode'],
  numbers: { cpuPerPoll: number; p99: number; overruns?: number; undiciCpu?: number },
): SizeResult {
  const spec = SIZES[label]!;
  const entities = spec.vehicles + spec.robots;
  const overruns = numbers.overruns ?? 0;
  return {
    spec,
    ...(mode ? { mode } : {}),
    ...(mode === 'contended' ? { hog: { pinnedCpu: 1, cores: 0.98 } } : {}),
    entities,
    windowMs: spec.intervalMs * spec.cycles,
    polls: 1000,
    pollsPerSecond: 2000,
    observations: 1000,
    fleetwatch: { cpuMicros: 1, cpuPerPoll: numbers.cpuPerPoll, cpuPerObservation: 1, cores: 0.4 },
    redis: { cpuMicros: 1, cpuPerPoll: 20 },
    simulator: { cpuPerPoll: 30 },
    memory: {
      meanRss: 300 * 2 ** 20,
      maxRss: 380 * 2 ** 20,
      maxRssPerThousand: (380 * 2 ** 20) / (entities / 1000),
    },
    latency: {
      flips: 10,
      delivered: 10,
      beyondPoll: stats(25, numbers.p99),
      changeToWebhook: stats(1000, 5000),
    },
    cycles: { overruns, leaseHeld: 0, staleTicks: 0, withinInterval: overruns === 0 },
    events: 10,
    deliveries: 10,
    undici: { requests: 1000, errors: 0, cpuMicros: (numbers.undiciCpu ?? 20) * 1000, wallMs: 1000 },
    fleetwatchExit: 'exit 0',
  };
}

describe('the benchmark report', () => {
  it('renders quiet results written before modes existed as the committed BENCHMARKS.md block', () => {
    const json = JSON.parse(readFileSync('BENCHMARKS.json', 'utf8')) as {
      machine: Machine;
      results: SizeResult[];
      idle?: StoredIdle;
      soak?: StoredSoak;
    };
    const markdown = readFileSync('BENCHMARKS.md', 'utf8');
    const block = markdown.slice(
      markdown.indexOf(BLOCK_START),
      markdown.indexOf(BLOCK_END) + BLOCK_END.length,
    );
    expect(renderBlock(json.results, json.machine, json.idle, json.soak)).toBe(block);
  });

  it('keeps the quiet format, without a mode column, when only quiet results ran', () => {
    const block = renderBlock([result('40k', 'quiet', { cpuPerPoll: 190, p99: 60 })], machine);
    expect(block).toContain('| size | vehicles + robots | cycle |');
    expect(block).toContain('| 40k | 20,000 + 20,000 | 60 s × 2 |');
    expect(block).not.toContain('| size | mode |');
    expect(block).not.toContain('Quiet / contended');
    // Every target has its row; those whose run was not made say which run would check them.
    expect(block).toContain(
      '| 100,000 entities on one 60 s cycle: 0 overruns, every change delivered | not run (--sizes 100k) | — |',
    );
    expect(block).toContain(
      "| CPU per poll ≤ 3× the bare undici loop's per request (same run, quiet) | 40k 9.5× | **missed** by up to 217 % (9.5 vs 3) |",
    );
    expect(block).toContain(
      '| quiet: p99 ≤ 50 ms beyond the poll at every size | 40k 60 ms | **missed** by up to 20 % (60 vs 50) |',
    );
    expect(block).toContain('| an upstream outage at 40,000 is cheap | not run (--sizes 40k --outage) | — |');
  });

  it('sets an outage’s cycle beside a normal one, with when each API was judged and what was sent', () => {
    const cost = (fleetwatchCpuMs: number, redisWrites: number) => ({
      fleetwatchCpuMs,
      redisCpuMs: fleetwatchCpuMs / 10,
      redisCommands: redisWrites * 2,
      redisWrites,
    });
    const block = renderBlock(
      [
        {
          ...result('40k', 'quiet', { cpuPerPoll: 190, p99: 60 }),
          outage: {
            cycles: 2,
            normal: cost(27_000, 300_000),
            outage: cost(900, 4_000),
            judgedAfterMs: { robots: 41_000 },
            notifications: { 'monitor.upstream.degraded': 1 },
            recovered: true,
          },
        },
      ],
      machine,
    );
    expect(block).toContain('### Upstream outage');
    expect(block).toContain(
      '| 40k | 27,000 ms → 900 ms | 2,700 ms → 90 ms | 600,000 → 8,000 | 300,000 → 4,000 | fleet not judged, robots 41 s | 1 × `monitor.upstream.degraded` | yes |',
    );
    expect(block).toContain(
      "| an upstream outage at 40,000 is cheap: CPU and Redis writes per cycle at or below a normal cycle's | fleetwatch 900 ms (normal 27,000), Redis writes 4,000 (normal 300,000), 1 notification | met |",
    );
    expect(renderBlock([result('40k', 'quiet', { cpuPerPoll: 190, p99: 60 })], machine)).not.toContain(
      '### Upstream outage',
    );
  });

  it('sets a run by replicas beside the one-process run, each with its own 100k target row', () => {
    const single = result('100k', 'quiet', { cpuPerPoll: 120, p99: 700, overruns: 3058 });
    const replicated: SizeResult = {
      ...result('100k', 'quiet', { cpuPerPoll: 125, p99: 300 }),
      replicas: 2,
      settle: { settled: true, ms: 181_000 },
    };
    const block = renderBlock([single, replicated], machine);
    expect(block).toContain('| 100k (2 replicas) | 50,000 + 50,000 |');
    expect(block).toContain(
      '| 100,000 entities (50,000 + 50,000) on one 60 s cycle on 2 cores by one fleetwatch process: 0 overruns, every change delivered | 3058 overrunning jobs, 0 jobs whose entities another poll held, 0 ticks dropped as too old, 10 of 10 changes delivered, 2 cores | **missed** by 3058 overrunning jobs |',
    );
    expect(block).toContain(
      '| 100,000 entities (50,000 + 50,000) on one 60 s cycle on 2 cores by 2 fleetwatch replicas: 0 overruns, every change delivered | 0 overrunning jobs, 0 jobs whose entities another poll held, 0 ticks dropped as too old, 10 of 10 changes delivered, 2 cores; measured after the first cycle without overruns, 181 s after the baseline | met |',
    );
    // The per-size ratios and the memory growth compare one-process runs only.
    expect(block).toMatch(/\| CPU per poll ≤ 3× [^\n]*\| 100k 6\.0× \|/);
  });

  it('counts the shards that sat out a tick in rows measured since shards coalesce', () => {
    const behind = result('100k', 'quiet', { cpuPerPoll: 240, p99: 100, overruns: 2672 });
    behind.cycles = { overruns: 2672, leaseHeld: 0, coalesced: 1231, withinInterval: false };
    const block = renderBlock([behind], machine);
    expect(block).toContain(
      '| 2672 overrunning jobs, 0 jobs whose entities another poll held, 1231 shards that sat out a tick, their job still queued, 10 of 10 changes delivered, 2 cores | **missed** by 2672 overrunning jobs, 1231 shards that sat out a tick, their job still queued |',
    );
    expect(block).toContain(
      '| no (2672 overrunning jobs, 1231 shards that sat out a tick, their job still queued) |',
    );
  });

  it('keeps a decimal for a miss too small for whole numbers', () => {
    const idle = {
      entities: 60,
      settleMs: 60_000,
      rss: { first: 0, last: 0, mean: 0, median: 90.2 * 2 ** 20, max: 96 * 2 ** 20 },
      heap: { used: 38 * 2 ** 20, total: 60 * 2 ** 20 },
      fleetwatchExit: 'exit 0',
    };
    expect(renderBlock([], machine, idle)).toContain('| **missed** by 0.2 % (90.2 vs 90) |');
  });

  it('judges the soak in the targets table by both slopes, and only a soak of 30 minutes or more', () => {
    const trend = (slopeMb: number) => ({ start: 0, end: 0, max: 0, slopePerHour: slopeMb * 2 ** 20 });
    const soak = (minutes: number, rssMb: number, heapMb: number): StoredSoak => ({
      machine,
      result: {
        spec: SIZES['10k']!,
        durationMs: minutes * 60_000,
        warmupMs: 15 * 60_000,
        flips: 100,
        rss: trend(rssMb),
        heapUsed: trend(heapMb),
        noGrowth: rssMb < 5 && heapMb < 2,
        fleetwatchExit: 'exit 0',
        samples: { rss: [], heapUsed: [] },
      } satisfies SoakResult,
    });
    const row = (stored?: StoredSoak) =>
      renderBlock([], machine, undefined, stored)
        .split('\n')
        .find((line) => line.startsWith('| no memory growth'));
    expect(row(soak(90, 1.5, -0.4))).toMatch(
      /\| 10k for 90 min \(.*\): RSS \+1\.5 MB\/h, heap −0\.4 MB\/h \| met \|$/,
    );
    expect(row(soak(120, 1, 3.2))).toMatch(/\| \*\*missed\*\*: heap \+3\.2 MB\/h \|$/);
    expect(row(soak(60, 6, 3))).toMatch(/\| \*\*missed\*\*: RSS \+6\.0 MB\/h, heap \+3\.0 MB\/h \|$/);
    expect(row(soak(10, 0, 0))).toMatch(/10k for 10 min .*; shorter than the target's \| — \|$/);
    expect(row()).toContain('| not run (--soak) | — |');
  });

  it('splits CPU per poll over the threads for the results that measured it', () => {
    const split = {
      ...result('40k', 'quiet', { cpuPerPoll: 100, p99: 30 }),
      threads: { main: 15_000, pollThread: 65_000, helpers: 20_000 },
    };
    const block = renderBlock([split], machine);
    expect(block).toContain('| 40k | 15 µs (15 %) | 65 µs (65 %) | 20 µs (20 %) |');
    const onMain = { ...split, threads: { main: 80_000, helpers: 20_000 }, pollThread: false };
    expect(renderBlock([onMain], machine)).toContain('| 40k (main loop) | 80 µs (80 %) | — | 20 µs (20 %) |');
    expect(renderBlock([result('40k', 'quiet', { cpuPerPoll: 100, p99: 30 })], machine)).not.toContain(
      '### CPU by thread',
    );
  });

  it('names the pollers fleetwatch itself said were behind', () => {
    const behind = result('100k', 'quiet', { cpuPerPoll: 240, p99: 100, overruns: 12 });
    behind.cycles = {
      overruns: 12,
      leaseHeld: 0,
      coalesced: 40,
      behind: ['robot_feedback', 'robot_health'],
      withinInterval: false,
    };
    expect(renderBlock([behind], machine)).toContain(
      '| no (12 overrunning jobs, 40 shards that sat out a tick, their job still queued, monitor.polling.behind raised for robot_feedback, robot_health) |',
    );
    behind.cycles = { ...behind.cycles, behind: [] };
    expect(renderBlock([behind], machine)).not.toContain('monitor.polling.behind');
  });

  it('sets fleetwatch beside the bare loop at the cycle’s pace, where it was measured', () => {
    const plain = result('10k', 'quiet', { cpuPerPoll: 120, p99: 40, undiciCpu: 30 });
    const paced: SizeResult = {
      ...plain,
      undiciPaced: { requests: 8_000, errors: 0, cpuMicros: 400_000, wallMs: 10_000, rate: 800 },
    };
    expect(renderBlock([paced], machine)).toContain('| 10k | 30 µs | 4.0× | 50 µs (800/s) | 2.4× |');
    expect(renderBlock([plain], machine)).toContain('| 10k | 30 µs | 4.0× | not measured | — |');
    // The target is judged against the flat-out loop; the paced ratio stands beside it.
    expect(renderBlock([paced], machine)).toContain(
      "| CPU per poll ≤ 3× the bare undici loop's per request (same run, quiet) | 10k 4.0×; against the loop at the cycle's pace 10k 2.4× | **missed**",
    );
    expect(renderBlock([plain], machine)).toContain(
      "| CPU per poll ≤ 3× the bare undici loop's per request (same run, quiet) | 10k 4.0× | **missed**",
    );
  });

  it('marks a run that polled on the main event loop (--no-poll-thread)', () => {
    const threaded: SizeResult = {
      ...result('10k', 'quiet', { cpuPerPoll: 120, p99: 70 }),
      pollThread: true,
    };
    const block = renderBlock([{ ...threaded, pollThread: false }], machine);
    expect(block).toContain('| 10k (main loop) | 5,000 + 5,000 |');
    expect(renderBlock([threaded], machine)).toContain('| 10k | 5,000 + 5,000 |');
  });

  it('spreads Redis CPU per poll over a cluster’s masters, with the busiest one’s share', () => {
    const clustered = result('10k', 'quiet', { cpuPerPoll: 150, p99: 40 });
    const block = renderBlock(
      [
        {
          ...clustered,
          redis: {
            cpuMicros: 1,
            cpuPerPoll: 30,
            kind: 'cluster',
            masters: [{ cpuPerPoll: 12 }, { cpuPerPoll: 9 }, { cpuPerPoll: 9 }],
          },
        },
      ],
      machine,
    );
    expect(block).toContain('### Redis Cluster');
    expect(block).toContain('| 10k (Redis Cluster) | 30 µs | 12 µs / 9 µs / 9 µs | 40 % |');
    expect(block).toContain(
      '| on a 3-master Redis Cluster each master does a fair share: the busiest ≤ 50 % of Redis CPU per poll | 40 % at 10k | met |',
    );
    expect(renderBlock([clustered], machine)).not.toContain('### Redis Cluster');
  });

  it('shows garbage collection per poll for the results that measured it, and leaves the section out otherwise', () => {
    const measured = {
      ...result('10k', 'quiet', { cpuPerPoll: 200, p99: 40 }),
      gc: { microsPerPoll: 14, scavengesPerThousandPolls: 2.5 },
    };
    const older = result('1k', 'quiet', { cpuPerPoll: 250, p99: 30 });
    const block = renderBlock([older, measured], machine);
    expect(block).toContain('### Garbage collection');
    expect(block).toContain('| 10k | 14 µs | 7 % | 2.5 |');
    expect(block).not.toContain('| 1k | n/a');
    expect(renderBlock([older], machine)).not.toContain('### Garbage collection');
  });

  it('shows the main thread’s longest stall beside the scrapes, where it was measured', () => {
    const scrapes = { count: 7, maxAgeMs: 0, medianAgeMs: 0, maxReadMs: 22, misses: 0 };
    const measured = {
      ...result('40k', 'quiet', { cpuPerPoll: 160, p99: 52 }),
      scrapes: { ...scrapes, maxLoopStallMs: 81.4 },
    };
    const older = { ...result('10k', 'quiet', { cpuPerPoll: 150, p99: 40 }), scrapes };
    const block = renderBlock([older, measured], machine);
    expect(block).toContain('| 40k | 7 | 0 s / 0 s | 22 ms | 0 | 81 ms |');
    expect(block).toContain('| 10k | 7 | 0 s / 0 s | 22 ms | 0 | — |');
  });

  it('shows the time beyond the poll stage by stage for the results that traced it', () => {
    const spans = [1, 2, 3, 30, 5, 6, 7];
    const measured = {
      ...result('10k', 'quiet', { cpuPerPoll: 200, p99: 40 }),
      hops: summariseHops(
        [
          {
            observed: 0,
            committed: 1,
            relayed: 3,
            dispatching: 6,
            dispatched: 36,
            queued: 41,
            sending: 47,
            arrived: 54,
          },
        ],
        2,
      ),
    };
    const block = renderBlock([measured], machine);
    expect(block).toContain('### Beyond the poll, stage by stage');
    expect(block).toContain(`| 10k | 1 of 2 | ${spans.map((span) => `${span} / ${span}`).join(' | ')} |`);
    expect(block).toContain(`| 10k, slowest (54 ms) | | ${spans.join(' | ')} |`);
    expect(renderBlock([result('10k', 'quiet', { cpuPerPoll: 200, p99: 40 })], machine)).not.toContain(
      'stage by stage',
    );
  });

  it('sets a quiet run beside the contended run of the same size on the same Redis only', () => {
    const single = result('10k', 'quiet', { cpuPerPoll: 150, p99: 40 });
    const clustered = {
      ...result('10k', 'quiet', { cpuPerPoll: 300, p99: 60 }),
      redis: { cpuMicros: 1, cpuPerPoll: 30, kind: 'cluster' as const, masters: [{ cpuPerPoll: 30 }] },
    };
    const contended = result('10k', 'contended', { cpuPerPoll: 190, p99: 80 });
    const pairs = renderBlock([single, clustered, contended], machine)
      .split('### Quiet / contended')[1]!
      .split('###')[0]!
      .split('\n')
      .filter((line) => line.startsWith('| 10k'));
    expect(pairs).toEqual([expect.stringContaining('| 10k | 150 µs / 190 µs |')]);
  });

  it('marks each result with its mode and puts a size’s quiet and contended results side by side', () => {
    const block = renderBlock(
      [
        result('1k', 'quiet', { cpuPerPoll: 210, p99: 120 }),
        result('1k', 'contended', { cpuPerPoll: 260, p99: 300, undiciCpu: 30 }),
        result('40k', 'quiet', { cpuPerPoll: 190, p99: 60 }),
        result('40k', 'contended', { cpuPerPoll: 230, p99: 140 }),
      ],
      machine,
    );
    const lines = block.split('\n');
    expect(lines).toContain(
      '| size | mode | vehicles + robots | cycle | polls/s | CPU/poll fleetwatch | CPU/poll Redis | fleetwatch cores | p50 / p99 beyond the poll | p50 / p99 change to webhook | max RSS | RSS per 1k | cycles inside interval |',
    );
    const rowsOf = (prefix: string) => lines.filter((line) => line.startsWith(prefix));
    // Each table: quiet then contended for 1k, then for 40k.
    expect(rowsOf('| 1k | ').map((line) => line.split(' | ')[1])).toEqual([
      'quiet',
      'contended',
      'quiet',
      'contended',
      '210 µs / 260 µs',
    ]);
    expect(lines).toContain(
      '| 1k | contended | 30 µs | 8.7× | not measured | — | not installed | n/a | 10 of 10 | exit 0 |',
    );
    expect(lines).toContain(
      '| 1k | 210 µs / 260 µs | 20 µs / 30 µs | 10.5× / 8.7× | 120 ms / 300 ms | 0 / 0 | 2,000 / 2,000 |',
    );
    expect(lines).toContain('| contended: p99 ≤ 150 ms beyond the poll at 40,000 | 140 ms | met |');
    expect(block).toContain('pinned to CPU 1 with `taskset -c 1`');
    expect(block).toContain('it used 0.98 of a core');
  });

  it('checks the contended targets at 40k and says by how much they were missed', () => {
    const block = renderBlock(
      [result('40k', 'contended', { cpuPerPoll: 230, p99: 300, overruns: 3 })],
      machine,
    );
    expect(block).toContain(
      '| contended: 40,000 entities on a 60 s cycle with one core taken, 0 overruns | 3 overruns, 0 entities skipped | **missed** by 3 overrunning jobs |',
    );
    expect(block).toContain(
      '| contended: p99 ≤ 150 ms beyond the poll at 40,000 | 300 ms | **missed** by 100 % (300 vs 150) |',
    );
    // No quiet run: the quiet targets have no row.
    expect(block).not.toContain('quiet: p99');
  });

  it('says when the hog could not be pinned', () => {
    const contended = result('1k', 'contended', { cpuPerPoll: 260, p99: 300 });
    const block = renderBlock([{ ...contended, hog: { pinnedCpu: null, cores: 0.7 } }], machine);
    expect(block).toContain('not pinned: taskset was missing or could not pin');
    expect(block).toContain(
      '| contended: 40,000 entities, 0 overruns and p99 ≤ 150 ms beyond the poll | not run (--sizes 40k --contended) | — |',
    );
  });
});
