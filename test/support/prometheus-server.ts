import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { within } from './daemon-process.js';
import { freePort } from './private-redis.js';

/**
 * A real Prometheus (Debian's `prometheus`) of a test's own: a temporary config scraping the given
 * targets every second, evaluating the given rule files, a temporary TSDB, and the HTTP API on a free
 * loopback port. `stop` ends it (SIGTERM, then SIGKILL) and deletes its files. Its output is kept for
 * a failing test to print.
 */

export interface PrometheusOptions {
  /** The path of the `prometheus` binary. */
  binary: string;
  /** `host:port` of each target of the job. */
  targets: readonly string[];
  job: string;
  /** Absolute paths of rule files to load. */
  ruleFiles?: readonly string[];
}

/** What the HTTP API answers for a query: a vector (instant) or a matrix (range). */
export interface QueryResult {
  resultType: 'vector' | 'matrix' | 'scalar' | 'string';
  result: Array<{ metric: Record<string, string>; value?: [number, string]; values?: [number, string][] }>;
}

const READY_MS = 20_000;
const MAX_LINES = 500;

export class PrometheusServer {
  readonly url: string;
  readonly #child: ChildProcess;
  readonly #dir: string;
  readonly #exited: Promise<void>;
  readonly #lines: string[] = [];

  private constructor(child: ChildProcess, url: string, dir: string) {
    this.#child = child;
    this.url = url;
    this.#dir = dir;
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        this.#lines.push(...chunk.split('\n').filter((line) => line.trim() !== ''));
        this.#lines.splice(0, Math.max(0, this.#lines.length - MAX_LINES));
      });
    }
  }

  static async start(options: PrometheusOptions): Promise<PrometheusServer> {
    const dir = mkdtempSync(join(tmpdir(), 'fleetwatch-prometheus-'));
    const config = {
      global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
      rule_files: [...(options.ruleFiles ?? [])],
      scrape_configs: [
        {
          job_name: options.job,
          metrics_path: '/metrics',
          static_configs: [{ targets: [...options.targets] }],
        },
      ],
    };
    const configFile = join(dir, 'prometheus.yml');
    writeFileSync(configFile, stringify(config));
    const port = await freePort();
    const child = spawn(
      options.binary,
      [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const server = new PrometheusServer(child, `http://127.0.0.1:${port}`, dir);
    if (!(await server.#untilReady(Date.now() + READY_MS))) {
      await server.stop();
      throw new Error(`Prometheus did not get ready within ${READY_MS} ms:\n${server.output()}`);
    }
    return server;
  }

  /** Whether `/-/ready` answered 200 before `deadline` (false at once when the process ended). */
  async #untilReady(deadline: number): Promise<boolean> {
    while (Date.now() < deadline && this.#child.exitCode === null && this.#child.signalCode === null) {
      try {
        const response = await fetch(`${this.url}/-/ready`, { signal: AbortSignal.timeout(1_000) });
        if (response.ok) return true;
      } catch {
        // Not listening yet.
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return false;
  }

  /** GET `/api/v1/<path>`; throws with Prometheus' own error when it answers one. */
  async api<T>(path: string, params: Record<string, string | string[]> = {}): Promise<T> {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      for (const each of Array.isArray(value) ? value : [value]) search.append(key, each);
    }
    const response = await fetch(`${this.url}/api/v1/${path}?${search}`, {
      signal: AbortSignal.timeout(5_000),
    });
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`${path} ${search}: ${body.error ?? response.status}`);
    return body.data;
  }

  /** An instant query at `time` (epoch seconds; now when omitted). */
  query(expr: string, time?: number): Promise<QueryResult> {
    return this.api<QueryResult>('query', {
      query: expr,
      ...(time === undefined ? {} : { time: String(time) }),
    });
  }

  /** A range query from `start` to `end` (epoch seconds) every `step` seconds. */
  queryRange(expr: string, start: number, end: number, step: number): Promise<QueryResult> {
    return this.api<QueryResult>('query_range', {
      query: expr,
      start: String(start),
      end: String(end),
      step: String(step),
    });
  }

  /** Values of a label among the series `match` selects (what Grafana's `label_values` asks). */
  labelValues(label: string, match: string): Promise<string[]> {
    return this.api<string[]>(`label/${encodeURIComponent(label)}/values`, { 'match[]': match });
  }

  output(): string {
    return this.#lines.map((line) => `[prometheus] ${line}`).join('\n');
  }

  async stop(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      this.#child.kill('SIGTERM');
      if ((await within(this.#exited, 10_000)) === 'late') {
        this.#child.kill('SIGKILL');
        await this.#exited;
      }
    }
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
