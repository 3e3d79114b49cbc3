import type { z } from 'zod';
import { shown } from './fields.js';

/**
 * How validation problems are worded for people (config check, API answers, CLI arguments): one
 * line per field, `path: message`, each saying what was expected, in its reader's words (a YAML
 * mapping in the config file, a JSON object in the API). Schemas word their own problems where
 * they know better (`must be an http(s) URL`); `issueWording` words the rest, in place of zod's
 * generic `Invalid input`.
 */

/** `route.routes[1].group_by[0]` */
export function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const part of path) {
    if (typeof part === 'number') text += `[${part}]`;
    else text += text === '' ? String(part) : `.${String(part)}`;
  }
  return text;
}

/**
 * Who reads the problems: the config file's author thinks in YAML (a mapping), an API or CLI
 * caller sends JSON (an object). Only the words for an object differ.
 */
export type Audience = 'yaml' | 'json';

const OBJECT_WORDS: Record<Audience, { expected: string; given: string }> = {
  yaml: { expected: 'a mapping (key: value pairs)', given: 'a mapping' },
  json: { expected: 'an object', given: 'an object' },
};

const EXPECTED: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  tuple: 'a list',
  set: 'a list',
  date: 'a date',
  null: 'nothing',
  literal: 'a fixed value',
};

const OBJECT_TYPES = new Set(['object', 'record', 'map']);

function expectedOf(type: string, audience: Audience): string {
  return OBJECT_TYPES.has(type) ? OBJECT_WORDS[audience].expected : (EXPECTED[type] ?? type);
}

/** An object given is named in the audience's words; any other value as `kindOf`/`shown` say. */
function isObject(input: unknown): boolean {
  return typeof input === 'object' && input !== null && !Array.isArray(input);
}

/** What kind of value was given (never the value itself: it may be a secret in the wrong place). */
function kindOf(input: unknown, audience: Audience): string {
  if (isObject(input)) return OBJECT_WORDS[audience].given;
  return kindOfValue(input);
}

function kindOfValue(input: unknown): string {
  if (input === null || input === undefined) return 'nothing';
  if (Array.isArray(input)) return 'a list';
  switch (typeof input) {
    case 'string':
      return input === '' ? 'empty text' : 'text';
    case 'number':
      return 'a number';
    case 'boolean':
      return String(input);
    case 'object':
      return 'a mapping';
    default:
      return typeof input;
  }
}

const FORMATS: Record<string, string> = {
  url: 'a URL',
  email: 'an email address',
  datetime: 'an ISO 8601 time such as 2026-03-01T22:00:00Z',
  date: 'a date such as 2026-03-01',
};

/** The names a strict object accepts, read from the schema that raised the issue. */
function knownKeys(inst: unknown): string[] {
  const shape = (inst as { _zod?: { def?: { shape?: object } } } | undefined)?._zod?.def?.shape;
  return shape ? Object.keys(shape) : [];
}

/** Levenshtein distance, for "did you mean" on a misspelt field. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The known name `given` is a slip of (`takover_after`), if any: not just another short word. */
export function closestName(given: string, known: readonly string[]): string | undefined {
  return known.find((name) => {
    const apart = distance(name.toLowerCase(), given.toLowerCase());
    return apart <= 2 && apart * 3 <= given.length;
  });
}

/**
 * `unknown field "x"; did you mean "y"?`, else `unknown field "x" (expected one of a, b)`: how a
 * name outside a fixed set is refused, for fields and for values alike (`noun` says which).
 */
export function unknownNames(noun: string, names: readonly string[], known: readonly string[]): string {
  const named = names.map((name) => `"${name}"`).join(', ');
  const head = `unknown ${noun}${names.length > 1 ? 's' : ''} ${named}`;
  if (known.length === 0) return head;
  const [only] = names;
  const close = names.length === 1 && only !== undefined ? closestName(only, known) : undefined;
  if (close !== undefined) return `${head}; did you mean "${close}"?`;
  return `${head} (expected ${known.length === 1 ? '' : 'one of '}${known.join(', ')})`;
}

function alternatives(
  errors: readonly (readonly z.core.$ZodIssue[])[],
  audience: Audience,
): string | undefined {
  const expected = errors.map((issues) => {
    const [first] = issues;
    return first?.code === 'invalid_type' && (OBJECT_TYPES.has(first.expected) || first.expected in EXPECTED)
      ? expectedOf(first.expected, audience)
      : undefined;
  });
  if (expected.some((text) => text === undefined)) return undefined;
  return [...new Set(expected)].join(' or ');
}

/**
 * The wording of an issue whose schema has no message of its own, for `audience`: what was
 * expected, and what was given (its kind, or the value when it cannot be a secret: a number, an
 * enum's word). Pass it as the `error` of a parse (`parseProblems` does).
 */
export function issueWording(audience: Audience): z.core.$ZodErrorMap {
  return (issue) => describe(issue, audience);
}

/** The config file's wording (YAML): `load.ts` and the schemas parsed within it (`parseWithin`). */
export const describeIssue: z.core.$ZodErrorMap = issueWording('yaml');
const describeJson: z.core.$ZodErrorMap = issueWording('json');

