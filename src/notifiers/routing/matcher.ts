import type { FleetEvent, Severity } from '../../events/types.js';
import { incidentLabels, type Labels, labelsFor, severityRank, type Tags } from './labels.js';

/**
 * The matcher language shared by routes, silences and maintenance windows.
 *
 * - `type`, `subject`: a glob or a list of globs (any of them). `*` is any run of characters
 *   (dots and slashes included), `?` one character, `[abc]`, `[a-z]`, `[!abc]` a character class,
 *   `\` takes the next character literally. A glob matches the whole value.
 * - `severity`: a minimum: `warning` matches warning and critical.
 * - `tags`: entity tag name → glob or list of globs; an entity without the tag does not match.
 *
 * Every given field must match; an empty matcher matches everything. An event matches when its own
 * labels match or, for a resolving event, the labels of the incident it closes do (see labels.ts):
 * a route, silence or window for `vehicle.vpn.disconnected` also covers `vehicle.vpn.connected`.
 */
export interface MatchSpec {
  type?: string | readonly string[];
  severity?: Severity;
  subject?: string | readonly string[];
  tags?: Readonly<Record<string, string | readonly string[]>>;
}

export interface Matcher {
  readonly spec: MatchSpec;
  /** True when the event (its own labels or its incident's) matches. */
  matches(event: FleetEvent, tags?: Tags): boolean;
  /** The same test on labels already computed (`labelsFor`). */
  matchesLabels(labels: Labels): boolean;
}

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|/-]/;

function escapeChar(char: string): string {
  return REGEX_SPECIAL.test(char) ? `\\${char}` : char;
}

function escapeClassChar(char: string): string {
  return /[A-Za-z0-9]/.test(char) ? char : `\\${char}`;
}

type Translation = { ok: true; source: string } | { ok: false; problem: string };

function translate(pattern: string): Translation {
  if (pattern.length === 0) return { ok: false, problem: 'must not be empty' };
  let source = '';
  let i = 0;
  while (i < pattern.length) {
    const char = pattern[i]!;
    if (char === '*') {
      while (pattern[i + 1] === '*') i += 1;
      source += '.*';
    } else if (char === '?') {
      source += '.';
    } else if (char === '\\') {
      const next = pattern[i + 1];
      if (next === undefined) return { ok: false, problem: `ends with an unescaped "\\" in "${pattern}"` };
      source += escapeChar(next);
      i += 1;
    } else if (char === '[') {
      const translated = translateClass(pattern, i);
      if (!translated.ok) return translated;
      source += translated.source;
      i = translated.end;
    } else {
      source += escapeChar(char);
    }
    i += 1;
  }
  return { ok: true, source: `^${source}$` };
}

/** `[...]` starting at `start`; returns the class and the index of its closing `]`. */
function translateClass(
  pattern: string,
  start: number,
): { ok: true; source: string; end: number } | { ok: false; problem: string } {
  let i = start + 1;
  let negate = false;
  if (pattern[i] === '!' || pattern[i] === '^') {
    negate = true;
    i += 1;
  }
  const items: string[] = [];
  let first = true;
  while (i < pattern.length && (pattern[i] !== ']' || first)) {
    first = false;
    let char = pattern[i]!;
    if (char === '\\' && i + 1 < pattern.length) {
      i += 1;
      char = pattern[i]!;
    }
    if (pattern[i + 1] === '-' && i + 2 < pattern.length && pattern[i + 2] !== ']') {
      let last = pattern[i + 2]!;
      let skip = 2;
      if (last === '\\' && i + 3 < pattern.length) {
        last = pattern[i + 3]!;
        skip = 3;
      }
      if (last < char) {
        return { ok: false, problem: `has a reversed range "${char}-${last}" in "${pattern}"` };
      }
      items.push(`${escapeClassChar(char)}-${escapeClassChar(last)}`);
      i += skip + 1;
      continue;
    }
    items.push(escapeClassChar(char));
    i += 1;
  }
  if (i >= pattern.length) {
    return { ok: false, problem: `has an unclosed "[" at position ${start + 1} in "${pattern}"` };
  }
  return { ok: true, source: `[${negate ? '^' : ''}${items.join('')}]`, end: i };
}

/** Why a glob is not valid, or undefined when it is. */
export function globProblem(pattern: string): string | undefined {
  const translated = translate(pattern);
  return translated.ok ? undefined : translated.problem;
}

const globCache = new Map<string, RegExp>();

/** The anchored RegExp of a glob. Throws on an invalid glob (the config schema rejects those first). */
export function compileGlob(pattern: string): RegExp {
  let regexp = globCache.get(pattern);
  if (regexp) return regexp;
  const translated = translate(pattern);
  if (!translated.ok) throw new Error(`invalid glob: ${translated.problem}`);
  regexp = new RegExp(translated.source, 's');
  if (globCache.size > 10_000) globCache.clear();
  globCache.set(pattern, regexp);
  return regexp;
}

function anyOf(globs: string | readonly string[]): RegExp[] {
  return (typeof globs === 'string' ? [globs] : globs).map(compileGlob);
}

function test(regexps: readonly RegExp[], value: string | undefined): boolean {
  return value !== undefined && regexps.some((regexp) => regexp.test(value));
}

/** Compiles once (globs → RegExp); the matcher is then cheap to apply to every event. */
export function compileMatcher(spec: MatchSpec = {}): Matcher {
  const type = spec.type === undefined ? undefined : anyOf(spec.type);
  const subject = spec.subject === undefined ? undefined : anyOf(spec.subject);
  const minimum = spec.severity === undefined ? undefined : severityRank(spec.severity);
  const tags = Object.entries(spec.tags ?? {}).map(([name, globs]) => [name, anyOf(globs)] as const);

  const testLabels = (labels: Labels): boolean => {
    if (type && !test(type, labels.type)) return false;
    if (subject && !test(subject, labels.subject)) return false;
    if (minimum !== undefined) {
      const severity = labels.severity;
      if (severity !== 'info' && severity !== 'warning' && severity !== 'critical') return false;
      if (severityRank(severity) < minimum) return false;
    }
    for (const [name, regexps] of tags) {
      if (!test(regexps, labels[name])) return false;
    }
    return true;
  };

  const matchesLabels = (labels: Labels): boolean => {
    if (testLabels(labels)) return true;
    const incident = incidentLabels(labels);
    return incident !== labels && testLabels(incident);
  };

  return {
    spec,
    matchesLabels,
    matches: (event, entityTags = {}) => matchesLabels(labelsFor(event, entityTags)),
  };
}
