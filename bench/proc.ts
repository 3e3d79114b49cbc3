import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

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
  return cpuOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** utime + stime of a `/proc/…/stat` line, in microseconds. */
function cpuOfStat(stat: string): number {
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1_000_000) / CLOCK_TICKS_PER_SECOND;
}

/** User plus system CPU time of each thread of `pid` so far, in microseconds, by thread id. */
export function threadCpuMicros(pid: number): Map<number, number> {
  const threads = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      threads.set(Number(tid), cpuOfStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')));
    } catch {
      // The thread ended between the listing and the read: its time is in no later reading either.
    }
  }
  return threads;
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

/** A fleetwatch process's CPU over a window by thread, in microseconds. */
export interface ThreadSplit {
  /** The main thread: the daemon (dispatch, delivery, HTTP, metrics), and the polls without a poll thread. */
  main: number;
  /** The poll thread (`worker.poll_thread`), when there is one. */
  pollThread?: number;
  /** Every other thread: V8's helpers (garbage collection, compilation) and libuv's pool. */
  helpers: number;
}

/**
 * Splits the CPU of `pid` between two readings of `threadCpuMicros`. The main thread's id is the
 * process id; with a poll thread, it is the busiest other thread (it makes every poll; V8's helper
 * threads only collect and compile for both). A thread gone by the second reading is left out.
 */
export function splitThreads(
  pid: number,
  before: ReadonlyMap<number, number>,
  after: ReadonlyMap<number, number>,
  withPollThread: boolean,
): ThreadSplit {
  const spent = new Map<number, number>();
  for (const [tid, micros] of after) spent.set(tid, Math.max(0, micros - (before.get(tid) ?? 0)));
  const main = spent.get(pid) ?? 0;
  spent.delete(pid);
  let busiest: number | undefined;
  for (const [tid, micros] of spent) if (busiest === undefined || micros > spent.get(busiest)!) busiest = tid;
  const pollThread = withPollThread && busiest !== undefined ? spent.get(busiest)! : undefined;
  if (pollThread !== undefined) spent.delete(busiest!);
  let helpers = 0;
  for (const micros of spent.values()) helpers += micros;
  return pollThread === undefined ? { main, helpers } : { main, pollThread, helpers };
}
