import { InvalidArgumentError } from 'commander';
import type { PollerName } from '../src/pollers/config.js';
import { POLLER_NAMES, POLLERS } from '../src/pollers/registry.js';
import type { SizeSpec } from './measure.js';

/**
 * The benchmark's sizes and modes, and the parsing of `--sizes` and `--mode`: kept apart from
 * run.ts so they can be checked without starting anything.
 */

/**
 * `cycles` are the measured cycles after the baseline one. 100k runs two 60 s cycles: with the
 * simulator's start and the references (about 1.5 minutes), waiting for a tick, the baseline cycle
 * and the deliveries after the window it takes about 8 minutes, and under 10 if every wait runs to
 * its time-out (baseline 2 cycles + 1 minute, its deliveries 1 cycle, the measured changes' 1 cycle
 * + 10 s): inside the 15 minutes one size may take. BENCHMARKS.md has the breakdown.
 */
export const SIZES: Readonly<Record<string, SizeSpec>> = {
  '1k': { label: '1k', vehicles: 500, robots: 500, intervalMs: 5_000, cycles: 4 },
  '10k': { label: '10k', vehicles: 5_000, robots: 5_000, intervalMs: 15_000, cycles: 3 },
  '40k': { label: '40k', vehicles: 20_000, robots: 20_000, intervalMs: 60_000, cycles: 2 },
  '100k': { label: '100k', vehicles: 50_000, robots: 50_000, intervalMs: 60_000, cycles: 2 },
};

/** Sizes `npm run bench` runs without `--sizes` (100k is asked for by name). */
export const DEFAULT_SIZES: readonly string[] = ['1k', '10k', '40k'];

/**
 * quiet: the machine as it is. contended: one core taken by a CPU hog the benchmark starts itself,
 * for every measurement of the size, references included.
 */
export const MODES = ['quiet', 'contended'] as const;
export type BenchMode = (typeof MODES)[number];

/** Comma-separated names, each once, in the order given; throws on anything unknown or empty. */
function namesFrom<T extends string>(value: string, known: readonly T[], what: string): T[] {
  const chosen: T[] = [];
  for (const raw of value.split(',')) {
    const name = raw.trim();
    if (!(known as readonly string[]).includes(name))
      throw new InvalidArgumentError(
        `unknown ${what} ${JSON.stringify(name)}; choose from ${known.join(', ')}`,
      );
    if (!chosen.includes(name as T)) chosen.push(name as T);
  }
  return chosen;
}

export function sizeList(value: string): SizeSpec[] {
  return namesFrom(value, Object.keys(SIZES), 'size').map((name) => SIZES[name]!);
}

/** Modes run in the order quiet, contended whatever the order given, so each size's pair is adjacent. */
export function modeList(value: string): BenchMode[] {
  const chosen = namesFrom(value, MODES, 'mode');
  return MODES.filter((mode) => chosen.includes(mode));
}

/** A parser of whole numbers from `min` to `max` that names what it expected otherwise. */
export function wholeNumber(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(
        `expected a whole number from ${min} to ${max}; got ${JSON.stringify(value)}`,
      );
    }
    return n;
  };
}

/** `--replicas`: how many fleetwatch processes share the Redis, 1 to 4. */
export const replicaCount: (value: string) => number = wholeNumber(1, 4);

/** `--pollers` of bench/poll-path.ts: per-entity pollers by name, each once, in the order given. */
export function entityPollerList(value: string): PollerName[] {
  const entity = POLLER_NAMES.filter((name) => POLLERS[name].targets !== undefined);
  return namesFrom(value, entity, 'per-entity poller');
}
