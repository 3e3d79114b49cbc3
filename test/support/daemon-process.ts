import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'vitest';
import { stringify } from 'yaml';
import type { PollerName } from '../../src/config/schema.js';
import { POLLER_NAMES } from '../../src/pollers/registry.js';

/**
 * `fleetwatch run` as a child process, the way an operator starts it: its own Node process, a
 * config file, SIGTERM to stop, SIGKILL to crash. Output (stdout and stderr) is kept per process
 * so a failing test can print what the daemons said.
 */

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The pollers `daemonConfig` runs at `interval`: all but `upstream`, which keeps its own interval. */
export const FLEET_POLLERS: readonly PollerName[] = POLLER_NAMES.filter((name) => name !== 'upstream');

export interface PollerSettings {
  enabled?: boolean;
  interval?: string;
  batch_size?: number;
}

export interface DaemonConfigOptions {
  /** Simulator URL: base_url, robot_base_url and auth_url at once. */
  upstreamUrl: string;
  redisUrl: string;
  /** A Redis Cluster's seed nodes: `redis.cluster.nodes` in place of `redis.url`. */
  redisCluster?: readonly string[];
  prefix: string;
  installation?: string;
  /** Interval of every poller (default `1s`). */
  interval?: string;
  /** Batch size of every batched poller (default 10). */
  batchSize?: number;
  /** Per-poller overrides. */
  pollers?: Partial<Record<PollerName, PollerSettings>>;
  concurrency?: number;
  /** `worker.shutdown_grace` (default `5s`). */
  shutdownGrace?: string;
  logLevel?: 'trace' | 'debug' | 'info' | 'warn' | 'error';
  /**
   * Merged over the generated document at the top level (one level deep per section); a list (such
   * as `receivers`) replaces the section.
   */
  extra?: Record<string, Record<string, unknown> | readonly unknown[]>;
}

/** The config document the tests run daemons with: 1 s intervals, thresholds of 1, JSON logs. */
export function daemonConfig(options: DaemonConfigOptions): Record<string, unknown> {
  const interval = options.interval ?? '1s';
  const batchSize = options.batchSize ?? 10;
  const pollers: Record<string, PollerSettings> = {};
  for (const name of FLEET_POLLERS) {
    const batched = name !== 'vehicles' && name !== 'robots';
    pollers[name] = {
      enabled: true,
      interval,
      ...(batched ? { batch_size: batchSize } : {}),
      ...options.pollers?.[name],
    };
  }
  const document: Record<string, Record<string, unknown> | readonly unknown[] | string> = {
    installation: options.installation ?? 'itest',
    upstream: {
      base_url: options.upstreamUrl,
      robot_base_url: options.upstreamUrl,
      auth_url: options.upstreamUrl,
      client_id: 'fleetwatch-demo',
      client_secret: 'demo-secret',
      http: { request_timeout: '2s', retry_base_delay: '10ms', retry_max_delay: '100ms' },
    },
    redis: options.redisCluster
      ? { cluster: { nodes: [...options.redisCluster] }, prefix: options.prefix }
      : { url: options.redisUrl, prefix: options.prefix },
    pollers,
    worker: { concurrency: options.concurrency ?? 8, shutdown_grace: options.shutdownGrace ?? '5s' },
    detectors: {
      vpn: { failure_threshold: 1, success_threshold: 1 },
      reachability: { failure_threshold: 1, success_threshold: 1 },
      health: { failure_threshold: 1, success_threshold: 1 },
    },
    log: { level: options.logLevel ?? 'warn', format: 'json' },
    // A free port each: replicas on one host never compete for 9464.
    http: { port: 0 },
  };
  for (const [section, values] of Object.entries(options.extra ?? {})) {
    const current = document[section];
    document[section] =
      typeof current === 'object' && !Array.isArray(current) && !Array.isArray(values)
        ? { ...current, ...values }
        : values;
  }
  return document;
}

/**
 * `extra` sections that send every event to one webhook receiver, `ops`, at `url`: one group per
 * incident, sent at once, at most one message a second per group, reminders every `repeat`.
 */
export function webhookNotifications(
  url: string,
  secret: string,
  repeat: string,
): Record<string, Record<string, unknown> | readonly unknown[]> {
  return {
    receivers: [{ kind: 'webhook', name: 'ops', url, secrets: [secret] }],
    notifications: {
      route: {
        receiver: 'ops',
        group_by: ['...'],
        group_wait: '0s',
        group_interval: '1s',
        repeat_interval: repeat,
        send_resolved: true,
      },
    },
  };
}

