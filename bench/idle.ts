import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { FleetwatchProcess, type Samples, sumOf } from './fleetwatch.js';
import { startSink } from './measure.js';
import { memoryOf } from './proc.js';
import { startBenchRedis } from './redis.js';
import { CLIENT_ID, CLIENT_SECRET, SimulatorProcess } from './simulator.js';

/**
 * The idle measurement: `fleetwatch run` with its default settings (every poller at its default
 * interval, the queue UI on, logs at info) against a 60-entity simulator fleet and one webhook
 * receiver, as a small installation runs it. Once every entity has been polled it is left to
 * settle, scraped every 15 s as Prometheus would, and its RSS is sampled every second.
 */

export const IDLE_FLEET = { vehicles: 30, robots: 30 } as const;
/** After the baseline: two cycles of the 30 s pollers (robots' lease and list: one of 60 s). */
export const IDLE_SETTLE_MS = 60_000;
/** The first tick of the 30 s pollers comes within 30 s of the start; twice that is the bound. */
const BASELINE_TIMEOUT_MS = 90_000;

export interface IdleResult {
  entities: number;
  settleMs: number;
  /** RSS samples (bytes) over the settle window, one a second. */
  rss: { first: number; last: number; mean: number; median: number; max: number };
  /** V8's heap at the end of the window (prom-client's `nodejs_heap_size_*`). */
  heap: { used: number; total: number };
  fleetwatchExit: string;
}

function idleConfig(urls: { simulator: string; redis: string; sink: string }, httpPort: number) {
  return {
    installation: 'idle',
    upstream: {
      base_url: urls.simulator,
      robot_base_url: urls.simulator,
      auth_url: urls.simulator,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    },
    redis: { url: urls.redis, prefix: 'fwidle' },
    log: { format: 'json' },
    http: { host: '127.0.0.1', port: httpPort },
    receivers: [
      {
        name: 'idle-sink',
        kind: 'webhook',
        url: urls.sink,
        secrets: [`whsec_${randomBytes(24).toString('base64')}`],
      },
    ],
    notifications: { route: { receiver: 'idle-sink' } },
  };
}

type Log = (message: string) => void;

export async function measureIdle(
  root: string,
  log: Log,
  options: { nodeArgs?: string[] } = {},
): Promise<IdleResult> {
  const workDir = mkdtempSync(join(tmpdir(), 'fleetwatch-bench-idle-'));
  const entities = IDLE_FLEET.vehicles + IDLE_FLEET.robots;
  const redis = await startBenchRedis('single');
  const cleanups: Array<() => Promise<void>> = [() => redis.stop()];
  try {
    const simulator = await SimulatorProcess.start(root, IDLE_FLEET, workDir);
    cleanups.unshift(() => simulator.stop());
    const { sink, stop: stopSink } = await startSink();
    cleanups.unshift(stopSink);
    const fleetwatch = await FleetwatchProcess.start({
      root,
      workDir,
      simulatorUrl: simulator.url,
      redis: redis.section,
      sinkUrl: sink.url,
      intervalMs: 30_000,
      ...(options.nodeArgs ? { nodeArgs: options.nodeArgs } : {}),
      config: (httpPort) =>
        idleConfig({ simulator: simulator.url, redis: redis.urls[0]!, sink: sink.url }, httpPort),
    });
    let fleetwatchExit = 'still running';
    cleanups.unshift(async () => {
      await fleetwatch.stop();
      const exit = fleetwatch.process.exit;
      fleetwatchExit = exit ? (exit.signal ? `signal ${exit.signal}` : `exit ${exit.code}`) : 'unknown';
    });
    log(
      `${entities} entities at ${simulator.url}; waiting until fleetwatch has polled each; logs in ${workDir}`,
    );
    const polled = (samples: Samples): boolean =>
      sumOf(samples, 'fleetwatch_poll_observations_total', 'poller="power"') >= IDLE_FLEET.vehicles &&
      sumOf(samples, 'fleetwatch_poll_observations_total', 'poller="robot_health"') >= IDLE_FLEET.robots;
    const deadline = Date.now() + BASELINE_TIMEOUT_MS;
    while (!polled(await fleetwatch.metrics())) {
      if (!fleetwatch.process.running)
        throw new Error(`fleetwatch exited (see ${fleetwatch.process.logFile})`);
      if (Date.now() > deadline)
        throw new Error(
          `fleetwatch did not poll the ${entities} entities within ${BASELINE_TIMEOUT_MS / 1000} s`,
        );
      await delay(500);
    }

    log(`settling for ${IDLE_SETTLE_MS / 1000} s, RSS sampled every second`);
    const pid = fleetwatch.process.pid;
    const samples: number[] = [];
    const end = Date.now() + IDLE_SETTLE_MS;
    let nextScrape = Date.now() + 15_000;
    while (Date.now() < end) {
      samples.push(memoryOf(pid).rss);
      if (Date.now() >= nextScrape) {
        nextScrape += 15_000;
        await fleetwatch.metrics().catch(() => undefined);
      }
      await delay(1_000);
    }
    samples.push(memoryOf(pid).rss);
    const metrics = await fleetwatch.metrics();
    const heap = {
      used: sumOf(metrics, 'fleetwatch_nodejs_heap_size_used_bytes'),
      total: sumOf(metrics, 'fleetwatch_nodejs_heap_size_total_bytes'),
    };
    for (const cleanup of cleanups.splice(0)) await cleanup();
    return {
      entities,
      settleMs: IDLE_SETTLE_MS,
      rss: {
        first: samples[0] ?? 0,
        last: samples.at(-1) ?? 0,
        mean: samples.reduce((a, b) => a + b, 0) / samples.length,
        median: [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)] ?? 0,
        max: Math.max(...samples),
      },
      heap,
      fleetwatchExit,
    };
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}
