import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { track } from './cleanup.js';

/**
 * A process the benchmark starts and stops: output to a log file (named in errors), the first
 * stdout line available to callers that print their address, and a stop that waits for the exit.
 * It is registered with cleanup.ts until it exits, so an interrupted benchmark stops it too.
 */
export class BenchProcess {
  readonly name: string;
  readonly logFile: string;
  readonly #child: ChildProcess;
  readonly #exited: Promise<void>;
  readonly #firstLine: Promise<string>;
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(
    name: string,
    command: string,
    args: string[],
    options: { env?: NodeJS.ProcessEnv; logFile: string },
  ) {
    this.name = name;
    this.logFile = options.logFile;
    const log = createWriteStream(options.logFile);
    this.#child = spawn(command, args, {
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#child.stdout?.pipe(log, { end: false });
    this.#child.stderr?.pipe(log, { end: false });
    this.#firstLine = new Promise((resolve, reject) => {
      let buffered = '';
      const onData = (chunk: Buffer): void => {
        buffered += chunk.toString('utf8');
        const newline = buffered.indexOf('\n');
        if (newline >= 0) {
          this.#child.stdout?.off('data', onData);
          resolve(buffered.slice(0, newline).trim());
        }
      };
      this.#child.stdout?.on('data', onData);
      this.#child.once('exit', () =>
        reject(new Error(`${name} exited before printing anything (see ${options.logFile})`)),
      );
    });
    this.#firstLine.catch(() => {});
    const untrack = track(name, () => this.stop(), this.#child.pid);
    this.#exited = once(this.#child, 'exit').then(([code, signal]) => {
      this.exit = { code: code as number | null, signal: signal as NodeJS.Signals | null };
      untrack();
      log.end();
    });
    this.#child.once('error', (error) => {
      log.write(`could not start ${command}: ${error.message}\n`);
    });
  }

  get pid(): number {
    const pid = this.#child.pid;
    if (pid === undefined) throw new Error(`${this.name} did not start (see ${this.logFile})`);
    return pid;
  }

  get running(): boolean {
    return this.exit === undefined && this.#child.pid !== undefined;
  }

  firstLine(): Promise<string> {
    return this.#firstLine;
  }

  /** Sends `signal` and waits for the exit; SIGKILL after `graceMs`. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 15_000): Promise<void> {
    if (!this.running) return this.#exited;
    this.#child.kill(signal);
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), graceMs);
    await this.#exited;
    clearTimeout(timer);
  }

  exited(): Promise<void> {
    return this.#exited;
  }
}
