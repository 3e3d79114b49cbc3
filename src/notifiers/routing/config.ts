import { z } from 'zod';
import { FLEET_EVENT_TYPES } from '../../events/catalogue.js';
import { durationField } from '../../lib/fields.js';
import { formatPath } from '../../lib/issues.js';
import { BUILTIN_LABELS, GROUP_BY_ALL } from './labels.js';
import { compileGlob, globProblem } from './matcher.js';

/**
 * The notification routing sections of the config file (snake_case, strict):
 *
 * ```yaml
 * route:                      # the root route: every event enters here; absent = nothing is routed
 *   receiver: ops-slack
 *   group_by: [type]          # [] (default): one group per route and receiver; ['...']: per incident
 *   group_wait: 30s           # wait this long after a group's first event, to catch the burst
 *   group_interval: 5m        # then at most one message per group this often
 *   repeat_interval: 4h       # remind of incidents still firing this often
 *   send_resolved: true       # tell when an incident resolves
 *   routes:                   # depth-first; the first matching child wins unless it has continue: true
 *     - match: { severity: critical, tags: { site: north } }
 *       receiver: pager
 *       continue: true
 *     - match: { type: 'vehicle.vpn.*', subject: 'vehicle/veh-00*' }
 *       group_by: [site]
 * entity_tags:                # labels for entities; later entries override earlier ones
 *   - match: 'vehicle/north-*'
 *     tags: { site: north }
 * maintenance:                # mute matching events while a window is open
 *   - name: saturday-updates
 *     schedule: '0 22 * * sat'
 *     duration: 4h
 *     time_zone: Europe/Berlin
 *     match: { tags: { site: north } }
 * ```
 *
 * Children inherit every unset field (receiver, group_by, timing, send_resolved) from their parent;
 * `match` and `continue` are not inherited. Receiver names are checked against the configured
 * receivers by the caller, with `checkReceiverNames`.
 */

export const severityFieldSchema = z.enum(['info', 'warning', 'critical'], {
  error: (issue) =>
    `must be one of info, warning, critical (a minimum: warning matches warning and critical)${
      typeof issue.input === 'string' ? `, got "${issue.input}"` : ''
    }`,
});

const glob = z.string({ error: 'must be a glob such as "vehicle/veh-00*"' }).superRefine((value, ctx) => {
  const problem = globProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: `is not a valid glob: ${problem}` });
});

const globs = z.union([glob, z.array(glob).min(1, { error: 'must list at least one glob' })], {
  error: 'must be a glob or a list of globs',
});

const typeGlob = glob.superRefine((value, ctx) => {
  if (globProblem(value)) return;
  const regexp = compileGlob(value);
  if (!FLEET_EVENT_TYPES.some((type) => regexp.test(type))) {
    ctx.addIssue({
      code: 'custom',
      message: `"${value}" matches no event type (for example vehicle.vpn.disconnected, robot.health.*)`,
    });
  }
});

const typeGlobs = z.union([typeGlob, z.array(typeGlob).min(1, { error: 'must list at least one glob' })], {
  error: 'must be an event type glob or a list of them',
});

const TAG_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const BUILTIN_TAG_NAMES: ReadonlySet<string> = new Set<string>(BUILTIN_LABELS);

/** Why a tag name is not usable, or undefined. */
export function tagNameProblem(name: string): string | undefined {
  if (!TAG_NAME.test(name)) return `tag name "${name}" must be letters, digits and _ (not first a digit)`;
  if (BUILTIN_TAG_NAMES.has(name)) {
    return `"${name}" is a built-in label (${BUILTIN_LABELS.join(', ')}) and cannot be a tag name`;
  }
  return undefined;
}

/** A map keyed by tag name (the key problems reported at the key's own path). */
function byTagName<T extends z.ZodType>(values: T) {
  return z
    .record(z.string(), values, { error: 'must be a map of tag name to value' })
    .superRefine((record, ctx) => {
      for (const name of Object.keys(record)) {
        const problem = tagNameProblem(name);
        if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
      }
    });
}

/** Route, silence and maintenance matchers: see matcher.ts for the language. */
export const matchSchema = z.strictObject({
  type: typeGlobs.optional(),
  severity: severityFieldSchema.optional(),
  subject: globs.optional(),
  tags: byTagName(globs).optional(),
});

export type MatchConfig = z.output<typeof matchSchema>;

