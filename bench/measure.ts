import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Prng } from '../src/simulator/prng.js';
import { type BlackboxResult, findBlackbox, runBlackbox } from './blackbox.js';
import { stopSignal, track } from './cleanup.js';
import { cyclePaths, type FleetIds, fetchToken, listIds } from './cycle.js';
import {
  BENCH_PREFIX,
  BENCH_RECEIVER,
  type FleetwatchProcess,
  FleetwatchReplicas,
  type Samples,
  sumOf,
} from './fleetwatch.js';
import { CpuHog, type HogResult } from './hog.js';
import { type HopsResult, summariseHops, traceArrivals } from './hops.js';
import type { BenchMode } from './options.js';
import { measureOutage, meter, type OutageResult, RedisCommands } from './outage.js';
import { cpuMicros, RssSampler, splitThreads, type ThreadSplit, threadCpuMicros } from './proc.js';
import { type RedisKind, redisPid, startBenchRedis } from './redis.js';
import { type FleetSize, SimulatorProcess } from './simulator.js';
import { WebhookSink } from './sink.js';
import { WakeupProbe } from './wakeup.js';

/** One size of the benchmark: the references, then fleetwatch for a few cycles. */

export interface SizeSpec extends FleetSize {
  label: string;
  intervalMs: number;
  /** Cycles measured after the baseline cycle. */
  cycles: number;
}

export interface Percentiles {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export interface UndiciResult {
  requests: number;
  errors: number;
  cpuMicros: number;
  wallMs: number;
}

/** The bare loop at a cycle's pace (`undici-loop.ts` with a rate): requests started per second. */
export interface PacedUndiciResult extends UndiciResult {
  rate: number;
}

/** How long the paced loop runs: a sample of the cycle, at its pace. */
const PACED_SAMPLE_MS = 10_000;

export interface SizeResult {
  spec: SizeSpec;
  /** Results written before modes existed have none: they were quiet. */
  mode?: BenchMode;
  /** The contended mode's CPU hog, over the whole size (references included). */
  hog?: HogResult;
  entities: number;
  windowMs: number;
  /** Upstream requests the simulator served in the window (every poll is one request). */
  polls: number;
  pollsPerSecond: number;
  /** One per entity and signal polled (robot configuration is three requests, one observation). */
  observations: number;
  fleetwatch: { cpuMicros: number; cpuPerPoll: number; cpuPerObservation: number; cores: number };
  /** Redis' CPU, all servers together; `masters`: each master's share on a cluster (`--redis cluster`). */
  redis: { cpuMicros: number; cpuPerPoll: number; kind?: RedisKind; masters?: Array<{ cpuPerPoll: number }> };
  simulator: { cpuPerPoll: number };
  memory: { meanRss: number; maxRss: number; maxRssPerThousand: number };
  latency: {
    flips: number;
    delivered: number;
    /** Webhook arrival minus the event's `time` (when the poll observed the change). */
    beyondPoll: Percentiles;
    /** Webhook arrival minus the moment the simulator changed. */
    changeToWebhook: Percentiles;
  };
  /**
   * `coalesced`: shards a tick added no job for, their earlier job still queued or running (summed
   * over replicas, each of which counts the ticks it enqueues). `staleTicks`: jobs dropped as too
   * old, in rows measured before shards were coalesced.
   */
  cycles: {
    overruns: number;
    leaseHeld: number;
    coalesced?: number;
    staleTicks?: number;
    /**
     * The pollers fleetwatch itself said were behind (`monitor.polling.behind` delivered during the
     * run, from the baseline on); absent in rows measured before it could say so.
     */
    behind?: string[];
    withinInterval: boolean;
  };
  /** fleetwatch processes against the one Redis (their CPU and metrics summed); absent: one. */
  replicas?: number;
  /**
   * The first fleetwatch process's CPU over the window by thread, in microseconds (its shares
   * apply to every replica's); absent in results before it was measured.
   */
  threads?: ThreadSplit;
  /** fleetwatch polled on a thread of its own (`worker.poll_thread`); absent in results before it. */
  pollThread?: boolean;
  /**
   * How long after the baseline a cycle first passed without overrunning jobs (`settled: false`:
   * none did within the wait, `ms` is the whole wait). Results written before it was measured have none.
   */
  settle?: { settled: boolean; ms: number };
  /**
   * fleetwatch's garbage collection over the window (its `nodejs_gc_duration_seconds`): the pause
   * time per poll, and how many scavenges (minor collections) a thousand polls cost. Results
   * written before it was measured have none.
   */
  gc?: {
    microsPerPoll: number;
    scavengesPerThousandPolls: number;
    /**
     * The poll thread's (`fleetwatch_poll_thread_gc_duration_seconds`): pause per poll, scavenges
     * and full (major) collections per thousand polls. Results written before it was measured, and
     * runs without the poll thread, have none.
     */
    pollThread?: { microsPerPoll: number; scavengesPerThousandPolls: number; majorPerThousandPolls: number };
  };
  /**
   * The fleet gauges as the scrapes of the window saw them: how old the reading each scrape showed
   * was (scrape time minus `fleetwatch_fleet_read_timestamp_seconds`), how long the reading took
   * (`fleetwatch_fleet_read_duration_seconds`, the longest shown) and how many scrapes counted a
   * miss (`fleetwatch_metrics_collect_errors_total{source="fleet"}`). Results written before it
   * was measured have none. `maxLoopStallMs`: the main thread's longest event-loop delay over the
   * window (`fleetwatch_nodejs_eventloop_lag_max_seconds`, which each scrape resets), what a
   * change being notified can wait behind at once; absent in results written before it was measured.
   */
  scrapes?: {
    count: number;
    maxAgeMs: number;
    medianAgeMs: number;
    maxReadMs: number;
    misses: number;
    maxLoopStallMs?: number;
  };
  /**
   * Beyond the poll stage by stage, read back from Redis after the measured changes (hops.ts).
   * Results written before it was measured have none.
   */
  hops?: HopsResult;
  /**
   * The machine's own latency over the measured cycles (wakeup.ts): how late an idle process's
   * timer fired and how long its Redis round trips took. Results written before it was measured
   * have none.
   */
  wakeup?: { timerLate: Percentiles; redisRoundTrip: Percentiles };
  events: number;
  deliveries: number;
  undici: UndiciResult;
  /** The same requests at the cycle's pace; results written before it was measured have none. */
  undiciPaced?: PacedUndiciResult;
  blackbox?: BlackboxResult;
  /** The upstream outage after the measured cycles (`--outage`). */
  outage?: OutageResult;
  fleetwatchExit: string;
}

const sum = (values: readonly number[]): number => values.reduce((total, value) => total + value, 0);

export function percentiles(values: readonly number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number): number =>
    sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
  return { count: sorted.length, p50: rank(0.5), p99: rank(0.99), max: sorted.at(-1) ?? Number.NaN };
}

