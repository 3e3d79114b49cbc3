import { parseProblems } from '../lib/issues.js';
import { formatSize } from '../lib/size.js';
import type { Operation } from '../upstream/operations/types.js';

/**
 * The request body of an upstream operation as a person gives it (a file, stdin, an API request),
 * read and checked before anything is sent: JSON, within a size limit, present when the row's
 * body rule requires it, absent when the row takes none, and matching the row's request schema
 * where the spec (or the robot payload notes) gives one. Where the spec is silent, any JSON passes through
 * unchanged: only the robot can judge it.
 *
 * Problems are one line each, naming the field and what was expected (`motion_command: expected a
 * number at most 2; got 7`), so the CLI and the API can show them as they are.
 */

/** The largest request body taken for an upstream operation: 1 MiB (a site or route with many poses). */
export const OPERATION_BODY_MAX_BYTES = 1_048_576;

export type BodyCheck = { ok: true; value: unknown } | { ok: false; problems: string[] };

/** The text of a body as JSON, refused when larger than `OPERATION_BODY_MAX_BYTES` or not JSON. */
export function parseOperationBody(text: string): BodyCheck {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > OPERATION_BODY_MAX_BYTES) return { ok: false, problems: [tooLarge(bytes)] };
  if (text.trim() === '') return { ok: false, problems: ['is empty; expected a JSON document'] };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { ok: false, problems: [`is not valid JSON (${why})`] };
  }
}

/** The line for a body over the limit (of `bytes`, when known). */
export function tooLarge(bytes?: number): string {
  const size = bytes === undefined ? 'is larger than' : `is ${formatSize(bytes)}, more than`;
  return `${size} ${formatSize(OPERATION_BODY_MAX_BYTES)}, the largest body taken`;
}

/**
 * Checks `body` (undefined: none given) against the row: the body rule, then the request schema.
 * The value to send is the body as given, not the schema's output: a check must not change what
 * the robot receives (a default the schema fills in is the robot's to apply).
 */
export function checkOperationBody(operation: Operation, body: unknown): BodyCheck {
  if (body === undefined) {
    return operation.body === 'required'
      ? { ok: false, problems: ['is required: this operation takes a JSON body'] }
      : { ok: true, value: undefined };
  }
  if (operation.body === 'none') {
    return { ok: false, problems: ['is not taken: this operation sends no body'] };
  }
  if (operation.request === undefined) return { ok: true, value: body };
  const parsed = parseProblems(operation.request, body);
  return parsed.ok ? { ok: true, value: body } : { ok: false, problems: parsed.problems };
}
