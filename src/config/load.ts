import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { interpolate, type MissingVariable } from './interpolate.js';
import { type Config, configSchema, crossSectionProblems } from './schema.js';

/** A configuration that cannot be used; `problems` holds one line per field, ready to print. */
export class ConfigError extends Error {
  readonly problems: string[];

  constructor(source: string, problems: string[]) {
    super(`${source}: ${problems.length === 1 ? problems[0] : `${problems.length} problems`}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export const CONFIG_ENV = 'FLEETWATCH_CONFIG';

export function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): Config {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code;
    throw new ConfigError(path, [`cannot read the config file (${why}); pass --config or set ${CONFIG_ENV}`]);
  }
  return parseConfig(text, path, env);
}

export function parseConfig(text: string, source: string, env: NodeJS.ProcessEnv = process.env): Config {
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (document.errors.length > 0) {
    throw new ConfigError(
      source,
      document.errors.map((error) => {
        const where = error.linePos?.[0];
        const message = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
        return where ? `line ${where.line}, column ${where.col}: ${message}` : message;
      }),
    );
  }
  const raw: unknown = document.toJS() ?? {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(source, ['the file must be a YAML mapping (key: value pairs) at the top level']);
  }
  const missing: MissingVariable[] = [];
  const expanded = interpolate(raw, env, missing);
  const problems = missing.map(
    ({ path, variable }) => `${path}: environment variable ${variable} is not set`,
  );
  const result = configSchema.safeParse(expanded, { reportInput: true });
  if (result.success && problems.length === 0) {
    const crossProblems = crossSectionProblems(result.data);
    if (crossProblems.length === 0) return result.data;
    throw new ConfigError(source, crossProblems);
  }
  // A field whose variable is missing already has its problem; what the schema says of the
  // placeholder text would only repeat it.
  const unset = new Set(missing.map(({ path }) => path));
  for (const issue of result.error?.issues ?? []) {
    if (!unset.has(fieldPath(issue.path))) problems.push(describeIssue(issue));
  }
  throw new ConfigError(source, problems);
}

/** `receivers[2].secrets[0]`: the way a person points at a field of the file. */
function fieldPath(path: readonly PropertyKey[]): string {
  return path
    .map((segment, index) =>
      typeof segment === 'number' ? `[${segment}]` : `${index === 0 ? '' : '.'}${String(segment)}`,
    )
    .join('');
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const path = fieldPath(issue.path) || '(top level)';
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => `"${key}"`).join(', ');
    return `${path}: unknown field${issue.keys.length > 1 ? 's' : ''} ${keys}`;
  }
  if (issue.code === 'invalid_type' && issue.input === undefined) return `${path}: is required`;
  if (issue.code === 'invalid_value' && 'values' in issue) {
    return `${path}: must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
  }
  if (issue.code === 'invalid_type') return `${path}: must be ${article(issue.expected)}`;
  if (issue.code === 'too_small' && 'minimum' in issue) return `${path}: must be at least ${issue.minimum}`;
  if (issue.code === 'too_big' && 'maximum' in issue) return `${path}: must be at most ${issue.maximum}`;
  return `${path}: ${issue.message}`;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