const configDirs: string[] = [];

/** Writes `daemonConfig(options)` to a fresh temporary file; `removeConfigFiles` deletes them. */
export function writeDaemonConfig(options: DaemonConfigOptions): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleetwatch-itest-'));
  configDirs.push(dir);
  const file = join(dir, 'fleetwatch.yaml');
  writeFileSync(file, stringify(daemonConfig(options)));
  return file;
}

export function removeConfigFiles(): void {
  for (const dir of configDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * What `promise` resolves to, or `'late'` once `ms` have passed: a wait with a bound, so that a test
 * can say what did not happen instead of running into its own time-out.
 */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

export interface DaemonExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Epoch ms. */
  at: number;
}

const MAX_KEPT_LINES = 4_000;
const RUNNING = /"msg":"fleetwatch running"/;

export class DaemonProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly startedAt = Date.now();
  /** Resolves when the process has exited (never rejects). */
  readonly exited: Promise<DaemonExit>;
  /**
   * Resolves once it has logged `fleetwatch running` (an info line: `logLevel: 'info'` or lower).
   * Until then it may still be loading, before its SIGTERM handler is in place.
   */
  readonly whenRunning: Promise<void>;
  #markRunning: () => void = () => {};
  #isRunning = false;
  #exit: DaemonExit | undefined;
  #lines: string[] = [];
  #dropped = 0;
  #expectExit = false;

  constructor(name: string, configFile: string, env: NodeJS.ProcessEnv = {}) {
    this.name = name;
    this.whenRunning = new Promise((resolve) => {
      this.#markRunning = resolve;
    });
    const childEnv: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...env };
    delete childEnv.FLEETWATCH_CONFIG;
    this.child = spawn(process.execPath, ['bin/fleetwatch.js', 'run', '--config', configFile], {
      cwd: REPO_ROOT,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.setEncoding('utf8');
    this.child.stderr?.setEncoding('utf8');
    this.#capture(this.child.stdout, 'out');
    this.#capture(this.child.stderr, 'err');
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.#exit = { code, signal, at: Date.now() };
        this.#record(
          'exit',
          `exited code=${code} signal=${signal}${this.#expectExit ? '' : ' (UNEXPECTED)'}`,
        );
        resolve(this.#exit);
      });
      this.child.once('error', (error) => {
        this.#record('err', `spawn failed: ${error.message}`);
        this.#exit ??= { code: null, signal: null, at: Date.now() };
        resolve(this.#exit);
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return this.#exit === undefined;
  }

  get exit(): DaemonExit | undefined {
    return this.#exit;
  }

  /** True when the process exited without the test asking it to. */
  get exitedUnexpectedly(): boolean {
    return this.#exit !== undefined && !this.#expectExit;
  }

  /** Everything the process wrote, one line per entry (`[name out|err] text`), oldest first. */
  output(lastLines = MAX_KEPT_LINES): string {
    const head = this.#dropped > 0 ? [`[${this.name}] ... ${this.#dropped} earlier lines dropped`] : [];
    return [...head, ...this.#lines.slice(-lastLines)].join('\n');
  }

  /** Lines of stderr/stdout that contain `text`. */
  linesMatching(pattern: RegExp): string[] {
    return this.#lines.filter((line) => pattern.test(line));
  }

  /** Whether it has logged `fleetwatch running` (see `whenRunning`). */
  get isRunning(): boolean {
    return this.#isRunning;
  }

  /** SIGTERM, then waits for the exit; SIGKILLs and rejects when it takes longer than `timeoutMs`. */
  async stop(timeoutMs = 15_000): Promise<DaemonExit> {
    if (this.#exit) return this.#exit;
    this.#expectExit = true;
    this.child.kill('SIGTERM');
    const outcome = await within(this.exited, timeoutMs);
    if (outcome === 'late') {
      this.child.kill('SIGKILL');
      await this.exited;
      throw new Error(`${this.name} did not exit within ${timeoutMs} ms of SIGTERM (SIGKILLed)`);
    }
    return outcome;
  }

  /** SIGKILL (a crash at whatever instruction it is running), then waits for the exit. */
  async kill(): Promise<DaemonExit> {
    if (this.#exit) return this.#exit;
    this.#expectExit = true;
    this.child.kill('SIGKILL');
    return this.exited;
  }

  #capture(stream: NodeJS.ReadableStream | null, tag: string): void {
    if (!stream) return;
    let partial = '';
    stream.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) if (line.trim() !== '') this.#record(tag, line);
    });
    stream.on('end', () => {
      if (partial.trim() !== '') this.#record(tag, partial);
      partial = '';
    });
  }

  #record(tag: string, line: string): void {
    if (!this.#isRunning && RUNNING.test(line)) {
      this.#isRunning = true;
      this.#markRunning();
    }
    const elapsed = ((Date.now() - this.startedAt) / 1000).toFixed(1).padStart(6);
    this.#lines.push(`[${this.name} +${elapsed}s ${tag}] ${line}`);
    if (this.#lines.length > MAX_KEPT_LINES) {
      this.#lines.shift();
      this.#dropped += 1;
    }
  }
}