const receiverName = z
  .string({ error: 'must be the name of a receiver' })
  .min(1, { error: 'must be the name of a receiver' });

const groupBy = z
  .array(z.string().min(1, { error: 'must be a label name' }), { error: 'must be a list of label names' })
  .superRefine((labels, ctx) => {
    if (labels.includes(GROUP_BY_ALL) && labels.length > 1) {
      ctx.addIssue({ code: 'custom', message: `"${GROUP_BY_ALL}" (every label) must be the only entry` });
    }
    const seen = new Set<string>();
    labels.forEach((label, index) => {
      if (seen.has(label)) {
        ctx.addIssue({ code: 'custom', path: [index], message: `"${label}" is listed twice` });
      }
      seen.add(label);
    });
  });

/** A child route as parsed: unset fields are inherited from the parent (router.ts resolves them). */
export interface ChildRouteConfig {
  match?: MatchConfig;
  receiver?: string;
  group_by?: string[];
  group_wait?: number;
  group_interval?: number;
  repeat_interval?: number;
  send_resolved?: boolean;
  continue: boolean;
  routes: ChildRouteConfig[];
}

/**
 * Group timings. They are due times kept in Redis, never one timer each (the flusher looks every
 * second), so a reminder may be a month apart.
 */
const timing = {
  group_wait: durationField(0, 3_600_000),
  group_interval: durationField(1_000, 86_400_000),
  repeat_interval: durationField(1_000, 30 * 86_400_000, { armsTimer: false }),
};

export const childRouteSchema: z.ZodType<ChildRouteConfig, unknown> = z.strictObject({
  match: matchSchema.optional(),
  receiver: receiverName.optional(),
  group_by: groupBy.optional(),
  group_wait: timing.group_wait.optional(),
  group_interval: timing.group_interval.optional(),
  repeat_interval: timing.repeat_interval.optional(),
  send_resolved: z.boolean({ error: 'must be true or false' }).optional(),
  continue: z.boolean({ error: 'must be true or false' }).default(false),
  routes: z.lazy(() => z.array(childRouteSchema, { error: 'must be a list of routes' })).default([]),
});

export const DEFAULT_TIMING = {
  group_wait: 30_000,
  group_interval: 300_000,
  repeat_interval: 14_400_000,
} as const;

/** The root route: matches every event; its receiver is the fallback; no `match`, no `continue`. */
export const rootRouteSchema = z.strictObject({
  receiver: receiverName,
  group_by: groupBy.default([]),
  group_wait: timing.group_wait.default(DEFAULT_TIMING.group_wait),
  group_interval: timing.group_interval.default(DEFAULT_TIMING.group_interval),
  repeat_interval: timing.repeat_interval.default(DEFAULT_TIMING.repeat_interval),
  send_resolved: z.boolean({ error: 'must be true or false' }).default(true),
  routes: z.array(childRouteSchema, { error: 'must be a list of routes' }).default([]),
});

export type RootRouteConfig = z.output<typeof rootRouteSchema>;

export const entityTagSchema = z.strictObject({
  /** Subject glob, e.g. `vehicle/north-*`. */
  match: glob,
  tags: byTagName(
    z.string({ error: 'expected a tag value (text)' }).min(1, { error: 'must not be empty' }),
  ).refine((tags) => Object.keys(tags).length > 0, { error: 'must name at least one tag' }),
});

export type EntityTagConfig = z.output<typeof entityTagSchema>;

type Path = (string | number)[];

/**
 * Receiver names used anywhere in the route tree that are not configured, one line each:
 * `route.routes[1].receiver: unknown receiver "pager" (configured: ops-slack, audit)`.
 */
export function checkReceiverNames(route: RootRouteConfig | undefined, names: Iterable<string>): string[] {
  if (!route) return [];
  const known = new Set(names);
  const list =
    known.size === 0 ? 'no receivers are configured' : `configured: ${[...known].sort().join(', ')}`;
  const problems: string[] = [];
  const walk = (node: { receiver?: string | undefined; routes: ChildRouteConfig[] }, path: Path) => {
    if (node.receiver !== undefined && !known.has(node.receiver)) {
      problems.push(`${formatPath([...path, 'receiver'])}: unknown receiver "${node.receiver}" (${list})`);
    }
    node.routes.forEach((child, index) => {
      walk(child, [...path, 'routes', index]);
    });
  };
  walk(route, ['route']);
  return problems;
}
