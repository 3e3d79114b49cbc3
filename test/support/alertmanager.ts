import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually } from './redis.js';

/**
 * The real Alertmanager (Debian's `prometheus-alertmanager`, with `amtool`), started per test on
 * an ephemeral loopback port (`--web.listen-address=127.0.0.1:0`; the port is read from its
 * "Listening on" line), without clustering, with a storage directory and a config of its own (one
 * `null` receiver), and stopped by pid. Where the binaries are missing, `alertmanagerMissing`
 * says why, so a test can skip and say so.
 */

const run = promisify(execFile);

function which(name: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const path = found.stdout.trim();
  return found.status === 0 && path ? path : undefined;
}

export const ALERTMANAGER_BIN = which('prometheus-alertmanager') ?? which('alertmanager');
export const AMTOOL_BIN = which('amtool');

/** Why the real Alertmanager cannot be run here, or undefined when it can. */
export function alertmanagerMissing(): string | undefined {
  if (!ALERTMANAGER_BIN) {
    return 'Alertmanager is not installed (apt-get install prometheus-alertmanager: /usr/bin/prometheus-alertmanager)';
  }
  if (!AMTOOL_BIN) return 'amtool is not installed (it comes with the prometheus-alertmanager package)';
  return undefined;
}

/** An alert as `GET /api/v2/alerts` shows it. */
export interface GettableAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  updatedAt: string;
  generatorURL?: string;
  fingerprint: string;
  status: { state: 'active' | 'suppressed' | 'unprocessed'; silencedBy: string[]; inhibitedBy: string[] };
}

export interface AlertmanagerOptions {
  /** `global.resolve_timeout`: how long an alert pushed without `endsAt` lives (default 1s). */
  resolveTimeout?: string;
  /** `127.0.0.1:<port>`: to start one again where a stopped one listened (a restart); else port 0. */
  listenAddress?: string;
}

export class AlertmanagerProcess {
  readonly url: string;
  readonly #child: ChildProcess;
  readonly #dir: string;
  readonly #output: string[];

  private constructor(url: string, child: ChildProcess, dir: string, output: string[]) {
    this.url = url;
    this.#child = child;
    this.#dir = dir;
    this.#output = output;
  }

  static async start(options: AlertmanagerOptions = {}): Promise<AlertmanagerProcess> {
    if (!ALERTMANAGER_BIN) throw new Error(alertmanagerMissing());
    const dir = await mkdtemp(join(tmpdir(), 'fleetwatch-am-'));
    const config = join(dir, 'alertmanager.yml');
    await writeFile(
      config,
      [
        'global:',
        `  resolve_timeout: ${options.resolveTimeout ?? '1s'}`,
        'route:',
        "  receiver: 'null'",
        'receivers:',
        "  - name: 'null'",
        '',
      ].join('\n'),
    );
    const child = spawn(
      ALERTMANAGER_BIN,
      [
        `--web.listen-address=${options.listenAddress ?? '127.0.0.1:0'}`,
        '--cluster.listen-address=',
        `--storage.path=${join(dir, 'data')}`,
        `--config.file=${config}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const output: string[] = [];
    const address = new Promise<string>((resolve, reject) => {
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => {
        output.push(chunk);
        const match = /msg="Listening on" address=(127\.0\.0\.1:\d+)/.exec(output.join(''));
        if (match?.[1]) resolve(match[1]);
      });
      child.once('exit', (code) => reject(new Error(`Alertmanager exited (${code}): ${output.join('')}`)));
      child.once('error', reject);
    });
    let url: string;
    try {
      url = `http://${await withTimeout(address, 15_000, 'Alertmanager did not say where it listens')}`;
      await eventually(
        () =>
          fetch(`${url}/-/ready`).then(
            (answer) => answer.status,
            () => 0,
          ),
        (status) => status === 200,
        { timeoutMs: 15_000, intervalMs: 50 },
      );
    } catch (error) {
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
    return new AlertmanagerProcess(url, child, dir, output);
  }

  /** `GET /api/v2/alerts`: active, silenced and inhibited alerts (resolved ones are not listed). */
  async alerts(): Promise<GettableAlert[]> {
    const answer = await fetch(`${this.url}/api/v2/alerts`);
    if (!answer.ok) throw new Error(`GET /api/v2/alerts: HTTP ${answer.status}`);
    return (await answer.json()) as GettableAlert[];
  }

  /** `amtool alert query` (JSON output) against this Alertmanager, with the given flags and matchers. */
  async amtoolAlerts(...args: string[]): Promise<GettableAlert[]> {
    if (!AMTOOL_BIN) throw new Error(alertmanagerMissing());
    const { stdout } = await run(AMTOOL_BIN, [
      'alert',
      'query',
      `--alertmanager.url=${this.url}`,
      '--output=json',
      ...args,
    ]);
    return JSON.parse(stdout) as GettableAlert[];
  }

  /** `amtool silence add` for an hour; returns the silence id. */
  async silence(matchers: readonly string[], comment: string): Promise<string> {
    if (!AMTOOL_BIN) throw new Error(alertmanagerMissing());
    const { stdout } = await run(AMTOOL_BIN, [
      'silence',
      'add',
      `--alertmanager.url=${this.url}`,
      '--author=fleetwatch-tests',
      `--comment=${comment}`,
      '--duration=1h',
      ...matchers,
    ]);
    return stdout.trim();
  }

  /** `127.0.0.1:<port>`, for `start({ listenAddress })` after `stop()`. */
  get address(): string {
    return new URL(this.url).host;
  }

  /** What the process wrote to stderr, for failure messages. */
  output(): string {
    return this.#output.join('');
  }

  async stop(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      const exited = new Promise((resolve) => this.#child.once('exit', resolve));
      this.#child.kill('SIGTERM');
      await withTimeout(exited, 10_000, 'Alertmanager did not stop').catch(() => this.#child.kill('SIGKILL'));
    }
    await rm(this.#dir, { recursive: true, force: true });
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