/** Starts `fleetwatch run --config <file>` as a child process. */
export function startDaemon(configFile: string, name = 'daemon', env: NodeJS.ProcessEnv = {}): DaemonProcess {
  return new DaemonProcess(name, configFile, env);
}

/**
 * A set of replicas on one config: start, SIGKILL, replace, stop. Keeps every process it ever
 * started (dead ones too) so their output can be printed when a test fails.
 */
export class ReplicaSet {
  readonly #configFile: string;
  readonly #env: NodeJS.ProcessEnv;
  readonly all: DaemonProcess[] = [];
  #next = 1;

  constructor(configFile: string, env: NodeJS.ProcessEnv = {}) {
    this.#configFile = configFile;
    this.#env = env;
  }

  start(count = 1): DaemonProcess[] {
    const started: DaemonProcess[] = [];
    for (let i = 0; i < count; i++) {
      const daemon = startDaemon(this.#configFile, `replica-${this.#next++}`, this.#env);
      this.all.push(daemon);
      started.push(daemon);
    }
    return started;
  }

  /** The replicas still running. */
  get running(): DaemonProcess[] {
    return this.all.filter((daemon) => daemon.alive);
  }

  /** Replicas that died without being stopped or killed by the test. */
  get crashed(): DaemonProcess[] {
    return this.all.filter((daemon) => daemon.exitedUnexpectedly);
  }

  /** SIGKILLs one running replica chosen with `random` and starts a replacement. */
  async killOneAndReplace(
    random: () => number = Math.random,
  ): Promise<{ killed: DaemonProcess; started: DaemonProcess }> {
    const running = this.running;
    if (running.length === 0) throw new Error('no replica is running');
    const killed = running[Math.floor(random() * running.length)]!;
    return { killed, started: await this.replace(killed) };
  }

  /** SIGKILLs `daemon` (one of this set's) and starts a replacement. */
  async replace(daemon: DaemonProcess): Promise<DaemonProcess> {
    await daemon.kill();
    const [started] = this.start(1);
    return started!;
  }

  /**
   * Resolves once every running replica has logged `fleetwatch running` (or exited); rejects
   * naming the ones still loading after `timeoutMs`. Needs `logLevel: 'info'` or lower.
   */
  async waitUntilRunning(timeoutMs = 20_000): Promise<void> {
    const replicas = this.running;
    const settled = Promise.all(replicas.map((daemon) => Promise.race([daemon.whenRunning, daemon.exited])));
    if ((await within(settled, timeoutMs)) === 'late') {
      const loading = replicas.filter((daemon) => daemon.alive && !daemon.isRunning).map((d) => d.name);
      throw new Error(`no "fleetwatch running" logged within ${timeoutMs} ms: ${loading.join(', ')}`);
    }
  }

  /** SIGTERMs every running replica at once and waits; returns the exits in start order. */
  stopAll(timeoutMs = 15_000): Promise<DaemonExit[]> {
    return Promise.all(this.running.map((daemon) => daemon.stop(timeoutMs)));
  }

  /** SIGKILLs whatever still runs (cleanup; never throws). */
  async killAll(): Promise<void> {
    await Promise.all(this.running.map((daemon) => daemon.kill()));
  }

  /** Output of every process, the last `lastLines` lines each. */
  output(lastLines = 150): string {
    return this.all.map((daemon) => daemon.output(lastLines)).join('\n');
  }
}

/**
 * Prints `describe()` (daemon output and the like) when the test fails, or always when
 * FLEETWATCH_ITEST_VERBOSE is set.
 */
export function printOnFailure(
  context: Pick<TestContext, 'onTestFailed' | 'onTestFinished'>,
  describe: () => string | Promise<string>,
): void {
  const print = async () => {
    console.error(await describe());
  };
  if (process.env.FLEETWATCH_ITEST_VERBOSE) context.onTestFinished(print);
  else context.onTestFailed(print);
}