type Log = (message: string) => void;

async function runUndiciLoop<T extends UndiciResult>(
  root: string,
  simulatorUrl: string,
  pace?: { rate: number; limit: number },
): Promise<T> {
  const paced = pace ? [String(pace.rate), String(pace.limit)] : [];
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', join(root, 'bench/undici-loop.ts'), simulatorUrl, '32', '64', ...paced],
    { cwd: root, maxBuffer: 1 << 20, signal: stopSignal },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as T;
}

/** The loopback webhook receiver, registered with cleanup.ts. */
export async function startSink(): Promise<{ sink: WebhookSink; stop: () => Promise<void> }> {
  const sink = await WebhookSink.start();
  const untrack = track('webhook receiver', () => sink.close());
  return {
    sink,
    stop: async () => {
      await sink.close();
      untrack();
    },
  };
}

/** What the waits read: one fleetwatch, or the sum of its replicas. */
type Watched = FleetwatchProcess | FleetwatchReplicas;

function exitedLog(fleetwatch: Watched): string | undefined {
  if (fleetwatch instanceof FleetwatchReplicas) return fleetwatch.exited;
  return fleetwatch.process.running ? undefined : fleetwatch.process.logFile;
}

/** Entity pollers and the kind whose count they must have observed for the baseline. */
const BASELINE: ReadonlyArray<[string, keyof FleetSize]> = [
  ['power', 'vehicles'],
  ['robot_health', 'robots'],
  ['robot_feedback', 'robots'],
  ['robot_lease', 'robots'],
  ['robot_config', 'robots'],
];

/**
 * Until fleetwatch has polled every entity once, for at most 2 cycles and a minute: a fleetwatch
 * that has not by then is behind its cycle, which the measured cycles will show (overruns), so the
 * benchmark goes on instead of waiting longer. Resolves whether the baseline was complete.
 */
