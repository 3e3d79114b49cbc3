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
