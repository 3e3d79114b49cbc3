import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { InvalidArgumentError } from 'commander';
import { Prng } from '../src/simulator/prng.js';
import { fetchToken, listIds } from './cycle.js';
import { FleetwatchProcess, sumOf } from './fleetwatch.js';
import { type SizeSpec, startSink, waitForBaseline } from './measure.js';
import { memoryOf } from './proc.js';
import { startBenchRedis } from './redis.js';
import { SimulatorProcess } from './simulator.js';

/**
 * The soak: one size run for a long time (30 minutes by default) with changes every cycle, RSS
 * sampled every 10 s and V8's heap read at every Prometheus scrape (15 s). Growth is judged on the
 * low points: the post-warm-up time is cut into windows, each window's lowest RSS and heap (what
 * survives the garbage collector) make the line whose slope is the verdict. Sawtooth between
 * collections, which is tens of MB, does not count; memory that stays does.
 */

export const SOAK_MIN_MS = 5 * 60_000;
export const SOAK_MAX_MS = 4 * 3_600_000;
export const SOAK_DEFAULT = '30m';
/** The first sixth of the run (at least 2 minutes) is warm-up: caches fill, V8 sizes its heap. */
export const SOAK_WARMUP_SHARE = 1 / 6;
const SOAK_WARMUP_MIN_MS = 2 * 60_000;
const SOAK_WINDOWS = 10;
/**
 * "No growth": both slopes under these. At 10k about 700 polls a second are made: a leak of a
 * few bytes per poll is several MB an hour, so these catch any leak on the poll path.
 */
export const SOAK_LIMITS = { rssPerHour: 5 * 2 ** 20, heapPerHour: 2 * 2 ** 20 } as const;

/** `--soak 30m`: a duration with a unit (s, m, h), from 5 minutes to 4 hours. */
export function soakDuration(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(s|m|h)$/.exec(value.trim());
  const ms = match
    ? Number(match[1]) * { s: 1_000, m: 60_000, h: 3_600_000 }[match[2] as 's' | 'm' | 'h']
    : NaN;
  if (!Number.isFinite(ms))
    throw new InvalidArgumentError(
      `expected a duration such as 30m, 90m or 2h; got ${JSON.stringify(value)}`,
    );
  if (ms < SOAK_MIN_MS || ms > SOAK_MAX_MS)
    throw new InvalidArgumentError(`expected a duration from 5m to 4h; got ${value}`);
  return ms;
}

export interface SoakSample {
  /** Since the end of the baseline cycle. */
  atMs: number;
  bytes: number;
}

export interface SoakTrend {
  start: number;
  end: number;
  max: number;
  /** Slope of the windows' low points after warm-up, bytes per hour. */
  slopePerHour: number;
}

export interface SoakResult {
  spec: SizeSpec;
  durationMs: number;
  warmupMs: number;
  flips: number;
  rss: SoakTrend;
  heapUsed: SoakTrend;
  /**
   * Whose heaps `heapUsed` adds up: with a poll thread that reports its heap, both threads'; soaks
   * measured before it (none here) read the main thread's alone.
   */
  heapOf?: 'main thread' | 'both threads';
  noGrowth: boolean;
  fleetwatchExit: string;
  samples: { rss: SoakSample[]; heapUsed: SoakSample[] };
}