export async function waitForBaseline(fleetwatch: Watched, spec: SizeSpec, ids: FleetIds): Promise<boolean> {
  const deadline = Date.now() + BASELINE_CYCLES * spec.intervalMs + 60_000;
  for (;;) {
    const samples = await fleetwatch.metrics();
    const done = BASELINE.every(
      ([poller, kind]) =>
        sumOf(samples, 'fleetwatch_poll_observations_total', `poller="${poller}"`) >= ids[kind].length,
    );
    if (done) return true;
    const exited = exitedLog(fleetwatch);
    if (exited) throw new Error(`fleetwatch exited (see ${exited})`);
    if (Date.now() > deadline) return false;
    await delay(500);
  }
}

/** How many cycles (and a minute) the baseline may take before the benchmark goes on without it. */
export const BASELINE_CYCLES = 2;

/**
 * Until every event fleetwatch made has reached the sink (the route sends each on its own), but
 * those its inhibition rules kept out: they never will.
 */
async function waitForDrain(fleetwatch: Watched, sink: WebhookSink, timeoutMs: number): Promise<boolean> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await delay(500)) {
    const samples = await fleetwatch.metrics();
    const events = sumOf(samples, 'fleetwatch_events_total');
    const suppressed = sumOf(samples, 'fleetwatch_notifications_suppressed_total');
    if (sink.arrivals.length >= events - suppressed) return true;
  }
  return false;
}

/**
 * Until a whole cycle passes in which no poll job overran, for at most `SETTLE_CYCLES` cycles: the
 * first polls of a fleet commit every entity's first snapshot and announce what is already wrong,
 * which can leave a backlog of jobs behind the cycle; the measured cycles are the steady state
 * after it. Resolves how long it took, or undefined when the fleet never settled.
 */
async function waitForSteadyCycle(fleetwatch: Watched, intervalMs: number): Promise<number | undefined> {
  const started = Date.now();
  const overruns = async () => sumOf(await fleetwatch.metrics(), 'fleetwatch_poll_cycle_overrun_total');
  for (let cycle = 0; cycle < SETTLE_CYCLES; cycle += 1) {
    const before = await overruns();
    await delay(intervalMs);
    if ((await overruns()) === before) return Date.now() - started;
  }
  return undefined;
}

/** How many cycles the benchmark waits at most for a cycle without overruns before measuring. */
export const SETTLE_CYCLES = 3;

interface Flip {
  key: string;
  flippedAt: number;
}

/** Picks entities to change, each once, alternating vehicles (that answer power) and robots. */
async function pickFlips(simulator: SimulatorProcess, ids: FleetIds, count: number, seed: number) {
  const prng = new Prng(seed);
  const shuffle = (list: readonly string[]): string[] => {
    const copy = [...list];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(prng.next() * (i + 1));
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    return copy;
  };
  const vehicles: string[] = [];
  for (const id of shuffle(ids.vehicles)) {
    if (vehicles.length >= Math.ceil(count / 2)) break;
    if (await simulator.powerCapable(id)) vehicles.push(id);
  }
  const robots = shuffle(ids.robots).slice(0, Math.floor(count / 2));
  const plan: Array<() => Promise<Flip>> = [];
  for (let i = 0; i < Math.max(vehicles.length, robots.length); i++) {
    const vehicle = vehicles[i];
    const robot = robots[i];
    if (vehicle) {
      plan.push(async () => {
        await simulator.flipVehiclePower(vehicle);
        return { key: `vehicle.power.changed vehicle/${vehicle}`, flippedAt: Date.now() };
      });
    }
    if (robot) {
      plan.push(async () => {
        await simulator.flipRobotAutonomy(robot);
        return { key: `robot.autonomy.changed robot/${robot}`, flippedAt: Date.now() };
      });
    }
  }
  return { plan, random: () => prng.next() };
}

/** What one scrape showed of the fleet gauges. */
interface ScrapeSeen {
  /** Scrape time minus the shown reading's timestamp (whole seconds, so ±1 s). */
  ageMs: number;
  readMs: number;
  /** The main thread's longest event-loop delay since the scrape before. */
  loopStallMs: number;
}

