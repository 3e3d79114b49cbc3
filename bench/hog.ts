import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { BenchProcess } from './child.js';
import { cpuMicros } from './proc.js';

/**
 * The contended mode's CPU hog: a child process spinning one core at 100 %, pinned to CPU 1 with
 * `taskset` when that exists and works here. It must never outlive the benchmark: stop() ends it,
 * Ctrl-C, SIGTERM and process exit kill it (it is a BenchProcess, registered with cleanup.ts), and
 * the hog itself exits once its parent is gone (a SIGKILLed benchmark cannot clean up after itself).
 */

/**
 * Spins on the clock (a loop the JIT cannot drop) and looks for its parent every 100 ms. The
 * parent's pid comes as an argument: read at start, it could already be the adopter's.
 */
const SPIN = `const parent = Number(process.argv[1]);
for (;;) {
  const until = Date.now() + 100;
  while (Date.now() < until);
  if (process.ppid !== parent) process.exit(0);
}`;

const PINNED_CPU = 1;

/** CPU 1 if this machine has it and `taskset` can pin to it, otherwise none. */
function pinnableCpu(): number | undefined {
  if (cpus().length <= PINNED_CPU) return undefined;
  try {
    execFileSync('taskset', ['-c', String(PINNED_CPU), 'true'], { stdio: 'ignore' });
    return PINNED_CPU;
  } catch {
    return undefined;
  }
}

export interface HogResult {
  /** The CPU the hog was pinned to, or null when it ran wherever the scheduler put it. */
  pinnedCpu: number | null;
  /** Cores the hog used on average while it ran (about 1 when it got its core). */
  cores: number;
}

export class CpuHog {
  readonly pinnedCpu: number | undefined;
  readonly #process: BenchProcess;
  readonly #startedAt: number;
  readonly #cpuBefore: number;

  private constructor(process_: BenchProcess, pinnedCpu: number | undefined) {
    this.#process = process_;
    this.pinnedCpu = pinnedCpu;
    this.#startedAt = Date.now();
    this.#cpuBefore = cpuMicros(process_.pid);
  }

  static start(logFile: string): CpuHog {
    const cpu = pinnableCpu();
    const node = [process.execPath, '-e', SPIN, String(process.pid)];
    const [command, ...args] = cpu === undefined ? node : ['taskset', '-c', String(cpu), ...node];
    return new CpuHog(new BenchProcess('cpu hog', command!, args, { logFile }), cpu);
  }

  get pid(): number {
    return this.#process.pid;
  }

  /** Synchronous, for exit paths that cannot wait. */
  kill(): void {
    if (!this.#process.running) return;
    try {
      process.kill(this.#process.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }

  /** Ends the hog and says what it took. */
  async stop(): Promise<HogResult> {
    let cores = Number.NaN;
    if (this.#process.running) {
      const wallMs = Date.now() - this.#startedAt;
      cores = (cpuMicros(this.#process.pid) - this.#cpuBefore) / 1000 / wallMs;
    }
    await this.#process.stop('SIGKILL', 5_000);
    return { pinnedCpu: this.pinnedCpu ?? null, cores };
  }
}
