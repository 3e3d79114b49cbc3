import { z } from 'zod';
import { parseDuration } from '../config/duration.js';
import { formatIssues } from '../notifiers/routing/config.js';
import { isStreamId } from '../store/stream-entries.js';
import { badRequest } from './errors.js';

/**
 * Request validation: every route parses its params, query and body with zod through `parse`, so a
 * bad request is a 400 whose message names the field (`query.limit: must be at most 1000`) and whose
 * `details.problems` lists every problem, one line each.
 */

export type RequestPart = 'params' | 'query' | 'body';

export function parse<S extends z.ZodType>(schema: S, value: unknown, part: RequestPart): z.output<S> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const problems = formatIssues(result.error, [part]);
  return failWith(problems);
}

function failWith(problems: string[]): never {
  throw badRequest(problems.join('; '), { problems });
}

/** Throws a 400 for problems found outside a schema (same shape). */
export function rejectRequest(problems: string[]): never {
  return failWith(problems);
}

/** A query flag: `true`/`false`/`1`/`0`/`yes`/`no`, or present without a value (`?wait`) for true. */
export const queryFlag = z.union([z.boolean(), z.string()]).transform((value, ctx) => {
  if (typeof value === 'boolean') return value;
  const text = value.trim().toLowerCase();
  if (text === '' || text === 'true' || text === '1' || text === 'yes') return true;
  if (text === 'false' || text === '0' || text === 'no') return false;
  ctx.addIssue({ code: 'custom', message: `must be true or false (got "${value}")` });
  return z.NEVER;
});

/** A positive integer in a query string, within `[min, max]`. */
export function queryInt(min: number, max: number) {
  return z
    .string()
    .regex(/^\d+$/, { error: 'must be a whole number' })
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(min, { error: `must be at least ${min}` })
        .max(max, { error: `must be at most ${max}` }),
    );
}

/** A duration in a query string (`30s`, `2m`, `1500ms`, or plain milliseconds), within bounds. */
export function queryDuration(minMs: number, maxMs: number) {
  return z.string().transform((value, ctx) => {
    const ms = /^\d+$/.test(value.trim()) ? Number(value.trim()) : parseDuration(value);
    if (ms === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a duration such as 30s, 2m or 1500ms (got "${value}")`,
      });
      return z.NEVER;
    }
    if (ms < minMs || ms > maxMs) {
      ctx.addIssue({ code: 'custom', message: `must be between ${minMs} ms and ${maxMs / 1000} s` });
      return z.NEVER;
    }
    return ms;
  });
}

/** A Redis stream id such as `1767225600000-0` (the `id:` of a server-sent event, `lastStreamId`). */
export const streamId = z.string().refine(isStreamId, {
  error: 'must be a stream id such as 1767225600000-0 (an event id: line of /api/events/stream)',
});

/** An identifier in a path (vehicle id, device id, silence id): non-empty, bounded. */
export const pathId = z
  .string()
  .min(1, { error: 'must not be empty' })
  .max(200, { error: 'must be at most 200 characters' });