function describe(issue: z.core.$ZodRawIssue, audience: Audience): string | undefined {
  switch (issue.code) {
    case 'invalid_type': {
      const expected = expectedOf(issue.expected, audience);
      if (issue.input === undefined) return `is required (${expected})`;
      return `expected ${expected}; got ${kindOf(issue.input, audience)}`;
    }
    case 'invalid_value': {
      const values = issue.values.map((value) => JSON.stringify(value));
      const expected = values.length === 1 ? values[0] : `one of ${values.join(', ')}`;
      if (issue.input === undefined) return `is required (${expected})`;
      return `expected ${expected}; got ${isObject(issue.input) ? kindOf(issue.input, audience) : shown(issue.input)}`;
    }
    case 'unrecognized_keys':
      return unknownNames('field', issue.keys, knownKeys(issue.inst));
    case 'invalid_union': {
      const expected = alternatives(issue.errors, audience);
      if (issue.input === undefined) return expected ? `is required (${expected})` : 'is required';
      return expected ? `expected ${expected}; got ${kindOf(issue.input, audience)}` : undefined;
    }
    case 'too_small':
    case 'too_big': {
      const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
      const word = issue.code === 'too_small' ? 'at least' : 'at most';
      if (issue.origin === 'string') {
        if (issue.code === 'too_small' && Number(bound) === 1) return 'must not be empty';
        return `expected ${word} ${bound} characters`;
      }
      if (issue.origin === 'array' || issue.origin === 'set') return `expected ${word} ${bound} entries`;
      const strict = issue.inclusive === false;
      const limit = strict ? (issue.code === 'too_small' ? 'more than' : 'less than') : word;
      return `expected a number ${limit} ${bound}; got ${shown(issue.input)}`;
    }
    case 'invalid_format': {
      if (issue.format === 'regex' && 'pattern' in issue) return `expected text matching ${issue.pattern}`;
      return `expected ${FORMATS[issue.format] ?? issue.format}`;
    }
    case 'not_multiple_of':
      return `expected a multiple of ${issue.divisor}; got ${shown(issue.input)}`;
    case 'invalid_key':
      return 'has a key that is not accepted';
    case 'invalid_element':
      return 'has an entry that is not accepted';
    default:
      return undefined;
  }
}

/**
 * One line per field, `path: message`, for config checks and API answers: the first problem of a
 * field is the one shown (a second about the same field would only repeat it). A field that is
 * missing says so, with what its schema expects.
 */
export function formatIssues(
  error: { readonly issues: readonly z.core.$ZodIssue[] },
  prefix: readonly PropertyKey[] = [],
): string[] {
  const lines = new Map<string, string>();
  for (const issue of error.issues) {
    const path = formatPath([...prefix, ...issue.path]) || '(top level)';
    if (!lines.has(path)) lines.set(path, `${path}: ${messageOf(issue)}`);
  }
  return [...lines.values()];
}

function messageOf(issue: z.core.$ZodIssue): string {
  const missing =
    'input' in issue &&
    issue.input === undefined &&
    (issue.code === 'invalid_type' || issue.code === 'invalid_union') &&
    !issue.message.startsWith('is required');
  if (!missing) return issue.message;
  // A schema's own message for a wrong value also says what a missing one needs:
  // "must be an http(s) URL" → "is required (an http(s) URL)", "must say why" → "is required: say why".
  const what = /^(?:must be|expected) (.+)$/.exec(issue.message)?.[1];
  if (what !== undefined) return `is required (${what})`;
  const instruction = /^must (.+)$/.exec(issue.message)?.[1];
  return instruction === undefined ? 'is required' : `is required: ${instruction}`;
}

export type Parsed<T> = { ok: true; data: T } | { ok: false; problems: string[] };

/**
 * Validates `input` sent as JSON (an API body or query, a CLI body or flags), or says what is
 * wrong, one line per field, paths under `prefix`. The config file words its own (`describeIssue`).
 */
export function parseProblems<S extends z.ZodType>(
  schema: S,
  input: unknown,
  prefix: readonly PropertyKey[] = [],
): Parsed<z.output<S>> {
  const result = schema.safeParse(input, { reportInput: true, error: describeJson });
  if (result.success) return { ok: true, data: result.data };
  return { ok: false, problems: formatIssues(result.error, prefix) };
}

/**
 * Validates `input` with `schema` from inside another schema's transform, raising its problems
 * there, worded by `describeIssue`, at their own paths; undefined when it fails. For a value whose
 * schema depends on what it is (a receiver by its kind, a rule or the name of a built-in one), so
 * that its problems name its own fields instead of "matches none of the forms".
 */
export function parseWithin<S extends z.ZodType>(
  schema: S,
  input: unknown,
  ctx: z.core.$RefinementCtx,
): z.output<S> | undefined {
  const result = schema.safeParse(input, { reportInput: true, error: describeIssue });
  if (result.success) return result.data;
  for (const issue of result.error.issues) ctx.addIssue(issue as z.core.$ZodRawIssue);
  return undefined;
}
