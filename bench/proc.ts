import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * CPU and memory of another process, read from `/proc` (Linux): what `ps` shows, without forking
 * `ps` once a second while measuring.
 */

const CLOCK_TICKS_PER_SECOND = ((): number => {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
})();

/** User plus system CPU time of `pid` so far, in microseconds (all its threads). */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1_000_000) / CLOCK_TICKS_PER_SECOND;
}

/** Resident set size of `pid` now and its peak so far, in bytes. */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match ? Number(match[1]) * 1024 : 0;
  };
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

/** Samples a process's RSS every `everyMs` until stopped: mean and maximum. */
export class RssSampler {
  readonly #pid: number;
  readonly #timer: NodeJS.Timeout;
  #sum = 0;
  #count = 0;
  #max = 0;

  constructor(pid: number, everyMs = 1_000) {
    this.#pid = pid;
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), everyMs);
  }

  #sample(): void {
    try {
      const { rss } = memoryOf(this.#pid);
      this.#sum += rss;
      this.#count += 1;
      this.#max = Math.max(this.#max, rss);
    } catch {
      // The process is gone; the samples so far stand.
    }
  }

  stop(): { meanBytes: number; maxBytes: number } {
    clearInterval(this.#timer);
    this.#sample();
    return { meanBytes: this.#count ? this.#sum / this.#count : 0, maxBytes: this.#max };
  }
}
