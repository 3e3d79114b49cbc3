import { readFileSync, statSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { describeIssue, formatIssues, formatPath } from '../lib/issues.js';
import { formatSize } from '../lib/size.js';
import { interpolate, type MissingVariable } from './interpolate.js';
import { type Config, configSchema, crossSectionProblems } from './schema.js';

/**
 * A configuration that cannot be used: `source` names the file, `problems` holds one line per
 * field, ready to print after it (`fleetwatch.yaml: worker.takeover_after: expected …`).
 */
export class ConfigError extends Error {
  readonly source: string;
  readonly problems: string[];

  constructor(source: string, problems: string[]) {
    super(`${source}: ${problems.length === 1 ? problems[0] : `${problems.length} problems`}`);
    this.name = 'ConfigError';
    this.source = source;
    this.problems = problems;
  }
}

export const CONFIG_ENV = 'FLEETWATCH_CONFIG';

/**
 * What a config file may be: a few KiB of YAML, a dozen levels deep. Anything far beyond is not a
 * config (a wrong file, or one made to exhaust the reader) and is refused before it is expanded.
 */
export const CONFIG_LIMITS = {
  /** Bytes of the file. */
  maxBytes: 1_048_576,
  /** Nested mappings and lists (a route tree 20 routes deep uses about 45). */
  maxDepth: 64,
  /** Copies YAML aliases (`*name`) may make (the `yaml` package's `maxAliasCount`). */
  maxAliasCount: 100,
} as const;

export function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): Config {
  let text: string;
  try {
    if (statSync(path).size > CONFIG_LIMITS.maxBytes) {
      throw new ConfigError(path, [
        `the file is larger than ${formatSize(CONFIG_LIMITS.maxBytes)}; a fleetwatch config is a few KiB (is it the right file?)`,
      ]);
    }
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'it is a directory, not a file'
            : (code ?? (error as Error).message);
    throw new ConfigError(path, [`cannot read the config file (${why}); pass --config or set ${CONFIG_ENV}`]);
  }
  return parseConfig(text, path, env);
}

const TOO_DEEP = `the file nests mappings and lists more than ${CONFIG_LIMITS.maxDepth} levels deep; a fleetwatch config needs about ten`;
const ALIAS_BOMB = `its YAML aliases (*name) would make more than ${CONFIG_LIMITS.maxAliasCount} copies, as an alias bomb does; write the values out instead`;

export function parseConfig(text: string, source: string, env: NodeJS.ProcessEnv = process.env): Config {
  const raw = readYaml(text, source);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError(source, ['the file must be a YAML mapping (key: value pairs) at the top level']);
  }
  const missing: MissingVariable[] = [];
  const expanded = interpolate(raw, env, missing);
  const problems = missing.map(
    ({ path, variable }) => `${path}: environment variable ${variable} is not set`,
  );
  const result = configSchema.safeParse(expanded, { reportInput: true, error: describeIssue });
  if (result.success && problems.length === 0) {
    const crossProblems = crossSectionProblems(result.data);
    if (crossProblems.length === 0) return result.data;
    throw new ConfigError(source, crossProblems);
  }
  // A field whose variable is missing already has its problem; what the schema says of the
  // placeholder text would only repeat it.
  const unset = new Set(missing.map(({ path }) => path));
  const issues = (result.error?.issues ?? []).filter((issue) => !unset.has(formatPath(issue.path)));
  throw new ConfigError(source, [...problems, ...formatIssues({ issues })]);
}

/** The YAML as plain data, or a ConfigError saying why not (syntax, depth, alias bomb). */
function readYaml(text: string, source: string): unknown {
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (document.errors.length > 0) {
    // The parser recurses per level and reports running out of stack as a syntax error.
    if (document.errors.some((error) => error.message.includes('call stack'))) {
      throw new ConfigError(source, [TOO_DEEP]);
    }
    throw new ConfigError(
      source,
      document.errors.map((error) => {
        const where = error.linePos?.[0];
        const message = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
        return where ? `line ${where.line}, column ${where.col}: ${message}` : message;
      }),
    );
  }
  let raw: unknown;
  try {
    raw = document.toJS({ maxAliasCount: CONFIG_LIMITS.maxAliasCount }) ?? {};
  } catch (error) {
    if (error instanceof RangeError) throw new ConfigError(source, [TOO_DEEP]);
    if (error instanceof ReferenceError) throw new ConfigError(source, [ALIAS_BOMB]);
    throw new ConfigError(source, [`cannot read the YAML: ${(error as Error).message}`]);
  }
  // Aliases can nest what the parser saw as shallow; everything after this point recurses per level.
  if (depthOf(raw) > CONFIG_LIMITS.maxDepth) throw new ConfigError(source, [TOO_DEEP]);
  return raw;
}

/** How many mappings and lists deep `value` nests, counted without recursion. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > CONFIG_LIMITS.maxDepth) return deepest;
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return deepest;
}
