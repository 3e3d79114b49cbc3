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
 * The poll thread's semi-spaces, in MB: twice V8's default (16 MB), so its young generation can
 * grow to 64 MB.
 *
 * A poll holds its answer, the decoded reading and the records of its job for a few hundred
 * milliseconds; with 16 MB semi-spaces a busy poll thread scavenged often enough that much of that
 * survived a scavenge or two and was copied each time. Twice the room cut the CPU per poll by a
 * fifth at 10,000 entities, for about 25 MB more resident memory (BENCHMARKS.md, *What bounds the
 * numbers*). V8 grows a young generation only as far as the allocation rate asks, so a small
 * fleet's poll thread stays smaller.
 */
export const POLL_THREAD_SEMI_SPACE_MB = 32;

/**
 * Sets the young generation of threads started from now on: the poll thread's
 * (`POLL_THREAD_SEMI_SPACE_MB`), whatever `--max-semi-space-size` the process was started with.
 *
 * The image starts fleetwatch with 2 MB semi-spaces (`NODE_OPTIONS` in the Dockerfile): the daemon
 * thread of a small installation allocates little, and with V8's default its young generation grew
 * to 32 MB and stayed there until the collector noticed the process was idle, which it sometimes
 * did not for minutes (idle RSS 88–114 MB from run to run, 86–87 MB with the cap: BENCHMARKS.md,
 * *Idle memory*). The poll thread (`worker.poll_thread`) makes the polls and allocates most. V8
 * reads the flag when a thread's heap is set up, so the daemon thread keeps the small one.
 */
export function pollThreadYoungGeneration(): void {
  setFlagsFromString(`--max-semi-space-size=${POLL_THREAD_SEMI_SPACE_MB}`);
}
