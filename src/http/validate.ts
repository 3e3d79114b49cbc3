import { z } from 'zod';
import { countField, durationField } from '../lib/fields.js';
import { parseProblems } from '../lib/issues.js';
import { isStreamId } from '../store/stream-entries.js';
import { badRequest } from './errors.js';

/**
 * Request validation: every route parses its params, query and body with zod through `parse`, so a
 * bad request is a 400 whose message names the field (`query.limit: must be at most 1000`) and whose
 * `details.problems` lists every problem, one line each.
 */

export type RequestPart = 'params' | 'query' | 'body';

export function parse<S extends z.ZodType>(schema: S, value: unknown, part: RequestPart): z.output<S> {
  const parsed = parseProblems(schema, value ?? {}, [part]);
  return parsed.ok ? parsed.data : failWith(parsed.problems);
}

function failWith(problems: string[]): never {
  throw badRequest(problems.join('; '), { problems });
}

/** Throws a 400 for problems found outside a schema (same shape). */
export function rejectRequest(problems: string[]): never {
  return failWith(problems);
}

/**
 * A body sent to a route whose document takes none (`config.doc` without `body`): refused, not
 * ignored, since the client meant something by it. `path` is the route's pattern.
 */
export function refuseBody(method: string, path: string): never {
  return rejectRequest([`body: ${method} ${path} takes no body`]);
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

/** A whole number in a query string, within `[min, max]`. */
export function queryInt(min: number, max: number) {
  return countField(min, max);
}

/** A duration in a query string (`30s`, `2m`, `1500ms`, or plain milliseconds), within bounds. */
export function queryDuration(minMs: number, maxMs: number) {
  return durationField(minMs, maxMs);
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
