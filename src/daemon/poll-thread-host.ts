import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { Level, Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { pollThreadYoungGeneration } from '../lib/heap-growth.js';
import {
  type FromPollThread,
  type PollThreadData,
  type PollThreadHooks,
  replayHooks,
  type ToPollThread,
} from './poll-thread-protocol.js';

/**
 * The daemon's side of the poll thread (poll-thread.ts): starts it, hands it commands, writes its
 * log lines through the daemon's logger and replays its hook calls on the daemon's hooks. A
 * thread that dies is the daemon's failure: `onFailure` is told once, and the daemon stops (a
 * process that no longer polls must not look healthy).
 */

export interface PollThreadHostOptions {
  config: Config;
  logger: Logger;
  hooks: PollThreadHooks;
  onFailure: (reason: string) => void;
}

const LEVELS: ReadonlySet<string> = new Set<Level>(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);

/** After the grace, how long the thread may take to close its connections before it is ended. */
const WIND_UP_MS = 10_000;

/**
 * Where the thread's code is: next to this module when run from source (the tests, `npm run
 * fleetwatch`: then loaded through tsx, found from the working directory, the project's), else the bundle's `poll-thread.js` entry (this module may sit in the bundle's `chunks/`).
 */
function threadEntry(): { code: URL | string; eval?: true } {
  if (import.meta.url.endsWith('.ts')) {
    const entry = new URL('./poll-thread.ts', import.meta.url).href;
    return {
      code: `import('tsx/esm/api').then((tsx) => tsx.register()).then(() => import(${JSON.stringify(entry)}))`,
      eval: true,
    };
  }
  for (const candidate of ['./poll-thread.js', '../poll-thread.js']) {
    const url = new URL(candidate, import.meta.url);
    if (existsSync(url)) return { code: url };
  }
  throw new Error('the poll thread is missing from this build (poll-thread.js)');
}

export class PollThreadHost {
  readonly #worker: Worker;
  readonly #logger: Logger;
  #stopping: Promise<'graceful' | 'forced'> | undefined;
  #exited = false;
  #resolveStopped: ((polls: 'graceful' | 'forced') => void) | undefined;

  constructor(options: PollThreadHostOptions) {
    const entry = threadEntry();
    const data: PollThreadData = { config: options.config, logLevel: options.logger.level };
    this.#logger = options.logger;
    pollThreadYoungGeneration();
    this.#worker = new Worker(entry.code, { workerData: data, ...(entry.eval ? { eval: true } : {}) });
    this.#worker.on('message', (message: FromPollThread) => {
      switch (message.type) {
        case 'log':
          this.#log(message.line);
          break;
        case 'hooks':
          replayHooks(message, options.hooks);
          break;
        case 'stopped':
          this.#resolveStopped?.(message.polls);
          break;
      }
    });
    this.#worker.on('error', (error) => {
      options.logger.error({ err: error.message }, 'the poll thread failed');
    });
    this.#worker.on('exit', (code) => {
      this.#exited = true;
      this.#resolveStopped?.('forced');
      if (this.#stopping) return;
      options.onFailure(`the poll thread ended (exit code ${code}); fleetwatch stops, as it no longer polls`);
    });
  }

  start(): void {
    this.#send({ type: 'start' });
  }

  useDetectors(detectors: Config['detectors']): void {
    this.#send({ type: 'detectors', detectors });
  }

  /** Stops the thread's polls (they get `graceMs`) and ends it; says whether they finished in time. */
  stop(graceMs: number): Promise<'graceful' | 'forced'> {
    this.#stopping ??= new Promise<'graceful' | 'forced'>((resolve) => {
      if (this.#exited) return resolve('forced');
      this.#resolveStopped = resolve;
      const timer = setTimeout(() => {
        this.#logger.warn({ graceMs }, 'the poll thread did not stop in time; ending it');
        void this.#worker.terminate();
      }, graceMs + WIND_UP_MS);
      timer.unref();
      this.#send({ type: 'stop', graceMs });
    }).finally(() => {
      void this.#worker.terminate();
    });
    return this.#stopping;
  }

  #send(message: ToPollThread): void {
    this.#worker.postMessage(message);
  }

  /** A line of the thread's JSON log, written again by the daemon's logger (its format, its scrubbing). */
  #log(line: string): void {
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const { level, msg, time: _time, pid: _pid, name: _name, ...fields } = record;
    const label = typeof level === 'number' ? this.#logger.levels.labels[level] : undefined;
    if (label === undefined || !LEVELS.has(label)) return;
    this.#logger[label as Level](fields, typeof msg === 'string' ? msg : '');
  }
}
