import { z } from 'zod';
import { formatDuration, parseDuration, TIMER_LIMIT_MS } from './duration.js';
import { formatSize, parseSize } from './size.js';

/**
 * Bounded values people give fleetwatch. Every duration, count, number and size of the config file,
 * the API and the command line is read by one of these, within a range, and refused with one line
 * that says what was expected and what was given:
 * `expected a duration between 1s and 1d, like 30s; got 999999999d`.
 */

/** A kind of value: how it is read, written and introduced. */
export interface Quantity {
  /** `a duration`, `a whole number`, … */
  readonly noun: string;
  /** The value, or undefined when the input is not one of these at all. */
  read(input: unknown): number | undefined;
  format(value: number): string;
  /** Candidates for the example of a message; the first within the range is quoted. */
  readonly examples: readonly number[];
}

export interface Range {
  min: number;
  max: number;
  /** `min` itself is refused (a ratio above 0). */
  aboveMin?: boolean;
}

const PLAIN_NUMBER = /^[+-]?\d+(?:\.\d+)?$/;

function numeric(input: unknown): number | undefined {
  if (typeof input === 'number') return Number.isFinite(input) ? input : undefined;
  if (typeof input === 'string' && PLAIN_NUMBER.test(input.trim())) return Number(input.trim());
  return undefined;
}

const DAY_MS = 86_400_000;

/** `30s`, `5m`, `1h`, `2d`, or a number of milliseconds. */
export const DURATION: Quantity = {
  noun: 'a duration',
  read: (input) => {
    if (typeof input === 'string' && !PLAIN_NUMBER.test(input.trim())) return parseDuration(input);
    const ms = numeric(input);
    return ms === undefined ? undefined : Math.round(ms);
  },
  format: (ms) => (ms === 0 ? '0s' : formatDuration(ms)),
  examples: [30_000, 300_000, 3_600_000, 10_000, 1_000, 500, DAY_MS, 7 * DAY_MS, 30 * DAY_MS],
};

/** `16MiB`, `512KiB`, `1MB`, or a number of bytes. */
export const SIZE: Quantity = {
  noun: 'a size',
  read: (input) => {
    if (typeof input === 'string') return parseSize(input);
    const bytes = numeric(input);
    return bytes === undefined ? undefined : Math.round(bytes);
  },
  format: formatSize,
  examples: [16 * 1_048_576, 1_048_576, 64 * 1_024, 1_073_741_824],
};

/** A count: 0, 1, 2, … (a number-like string such as `"8"`, as `${VAR}` gives, is read too). */
export const COUNT: Quantity = {
  noun: 'a whole number',
  read: (input) => {
    const value = numeric(input);
    return value !== undefined && Number.isInteger(value) ? value : undefined;
  },
  format: String,
  examples: [],
};

/** Any number, such as a ratio. */
export const NUMBER: Quantity = {
  noun: 'a number',
  read: numeric,
  format: String,
  examples: [],
};

function within(value: number, range: Range): boolean {
  return (range.aboveMin ? value > range.min : value >= range.min) && value <= range.max;
}

/** `a duration between 1s and 1d, like 30s` */
export function describeRange(quantity: Quantity, range: Range): string {
  const low = `${range.aboveMin ? 'above' : 'between'} ${quantity.format(range.min)}`;
  const high = `${range.aboveMin ? 'and at most' : 'and'} ${quantity.format(range.max)}`;
  const like = quantity.examples.find((example) => within(example, range));
  return `${quantity.noun} ${low} ${high}${like === undefined ? '' : `, like ${quantity.format(like)}`}`;
}

/** How a given value is quoted after `got`: short, and never a whole document. */
export function shown(input: unknown): string {
  if (input === null) return 'nothing';
  if (Array.isArray(input)) return 'a list';
  if (typeof input === 'object') return 'a mapping';
  if (typeof input !== 'string') return String(input);
  const text = input.length > 40 ? `${input.slice(0, 40)}…` : input;
  return text.trim() === '' || /[\s;,]/.test(text) ? JSON.stringify(text) : text;
}

export type Checked = { ok: true; value: number } | { ok: false; problem: string };

/** Reads `input` as a quantity within `range`, or says what was expected. */
export function checkValue(quantity: Quantity, range: Range, input: unknown): Checked {
  const expected = describeRange(quantity, range);
  if (input === undefined) return { ok: false, problem: `is required (${expected})` };
  const value = quantity.read(input);
  if (value === undefined || !within(value, range)) {
    return {
      ok: false,
      problem: `expected ${expected}; got ${shown(input)}${secondsHint(quantity, range, input)}`,
    };
  }
  return { ok: true, value };
}

/**
 * A bare number is a duration in milliseconds; when the same number of seconds would have fitted,
 * the writer most likely meant seconds (`interval: 30`), so the message says so.
 */
function secondsHint(quantity: Quantity, range: Range, input: unknown): string {
  if (quantity !== DURATION) return '';
  const text = typeof input === 'number' ? String(input) : typeof input === 'string' ? input.trim() : '';
  if (!/^\d+(\.\d+)?$/.test(text)) return '';
  return within(Number(text) * 1_000, range)
    ? ` (a bare number is milliseconds; did you mean ${text}s?)`
    : '';
}

/**
 * A zod field for a bounded quantity; its one message is `checkValue`'s. Its description (the
 * range, as messages word it) is what a JSON Schema of it says, e.g. in the API's OpenAPI.
 */
export function boundedField(quantity: Quantity, range: Range) {
  return z
    .unknown()
    .transform((input, ctx): number => {
      const checked = checkValue(quantity, range, input);
      if (checked.ok) return checked.value;
      ctx.addIssue({ code: 'custom', message: checked.problem, input });
      return z.NEVER;
    })
    .describe(describeRange(quantity, range));
}

export interface DurationOptions {
  /**
   * False for a duration only ever compared with clocks (a silence's length, a reminder interval
   * kept as a due time in Redis): it may exceed Node's timer limit. Every other duration arms a
   * timer somewhere, so its maximum must stay below `TIMER_LIMIT_MS`; a schema that says
   * otherwise fails when it is defined, not when the timer fires after 1 ms.
   */
  armsTimer?: boolean;
}

/** A duration (`30s`, `5m`, or milliseconds) within `[min, max]` milliseconds. */
export function durationField(min: number, max: number, options: DurationOptions = {}) {
  if ((options.armsTimer ?? true) && max > TIMER_LIMIT_MS) {
    throw new RangeError(`a duration that arms a timer cannot exceed ${formatDuration(TIMER_LIMIT_MS)}`);
  }
  return boundedField(DURATION, { min, max });
}

/** A whole number within `[min, max]`. */
export function countField(min: number, max: number) {
  return boundedField(COUNT, { min, max });
}

/** A number within `[min, max]`, or `(min, max]` with `aboveMin`. */
export function numberField(range: Range) {
  return boundedField(NUMBER, range);
}

/** A size in bytes (`16MiB`, or bytes) within `[min, max]`. */
export function sizeField(min: number, max: number) {
  return boundedField(SIZE, { min, max });
}

/**
 * Text a person must give (who, why): missing or blank, the field says what to give
 * (`instruction`, `must say why`); a value of another kind is worded as for any field
 * (`expected text; got a number`).
 */
export function requiredText(instruction: string) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? instruction : undefined) })
    .trim()
    .min(1, { error: instruction });
}