/** Least-squares slope of (x, y), per unit of x. */
function slope(points: ReadonlyArray<[number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** Start, end, peak and the slope of the per-window lows after `warmupMs`. */
export function trendOf(samples: readonly SoakSample[], warmupMs: number, durationMs: number): SoakTrend {
  const after = samples.filter((s) => s.atMs >= warmupMs);
  const width = (durationMs - warmupMs) / SOAK_WINDOWS;
  const lows: Array<[number, number]> = [];
  for (let w = 0; w < SOAK_WINDOWS; w++) {
    const inWindow = after.filter(
      (s) => s.atMs >= warmupMs + w * width && s.atMs < warmupMs + (w + 1) * width,
    );
    if (inWindow.length === 0) continue;
    const low = inWindow.reduce((a, b) => (b.bytes < a.bytes ? b : a));
    lows.push([low.atMs / 3_600_000, low.bytes]);
  }
  return {
    start: samples[0]?.bytes ?? 0,
    end: samples.at(-1)?.bytes ?? 0,
    max: samples.reduce((a, s) => Math.max(a, s.bytes), 0),
    slopePerHour: slope(lows),
  };
}

type Log = (message: string) => void;

export async function runSoak(
  root: string,
  spec: SizeSpec,
  durationMs: number,
  log: Log,
): Promise<SoakResult> {
  const workDir = mkdtempSync(join(tmpdir(), `fleetwatch-bench-soak-${spec.label}-`));
  const redis = await startBenchRedis('single');
  const cleanups: Array<() => Promise<void>> = [() => redis.stop()];
  try {
    const simulator = await SimulatorProcess.start(root, spec, workDir);
    cleanups.unshift(() => simulator.stop());
    const ids = await listIds(simulator.url, await fetchToken(simulator.url));
    const { sink, stop: stopSink } = await startSink();
    cleanups.unshift(stopSink);
    const fleetwatch = await FleetwatchProcess.start({
      root,
      workDir,
      simulatorUrl: simulator.url,
      redis: redis.section,
      sinkUrl: sink.url,
      intervalMs: spec.intervalMs,
    });
    let fleetwatchExit = 'still running';
    cleanups.unshift(async () => {
      await fleetwatch.stop();
      const exit = fleetwatch.process.exit;
      fleetwatchExit = exit ? (exit.signal ? `signal ${exit.signal}` : `exit ${exit.code}`) : 'unknown';
    });
    log(
      `${spec.vehicles + spec.robots} entities every ${spec.intervalMs / 1000} s; waiting for the baseline; logs in ${workDir}`,
    );
    if (!(await waitForBaseline(fleetwatch, spec, ids))) {
      log('fleetwatch had not polled the whole fleet after the baseline cycles; soaking anyway');
    }

    const warmupMs = Math.max(SOAK_WARMUP_MIN_MS, durationMs * SOAK_WARMUP_SHARE);
    log(
      `soaking for ${Math.round(durationMs / 60_000)} min (the first ${Math.round(warmupMs / 60_000)} min are warm-up)`,
    );
    const pid = fleetwatch.process.pid;
    const prng = new Prng(11);
    const pick = (list: readonly string[]): string => list[Math.floor(prng.next() * list.length)]!;
    const flipsPerCycle = Math.min(100, Math.max(10, Math.round((spec.vehicles + spec.robots) * 0.005)));
    const rss: SoakSample[] = [];
    const heapUsed: SoakSample[] = [];
    const started = Date.now();
    let flips = 0;
    let pollThreadHeap = false;
    let nextRss = started;
    let nextScrape = started;
    let nextFlip = started;
    let nextLog = started + 5 * 60_000;
    for (let now = Date.now(); now - started < durationMs; now = Date.now()) {
      if (!fleetwatch.process.running)
        throw new Error(`fleetwatch exited (see ${fleetwatch.process.logFile})`);
      if (now >= nextRss) {
        nextRss += 10_000;
        rss.push({ atMs: now - started, bytes: memoryOf(pid).rss });
      }
      if (now >= nextScrape) {
        nextScrape += 15_000;
        const samples = await fleetwatch.metrics();
        const threadHeap = sumOf(samples, 'fleetwatch_poll_thread_heap_size_used_bytes');
        pollThreadHeap ||= threadHeap > 0;
        // Both threads' heaps: the main thread's from prom-client, the poll thread's as it reported it.
        heapUsed.push({
          atMs: now - started,
          bytes: sumOf(samples, 'fleetwatch_nodejs_heap_size_used_bytes') + threadHeap,
        });
      }
      if (now >= nextFlip) {
        // Changes spread over the cycle, so events and deliveries flow all along.
        nextFlip += spec.intervalMs / flipsPerCycle;
        flips += 1;
        if (flips % 2 === 0) await simulator.flipVehiclePower(pick(ids.vehicles));
        else await simulator.flipRobotAutonomy(pick(ids.robots));
      }
      if (now >= nextLog) {
        nextLog += 5 * 60_000;
        log(
          `${Math.round((now - started) / 60_000)} min: RSS ${((rss.at(-1)?.bytes ?? 0) / 2 ** 20).toFixed(0)} MB, heap used ${((heapUsed.at(-1)?.bytes ?? 0) / 2 ** 20).toFixed(0)} MB`,
        );
      }
      await delay(Math.max(0, Math.min(nextRss, nextScrape, nextFlip) - Date.now()));
    }
    const rssTrend = trendOf(rss, warmupMs, durationMs);
    const heapTrend = trendOf(heapUsed, warmupMs, durationMs);
    for (const cleanup of cleanups.splice(0)) await cleanup();
    return {
      spec,
      durationMs,
      warmupMs,
      flips,
      rss: rssTrend,
      heapUsed: heapTrend,
      heapOf: pollThreadHeap ? 'both threads' : 'main thread',
      noGrowth:
        rssTrend.slopePerHour < SOAK_LIMITS.rssPerHour && heapTrend.slopePerHour < SOAK_LIMITS.heapPerHour,
      fleetwatchExit,
      samples: { rss, heapUsed },
    };
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}
