import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { request } from 'undici';
import { stringify } from 'yaml';
import { POLLER_NAMES } from '../src/pollers/registry.js';
import { freePort } from '../test/support/private-redis.js';
import { BenchProcess } from './child.js';
import { CLIENT_ID, CLIENT_SECRET } from './simulator.js';

/**
 * `fleetwatch run` as the benchmark runs it: every poller on one cycle interval, a webhook
 * receiver that gets every event at once (no group wait), JSON logs at `warn`, and the metrics the
 * benchmark reads.
 */

export const BENCH_PREFIX = 'fwbench';
/** The one receiver of the benchmark's config: the loopback webhook receiver. */
export const BENCH_RECEIVER = 'bench-sink';

export interface FleetwatchOptions {
  root: string;
  workDir: string;
  simulatorUrl: string;
  /** fleetwatch's `redis:` section without the prefix: `{url}` or `{cluster: {nodes}}` (bench/redis.ts). */
  redis: Record<string, unknown>;
  sinkUrl: string;
  intervalMs: number;
  /** Write a V8 CPU profile of fleetwatch into this folder when it exits. */
  profileDir?: string;
  /** A token for the API and the console (`http.api_token`); none by default. */
  apiToken?: string;
  /** Whole top-level sections that replace the benchmark's own (the console's run: a token, fewer pollers). */
  overrides?: Record<string, unknown>;
  /** The whole config instead of the benchmark's (the idle run: fleetwatch's defaults), given the HTTP port. */
  config?: (httpPort: number) => Record<string, unknown>;
  /** Extra arguments for node before the script (V8 flags). */
  nodeArgs?: string[];
  /** `worker.poll_thread`; true by default (`--no-poll-thread` measures without it). */
  pollThread?: boolean;
  /** Names its config and log files (`<name>.yaml`, `<name>.log`); `fleetwatch` by default. */
  name?: string;
}

export function benchConfig(options: FleetwatchOptions & { httpPort: number }): Record<string, unknown> {
  const interval = `${options.intervalMs}ms`;
  return {
    installation: 'bench',
    upstream: {
      base_url: options.simulatorUrl,
      robot_base_url: options.simulatorUrl,
      auth_url: options.simulatorUrl,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    },
    redis: { ...options.redis, prefix: BENCH_PREFIX },
    log: { level: 'warn', format: 'json' },
    // Polls on a thread of their own, as a large installation should run (README, Scaling).
    worker: { poll_thread: options.pollThread ?? true },
    // Every poller, named by the registry: one left to its default interval (the command queue's
    // 30 s, until this was derived) would make more polls than the cycle says.
    pollers: Object.fromEntries(POLLER_NAMES.map((name) => [name, { interval }])),
    // The seeded fleet has power reports up to an hour old; at the default threshold most vehicles
    // would open a stale-report incident in the baseline cycle and bury the measured changes
    // behind thousands of deliveries to the one receiver.
    detectors: { power: { stale_after: '24h' } },
    http: {
      host: '127.0.0.1',
      port: options.httpPort,
      ...(options.apiToken ? { api_token: options.apiToken } : {}),
    },
    metrics: { per_entity: false },
    receivers: [
      {
        name: BENCH_RECEIVER,
        kind: 'webhook',
        url: options.sinkUrl,
        secrets: [`whsec_${randomBytes(24).toString('base64')}`],
      },
    ],
    // Every measured change opens a group of its own, sent at once (`group_wait: 0s`), so
    // `group_interval` never delays one; it stays at its default, as an installation runs it. At 1 s
    // (300 times the default) the seeded fleet's inhibited incidents were each looked at again every
    // second, a load no installation at defaults carries (BENCHMARKS.md, *What bounds the numbers*).
    notifications: {
      route: { receiver: BENCH_RECEIVER, group_by: ['...'], group_wait: '0s' },
    },
  };
}

/** Prometheus text exposition as `name{labels}` → value (HELP/TYPE lines dropped). */
export type Samples = Map<string, number>;

export function parseExposition(text: string): Samples {
  const samples: Samples = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const split = line.lastIndexOf(' ');
    samples.set(line.slice(0, split), Number(line.slice(split + 1)));
  }
  return samples;
}

/** The sum of every sample of `name` whose labels contain all of `labels` (`key="value"` parts). */
export function sumOf(samples: Samples, name: string, ...labels: string[]): number {
  let total = 0;
  for (const [key, value] of samples) {
    const brace = key.indexOf('{');
    const metric = brace < 0 ? key : key.slice(0, brace);
    if (metric !== name) continue;
    if (labels.every((label) => key.includes(label))) total += value;
  }
  return total;
}

