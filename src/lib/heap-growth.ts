import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what the last full collection kept, in percent.
 *
 * Left to itself, V8 lets a heap on a machine with memory grow to four times what survived the
 * last full collection before it collects again. A poll keeps each job's records and answers for
 * a few hundred milliseconds, long enough to be promoted to the old generation, so a daemon whose
 * live heap is 40 MB (10,000 entities) grew to 160 MB between full collections, and its resident
 * memory with it. At 1.5 times, the full collections come more often but each costs the same (it
 * is proportional to what survives), so the CPU per poll did not measurably change while resident
 * memory at 10,000 entities fell from about 250 to about 155 MB (BENCHMARKS.md, *Memory*).
 *
 * Unlike `--max-old-space-size`, which also lowers V8's factor, this sets no ceiling: a larger
 * fleet still gets the heap it needs. V8 reads the flag at every full collection, so it can be set
 * once the process runs.
 */
export const HEAP_GROWING_PERCENT = 50;

export function limitHeapGrowth(percent: number = HEAP_GROWING_PERCENT): void {
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/**
 * Lets a thread started from now on size its young generation as V8 does by default (two 16 MB
 * semi-spaces), whatever `--max-semi-space-size` the process was started with.
 *
 * The image starts fleetwatch with 2 MB semi-spaces (`NODE_OPTIONS` in the Dockerfile): the daemon
 * thread of a small installation allocates little, and with V8's default its young generation grew
 * to 32 MB and stayed there until the collector noticed the process was idle, which it sometimes
 * did not for minutes (idle RSS 88–114 MB from run to run, 86–87 MB with the cap: BENCHMARKS.md,
 * *Idle memory*). The poll thread (`worker.poll_thread`) makes the polls and allocates most; a
 * small young generation there would promote what a poll holds for a few hundred milliseconds and
 * collect it again at full cost. V8 reads the flag when a thread's heap is set up, so the daemon
 * thread keeps the small one.
 */
export function defaultYoungGenerationForNewThreads(): void {
  setFlagsFromString('--max-semi-space-size=0');
}