function scrapeSeen(at: number, samples: Samples): ScrapeSeen {
  const stamp = sumOf(samples, 'fleetwatch_fleet_read_timestamp_seconds');
  return {
    ageMs: stamp > 0 ? Math.max(0, at - stamp * 1000) : Number.POSITIVE_INFINITY,
    readMs: sumOf(samples, 'fleetwatch_fleet_read_duration_seconds') * 1000,
    loopStallMs: loopStallMs(samples),
  };
}

function loopStallMs(samples: Samples): number {
  return sumOf(samples, 'fleetwatch_nodejs_eventloop_lag_max_seconds') * 1000;
}

function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function delta(before: Samples, after: Samples, name: string, ...labels: string[]): number {
  return sumOf(after, name, ...labels) - sumOf(before, name, ...labels);
}

export async function measureSize(
  root: string,
  spec: SizeSpec,
  log: Log,
  options: {
    profileDir?: string;
    mode?: BenchMode;
    outage?: boolean;
    redis?: RedisKind;
    /** fleetwatch processes against the one Redis; 1 by default. */
    replicas?: number;
    /** `worker.poll_thread`; true by default. */
    pollThread?: boolean;
  } = {},
): Promise<SizeResult> {
  const replicas = Math.max(1, options.replicas ?? 1);
  const mode = options.mode ?? 'quiet';
  const workDir = mkdtempSync(join(tmpdir(), `fleetwatch-bench-${spec.label}-${mode}-`));
  const entities = spec.vehicles + spec.robots;
  const redis = await startBenchRedis(options.redis ?? 'single');
  const cleanups: Array<() => Promise<void>> = [() => redis.stop()];
  try {
    // Started before anything is measured, so the references run beside it as fleetwatch does.
    const hog = mode === 'contended' ? CpuHog.start(join(workDir, 'hog.log')) : undefined;
    if (hog) {
      cleanups.unshift(async () => void (await hog.stop()));
      log(
        `CPU hog ${hog.pid} spinning ${hog.pinnedCpu === undefined ? 'one core (not pinned: taskset is missing or cannot pin here)' : `CPU ${hog.pinnedCpu} (taskset -c ${hog.pinnedCpu})`}`,
      );
    }
    const simulator = await SimulatorProcess.start(root, spec, workDir);
    cleanups.unshift(() => simulator.stop());
    const token = await fetchToken(simulator.url);
    const ids = await listIds(simulator.url, token);
    log(`${spec.vehicles} vehicles and ${spec.robots} robots at ${simulator.url}; logs in ${workDir}`);

    const undici = await runUndiciLoop(root, simulator.url);
    log(
      `bare undici loop: ${undici.requests} requests, ${(undici.cpuMicros / undici.requests).toFixed(0)} µs CPU each`,
    );
    const perCycle = cyclePaths(ids).length;
    const rate = Math.round((perCycle * 1000) / spec.intervalMs);
    const undiciPaced = await runUndiciLoop<PacedUndiciResult>(root, simulator.url, {
      rate,
      limit: Math.min(perCycle, Math.ceil((rate * PACED_SAMPLE_MS) / 1000)),
    });
    log(
      `bare undici loop at the cycle's pace (${rate} requests/s): ${undiciPaced.requests} requests, ${(undiciPaced.cpuMicros / undiciPaced.requests).toFixed(0)} µs CPU each`,
    );
    let blackbox: BlackboxResult | undefined;
    const exporter = findBlackbox();
    if (exporter) {
      blackbox = await runBlackbox({
        ...exporter,
        simulatorUrl: simulator.url,
        token,
        robots: ids.robots,
        concurrency: 64,
        workDir,
      });
      log(
        `blackbox_exporter ${blackbox.version}: ${blackbox.probes} probes, ${(blackbox.cpuMicros / blackbox.probes).toFixed(0)} µs CPU each`,
      );
    }

    // fleetwatch polls the lists as it starts and everything else from the next tick on: starting
    // it shortly before a tick makes that tick the baseline cycle instead of the one after it.
    const lead = Math.min(10_000, spec.intervalMs / 3);
    let startAt = Math.ceil(Date.now() / spec.intervalMs) * spec.intervalMs - lead;
    if (startAt < Date.now()) startAt += spec.intervalMs;
    await delay(startAt - Date.now());

    const { sink, stop: stopSink } = await startSink();
    cleanups.unshift(stopSink);
    const fleetwatch = await FleetwatchReplicas.start(
      {
        root,
        workDir,
        simulatorUrl: simulator.url,
        redis: redis.section,
        sinkUrl: sink.url,
        intervalMs: spec.intervalMs,
        pollThread: options.pollThread ?? true,
        ...(options.profileDir ? { profileDir: options.profileDir } : {}),
      },
      replicas,
    );
    let fleetwatchExit = 'still running';
    cleanups.unshift(async () => {
      await fleetwatch.stop();
      const exit = fleetwatch.first.process.exit;
      fleetwatchExit = exit ? (exit.signal ? `signal ${exit.signal}` : `exit ${exit.code}`) : 'unknown';
    });
    log(
      `fleetwatch${replicas > 1 ? ` (${replicas} replicas)` : ''} polls every ${spec.intervalMs / 1000} s; waiting for the baseline cycle`,
    );
    if (!(await waitForBaseline(fleetwatch, spec, ids))) {
      log(`fleetwatch had not polled the whole fleet after ${BASELINE_CYCLES} cycles; measuring anyway`);
    }

    // Whatever the baseline announced (robots seeded unhealthy, ...) is delivered before measuring,
    // for at most a cycle (30 s at least).
    if (!(await waitForDrain(fleetwatch, sink, Math.max(30_000, spec.intervalMs)))) {
      log('the baseline events were still being delivered when measuring began');
    }
    const settleStarted = Date.now();
    const settledMs = await waitForSteadyCycle(fleetwatch, spec.intervalMs);
    const settle = { settled: settledMs !== undefined, ms: settledMs ?? Date.now() - settleStarted };
    log(
      settledMs === undefined
        ? `poll jobs still overran after ${SETTLE_CYCLES} more cycles; measuring anyway`
        : `a cycle without overrunning jobs after ${Math.round(settledMs / 1000)} s`,
    );

    const flipsPerCycle = Math.min(100, Math.max(10, Math.round(entities * 0.005)));
    const { plan, random } = await pickFlips(simulator, ids, flipsPerCycle * spec.cycles, 42);
    const flips: Flip[] = [];

    // The window starts on a tick so it holds whole cycles.
    const windowStart = Math.ceil((Date.now() + 1_000) / spec.intervalMs) * spec.intervalMs;
    const wakeup = await WakeupProbe.start(redis.urls[0]!, workDir);
    cleanups.unshift(async () => void (await wakeup.stop()));
    await delay(windowStart - Date.now());
    const pids = {
      fleetwatch: fleetwatch.pids,
      redis: await Promise.all(redis.urls.map(redisPid)),
      simulator: simulator.process.pid,
    };
    const cpuBefore = {
      fleetwatch: sum(pids.fleetwatch.map(cpuMicros)),
      redis: pids.redis.map(cpuMicros),
      simulator: cpuMicros(pids.simulator),
    };
    const threadsBefore = threadCpuMicros(fleetwatch.first.process.pid);
    const requestsBefore = await simulator.requestsServed();
    const commands = new RedisCommands(redis.urls);
    cleanups.unshift(async () => commands.close());
    const normalBill = await meter(pids, commands);
    const metricsBefore = await fleetwatch.metrics();
    const rss = new RssSampler(fleetwatch.first.process.pid);
    // Prometheus scrapes fleetwatch all the while: that work is part of the bill.
    const scrapes: ScrapeSeen[] = [];
    const scraper = setInterval(() => {
      const at = Date.now();
      fleetwatch
        .scrape()
        .then((samples) => scrapes.push(scrapeSeen(at, samples)))
        .catch(() => undefined);
    }, 15_000);

    log(`measuring ${spec.cycles} cycles, changing ${flipsPerCycle} entities in each`);
    const windowEnd = windowStart + spec.cycles * spec.intervalMs;
    const flipTimes = plan
      .map((_, i) => {
        const cycle = Math.floor(i / flipsPerCycle);
        return windowStart + (cycle + 0.05 + 0.75 * random()) * spec.intervalMs;
      })
      .sort((a, b) => a - b);
    for (const [i, at] of flipTimes.entries()) {
      await delay(Math.max(0, at - Date.now()));
      flips.push(await plan[i]!());
    }
    await delay(Math.max(0, windowEnd - Date.now()));

    const cpu = {
      fleetwatch: sum(pids.fleetwatch.map(cpuMicros)) - cpuBefore.fleetwatch,
      redis: pids.redis.map((pid, i) => cpuMicros(pid) - cpuBefore.redis[i]!),
      simulator: cpuMicros(pids.simulator) - cpuBefore.simulator,
    };
    const threads = splitThreads(
      fleetwatch.first.process.pid,
      threadsBefore,
      threadCpuMicros(fleetwatch.first.process.pid),
      options.pollThread ?? true,
    );
    const polls = (await simulator.requestsServed()) - requestsBefore;
    const normal = await normalBill(spec.cycles);
    const metricsAfter = await fleetwatch.metrics();
    const memory = rss.stop();
    const wakeupSeen = await wakeup.stop();
    clearInterval(scraper);
    const windowMs = Date.now() - windowStart;

    const expected = new Map(flips.map((flip) => [flip.key, flip.flippedAt]));
    const arrivedKeys = (): Set<string> => new Set(sink.arrivals.map((a) => `${a.type} ${a.subject}`));
    await sink.waitUntil(
      () => {
        const arrived = arrivedKeys();
        return [...expected.keys()].every((key) => arrived.has(key));
      },
      // A fleet kept on its cycle polls the last change within one more cycle.
      spec.intervalMs + 10_000,
    );
    const matched = sink.arrivals.filter((a) => expected.has(`${a.type} ${a.subject}`));
    const firstArrival = new Map<string, (typeof matched)[number]>();
    for (const arrival of matched) {
      const key = `${arrival.type} ${arrival.subject}`;
      if (!firstArrival.has(key)) firstArrival.set(key, arrival);
    }
    const arrivals = [...firstArrival.entries()];
    // Kept with the logs: which changes were slow, and where in the cycle they were observed.
    writeFileSync(
      join(workDir, 'arrivals.json'),
      JSON.stringify({
        intervalMs: spec.intervalMs,
        arrivals: arrivals.map(([key, a]) => ({ ...a, changedAt: expected.get(key) })),
        // What fleetwatch said of itself so far (a poller behind its interval, an upstream failing).
        monitor: sink.arrivals.filter((a) => a.type.startsWith('monitor.')),
      }),
    );
    // Read while the size's Redis still runs: a trace that fails leaves the table out, not the size.
    const hops = await traceArrivals(
      redis.urls,
      BENCH_PREFIX,
      BENCH_RECEIVER,
      arrivals.map(([, arrival]) => arrival),
    ).then(
      (traces) => summariseHops(traces, arrivals.length),
      (error: unknown) => {
        log(`could not trace the changes through Redis: ${(error as Error).message}`);
        return undefined;
      },
    );
    const observations = delta(metricsBefore, metricsAfter, 'fleetwatch_poll_observations_total');
    const overruns = delta(metricsBefore, metricsAfter, 'fleetwatch_poll_cycle_overrun_total');
    // The upstream poller runs on every replica and its lease lets one of them judge each window:
    // with N replicas, N - 1 of its runs per tick find the lease held by design. Entity and list
    // polls are what must never find theirs held.
    const leaseHeld =
      delta(metricsBefore, metricsAfter, 'fleetwatch_poll_jobs_total', 'result="lease_held"') -
      delta(
        metricsBefore,
        metricsAfter,
        'fleetwatch_poll_jobs_total',
        'result="lease_held"',
        'poller="upstream"',
      );
    const coalesced = delta(metricsBefore, metricsAfter, 'fleetwatch_poll_shards_coalesced_total');
    const gcSeconds = delta(metricsBefore, metricsAfter, 'fleetwatch_nodejs_gc_duration_seconds_sum');
    const scavenges = delta(
      metricsBefore,
      metricsAfter,
      'fleetwatch_nodejs_gc_duration_seconds_count',
      'kind="minor"',
    );
    const threadGc = 'fleetwatch_poll_thread_gc_duration_seconds';
    const threadGcCounted = sumOf(metricsAfter, `${threadGc}_count`) > 0;
    const threadGcOf = (suffix: string, ...labels: string[]) =>
      delta(metricsBefore, metricsAfter, `${threadGc}${suffix}`, ...labels);
    const events = sumOf(metricsAfter, 'fleetwatch_events_total');

    let outage: OutageResult | undefined;
    if (options.outage) {
      outage = await measureOutage(
        {
          intervalMs: spec.intervalMs,
          cycles: Math.min(2, spec.cycles),
          fleetwatch,
          sink,
          redisUrls: redis.urls,
          pids,
          setFaults: (faults) => simulator.setFaults(faults),
          log,
        },
        normal,
      );
      log(
        `outage: ${Math.round(outage.outage.fleetwatchCpuMs)} ms fleetwatch CPU per cycle (normal ${Math.round(normal.fleetwatchCpuMs)}), ${Math.round(outage.outage.redisWrites)} Redis writes per cycle (normal ${Math.round(normal.redisWrites)})`,
      );
    }

    const hogResult = hog ? await hog.stop() : undefined;
    for (const cleanup of cleanups.splice(0)) await cleanup();
    return {
      spec,
      mode,
      ...(hogResult ? { hog: hogResult } : {}),
      entities,
      windowMs,
      polls,
      pollsPerSecond: polls / (windowMs / 1000),
      observations,
      fleetwatch: {
        cpuMicros: cpu.fleetwatch,
        cpuPerPoll: cpu.fleetwatch / polls,
        cpuPerObservation: cpu.fleetwatch / observations,
        cores: cpu.fleetwatch / 1000 / windowMs,
      },
      redis: {
        cpuMicros: sum(cpu.redis),
        cpuPerPoll: sum(cpu.redis) / polls,
        kind: redis.kind,
        ...(redis.kind === 'cluster'
          ? { masters: cpu.redis.map((micros) => ({ cpuPerPoll: micros / polls })) }
          : {}),
      },
      simulator: { cpuPerPoll: cpu.simulator / polls },
      threads,
      memory: {
        meanRss: memory.meanBytes,
        maxRss: memory.maxBytes,
        maxRssPerThousand: memory.maxBytes / (entities / 1000),
      },
      latency: {
        flips: flips.length,
        delivered: arrivals.length,
        beyondPoll: percentiles(arrivals.map(([, a]) => a.arrivedAt - a.observedAt)),
        changeToWebhook: percentiles(
          arrivals.map(([key, a]) => a.arrivedAt - (expected.get(key) ?? Number.NaN)),
        ),
      },
      cycles: {
        overruns,
        leaseHeld,
        coalesced,
        behind: [
          ...new Set(
            sink.arrivals
              .filter((arrival) => arrival.type === 'monitor.polling.behind')
              .map((arrival) => arrival.subject.slice(arrival.subject.indexOf('/') + 1)),
          ),
        ].sort(),
        withinInterval: overruns === 0 && leaseHeld === 0 && coalesced === 0,
      },
      ...(replicas > 1 ? { replicas } : {}),
      pollThread: options.pollThread ?? true,
      settle,
      gc: {
        microsPerPoll: (gcSeconds * 1e6) / polls,
        scavengesPerThousandPolls: (scavenges * 1000) / polls,
        ...(threadGcCounted
          ? {
              pollThread: {
                microsPerPoll: (threadGcOf('_sum') * 1e6) / polls,
                scavengesPerThousandPolls: (threadGcOf('_count', 'kind="minor"') * 1000) / polls,
                majorPerThousandPolls: (threadGcOf('_count', 'kind="major"') * 1000) / polls,
              },
            }
          : {}),
      },
      scrapes: {
        count: scrapes.length,
        maxAgeMs: Math.max(0, ...scrapes.map((s) => s.ageMs)),
        medianAgeMs: median(scrapes.map((s) => s.ageMs)),
        maxReadMs: Math.max(0, ...scrapes.map((s) => s.readMs)),
        // The last stretch of the window is in the final reading (one process: not a sum).
        maxLoopStallMs: Math.max(
          0,
          ...scrapes.map((s) => s.loopStallMs),
          replicas === 1 ? loopStallMs(metricsAfter) : 0,
        ),
        misses: delta(
          metricsBefore,
          metricsAfter,
          'fleetwatch_metrics_collect_errors_total',
          'source="fleet"',
        ),
      },
      ...(hops ? { hops } : {}),
      ...(wakeupSeen
        ? {
            wakeup: {
              timerLate: percentiles(wakeupSeen.timerLate),
              redisRoundTrip: percentiles(wakeupSeen.redisRoundTrip),
            },
          }
        : {}),
      events,
      deliveries: sink.deliveries,
      undici,
      undiciPaced,
      ...(blackbox ? { blackbox } : {}),
      ...(outage ? { outage } : {}),
      fleetwatchExit,
    };
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}
