import { InvalidArgumentError, Option } from 'commander';
import type { z } from 'zod';
import { formatDuration } from '../lib/duration.js';
import { COUNT, checkValue, DURATION, type Quantity } from '../lib/fields.js';
import { SEED_LIMITS } from '../simulator/seed.js';

/**
 * Commander parsers that turn a bad value into a one-line usage error (exit 2) saying what was
 * expected, worded as the config file's: `expected a duration between 1s and 1h, like 30s; got 9d`.
 */
function bounded(quantity: Quantity, min: number, max: number) {
  return (value: string): number => {
    const checked = checkValue(quantity, { min, max }, value);
    if (!checked.ok) throw new InvalidArgumentError(checked.problem);
    return checked.value;
  };
}

/** A duration such as `30s` or `5m`, within `[min, max]` milliseconds. */
export function durationArgument(min: number, max: number) {
  return bounded(DURATION, min, max);
}

interface Range {
  min: number;
  max: number;
}

/** The bounds of a duration as its help shows them: `(100ms to 1h)`. */
export function durationBounds(range: Range): string {
  return `(${formatDuration(range.min)} to ${formatDuration(range.max)})`;
}

/**
 * A duration option whose help reads as people write durations: its bounds and its default
 * (`how long --wait waits (100ms to 1h) (default: 5m)`), never a count of milliseconds.
 */
export function durationOption(flags: string, description: string, range: Range, defaultMs?: number): Option {
  const option = new Option(flags, `${description} ${durationBounds(range)}`).argParser(
    durationArgument(range.min, range.max),
  );
  return defaultMs === undefined ? option : option.default(defaultMs, formatDuration(defaultMs));
}

/** A whole number within `[min, max]`. */
export function countArgument(min: number, max: number) {
  return bounded(COUNT, min, max);
}

/** A whole-number option whose help shows its bounds, as a duration option's does: `(0 to 100000)`. */
export function countOption(flags: string, description: string, range: Range, fallback?: number): Option {
  const option = new Option(flags, `${description} (${range.min} to ${range.max})`).argParser(
    countArgument(range.min, range.max),
  );
  return fallback === undefined ? option : option.default(fallback);
}

export const portArgument = countArgument(0, 65_535);

/** The seeds of a simulated fleet. */
export const SEED_RANGE = { min: 0, max: SEED_LIMITS.seed } as const;

/** The first problem zod found, worded as what was expected: `must be a stream id` → `expected a stream id`. */
function expected(error: z.ZodError): string {
  const message = error.issues[0]?.message ?? 'is not valid';
  return `${message.replace(/^must be /, 'expected ')}.`;
}

function check<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new InvalidArgumentError(expected(result.error));
}

/**
 * An option checked by the schema the API checks the same field with (`--type` and `?type=` by
 * `eventTypeGlob`): one rule, one wording.
 */
export function schemaArgument<T>(schema: z.ZodType<T, string>): (value: string) => T {
  return (value) => check(schema, value);
}