/**
 * The environment the container image gives `fleetwatch run` beyond its config (the Dockerfile's
 * `ENV`; test/deploy/containers.test.ts holds the two together): fleetwatch is measured as it runs
 * there. glibc's malloc thresholds, fixed, and the daemon thread's young generation: see the
 * Dockerfile.
 */
export const IMAGE_ENV: Readonly<Record<string, string>> = {
  MALLOC_TRIM_THRESHOLD_: '131072',
  MALLOC_MMAP_THRESHOLD_: '131072',
  NODE_OPTIONS: '--max-semi-space-size=2',
};

export class FleetwatchProcess {
  readonly process: BenchProcess;
  readonly #base: string;

  private constructor(process: BenchProcess, base: string) {
    this.process = process;
    this.#base = base;
  }

  /** `http://127.0.0.1:<port>`: the API and the console. */
  get address(): string {
    return this.#base;
  }

  static async start(options: FleetwatchOptions): Promise<FleetwatchProcess> {
    const httpPort = await freePort();
    const name = options.name ?? 'fleetwatch';
    const configFile = join(options.workDir, `${name}.yaml`);
    const config = options.config
      ? options.config(httpPort)
      : { ...benchConfig({ ...options, httpPort }), ...options.overrides };
    writeFileSync(configFile, stringify(config));
    const profile = options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : [];
    const child = new BenchProcess(
      name,
      process.execPath,
      [...(options.nodeArgs ?? []), ...profile, join(options.root, 'bin/fleetwatch.js'), 'run'],
      {
        env: { ...process.env, ...IMAGE_ENV, FLEETWATCH_CONFIG: configFile },
        logFile: join(options.workDir, `${name}.log`),
      },
    );
    const fleetwatch = new FleetwatchProcess(child, `http://127.0.0.1:${httpPort}`);
    const deadline = Date.now() + 30_000;
    while (!(await fleetwatch.#ready())) {
      if (!child.running || Date.now() > deadline) {
        await child.stop();
        throw new Error(`fleetwatch did not become ready (see ${child.logFile})`);
      }
      await delay(200);
    }
    return fleetwatch;
  }

  async #ready(): Promise<boolean> {
    try {
      const res = await request(`${this.#base}/readyz`);
      await res.body.dump();
      return res.statusCode === 200;
    } catch {
      return false;
    }
  }

  async metrics(): Promise<Samples> {
    const res = await request(`${this.#base}/metrics`);
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`GET /metrics answered ${res.statusCode}`);
    return parseExposition(text);
  }

  stop(): Promise<void> {
    return this.process.stop('SIGTERM', 30_000);
  }
}

/**
 * Replicas of `fleetwatch run` against one Redis, as an operator scales past one core: each its
 * own process, port, config and log file (`fleetwatch.yaml`, `fleetwatch-2.yaml`, ...). What the
 * benchmark reads of them is the sum of their metrics; the first replica is the one whose memory
 * and scrape view are reported.
 */
export class FleetwatchReplicas {
  readonly replicas: readonly FleetwatchProcess[];

  private constructor(replicas: readonly FleetwatchProcess[]) {
    this.replicas = replicas;
  }

  static async start(options: FleetwatchOptions, count: number): Promise<FleetwatchReplicas> {
    const replicas: FleetwatchProcess[] = [];
    try {
      for (let n = 1; n <= count; n += 1) {
        replicas.push(
          await FleetwatchProcess.start({ ...options, ...(n > 1 ? { name: `fleetwatch-${n}` } : {}) }),
        );
      }
    } catch (error) {
      await Promise.all(replicas.map((replica) => replica.stop()));
      throw error;
    }
    return new FleetwatchReplicas(replicas);
  }

  get first(): FleetwatchProcess {
    return this.replicas[0]!;
  }

  get pids(): number[] {
    return this.replicas.map((replica) => replica.process.pid);
  }

  /** Whether every replica still runs; the log of one that does not, for the error. */
  get exited(): string | undefined {
    return this.replicas.find((replica) => !replica.process.running)?.process.logFile;
  }

  /** Every replica's metrics, summed sample by sample (counters add up; read gauges per replica). */
  async metrics(): Promise<Samples> {
    const all = await Promise.all(this.replicas.map((replica) => replica.metrics()));
    if (all.length === 1) return all[0]!;
    const merged: Samples = new Map();
    for (const samples of all) {
      for (const [key, value] of samples) merged.set(key, (merged.get(key) ?? 0) + value);
    }
    return merged;
  }

  /** A scrape of every replica, as Prometheus makes; resolves to the first replica's samples. */
  async scrape(): Promise<Samples> {
    const all = await Promise.all(this.replicas.map((replica) => replica.metrics()));
    return all[0]!;
  }

  async stop(): Promise<void> {
    await Promise.all(this.replicas.map((replica) => replica.stop()));
  }
}
