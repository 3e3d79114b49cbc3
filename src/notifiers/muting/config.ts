import { z } from 'zod';
import { CATALOGUE } from '../../events/catalogue.js';
import { durationField } from '../../lib/fields.js';
import { parseWithin } from '../../lib/issues.js';
import { type MatchConfig, matchSchema } from '../routing/config.js';
import { compileGlob } from '../routing/matcher.js';
import { cronProblem, timeZoneProblem } from './cron.js';

/**
 * The muting entries of the config file: `notifications.maintenance` (planned windows that mute
 * matching events) and `notifications.inhibit_rules` (a firing incident mutes the events it
 * causes; see inhibition.ts).
 */

/** Maintenance windows last at most this long (a longer mute is a silence, or a config change). */
export const MAX_MAINTENANCE_DURATION = 31 * 86_400_000;

export const maintenanceSchema = z.strictObject({
  name: z.string({ error: 'must name the window' }).min(1, { error: 'must name the window' }),
  /** Cron (5 or 6 fields, node-cron syntax): when each window opens, in `time_zone`. */
  schedule: z.string({ error: 'must be a cron expression' }).superRefine((value, ctx) => {
    const problem = cronProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }),
  /**
   * How long each window stays open (elapsed time, so a DST change does not stretch it). Compared
   * with the clock when an event is judged, never a timer.
   */
  duration: durationField(1_000, MAX_MAINTENANCE_DURATION, { armsTimer: false }),
  time_zone: z
    .string({ error: 'must be an IANA time zone such as "Europe/Berlin"' })
    .superRefine((value, ctx) => {
      const problem = timeZoneProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .default('UTC'),
  match: matchSchema.optional(),
});

export type MaintenanceConfig = z.output<typeof maintenanceSchema>;

// --- inhibition rules ----------------------------------------------------------------------------

/** An inhibition rule as written (Alertmanager's `inhibit_rules` entry, with a name). */
export interface InhibitRuleConfig {
  name: string;
  source_matchers: MatchConfig;
  target_matchers: MatchConfig;
  equal: string[];
}

/**
 * The built-in rules, on by default (`inhibit_rules` absent). Listing rules replaces them; a
 * built-in one is kept by writing its name in the list, and `inhibit_rules: []` turns them all off.
 */
export const BUILTIN_INHIBIT_RULES = [
  {
    // No token: every call fails, so the API upstreams' own incidents are this one's. Entity events
    // need no rule: an access failure never reaches a detector (Guarantee 2).
    name: 'upstream-token',
    source_matchers: { type: 'monitor.upstream.degraded', subject: 'upstream/token' },
    target_matchers: { type: 'monitor.upstream.degraded', subject: ['upstream/fleet', 'upstream/robots'] },
    equal: [],
  },
  {
    // The only vehicle event a failing fleet API causes (a failed poll changes nothing else).
    name: 'upstream-fleet',
    source_matchers: { type: 'monitor.upstream.degraded', subject: 'upstream/fleet' },
    target_matchers: { type: 'vehicle.unreachable' },
    equal: [],
  },
  {
    // The only robot event a failing gateway causes. Rules target only what their source can
    // cause: a target waits for its source to be known (Guarantee 11), so a wide rule would delay
    // every lease or state change by a counting window.
    name: 'upstream-robots',
    source_matchers: { type: 'monitor.upstream.degraded', subject: 'upstream/robots' },
    target_matchers: { type: 'robot.health.down' },
    equal: [],
  },
  {
    // Off the VPN, a vehicle cannot answer or report: the VPN incident is the cause.
    name: 'vehicle-off-vpn',
    source_matchers: { type: 'vehicle.vpn.disconnected' },
    target_matchers: { type: ['vehicle.unreachable', 'vehicle.power.report.stale'] },
    equal: ['subject'],
  },
] as const satisfies readonly InhibitRuleConfig[];

export type BuiltinInhibitRuleName = (typeof BUILTIN_INHIBIT_RULES)[number]['name'];

const BUILTIN_NAMES: readonly string[] = BUILTIN_INHIBIT_RULES.map((rule) => rule.name);

/** Catalogue types that open an incident: the only events that can be a rule's source. */
const FIRING_TYPES = CATALOGUE.filter((entry) => entry.incident?.role === 'fires').map((entry) => entry.type);

const notEmpty = (what: string) =>
  matchSchema.refine((matchers) => Object.values(matchers).some((value) => value !== undefined), {
    error: `must have at least one of type, severity, subject, tags (${what})`,
  });

const sourceMatchers = notEmpty('a rule without one would let any incident inhibit').superRefine(
  (matchers, ctx) => {
    if (matchers.type === undefined) return;
    const globs = typeof matchers.type === 'string' ? [matchers.type] : matchers.type;
    const regexps = globs.map(compileGlob);
    if (!FIRING_TYPES.some((type) => regexps.some((regexp) => regexp.test(type)))) {
      ctx.addIssue({
        code: 'custom',
        path: ['type'],
        message: `matches no event that fires an incident, so nothing can inhibit (for example ${FIRING_TYPES.slice(0, 2).join(', ')})`,
      });
    }
  },
);

const labelName = z
  .string({ error: 'must be a label name such as subject' })
  .min(1, { error: 'must be a label name such as subject' });

export const inhibitRuleSchema = z.strictObject({
  name: z.string({ error: 'must name the rule' }).min(1, { error: 'must name the rule' }),
  /** While an incident matching these fires… */
  source_matchers: sourceMatchers,
  /** …events matching these are kept out of notifications… */
  target_matchers: notEmpty('a rule without one would mute everything'),
  /** …when these labels have the same value on both (a label absent on both counts as equal). */
  equal: z.array(labelName, { error: 'must be a list of label names' }).default([]),
});

const builtinName = z.string().refine((name) => BUILTIN_NAMES.includes(name), {
  error: (issue) =>
    `"${String(issue.input)}" is not a built-in rule (${BUILTIN_NAMES.join(', ')}); write a rule as { name, source_matchers, target_matchers, equal }`,
});

/** One entry: the name of a built-in rule, or a rule, each checked by its own schema. */
const inhibitRuleEntry = z.unknown().transform((input, ctx): string | InhibitRuleConfig => {
  if (typeof input !== 'string' && (input === null || typeof input !== 'object' || Array.isArray(input))) {
    ctx.addIssue({ code: 'custom', message: 'expected a built-in rule name or a rule' });
    return z.NEVER;
  }
  const parsed = parseWithin(typeof input === 'string' ? builtinName : inhibitRuleSchema, input, ctx);
  return parsed === undefined ? z.NEVER : parsed;
});

/** `inhibit_rules`: built-in rule names and rules of one's own, resolved to rules. */
export const inhibitRulesSchema = z
  .array(inhibitRuleEntry, { error: 'must be a list of rules' })
  .transform((entries): InhibitRuleConfig[] =>
    entries.map((entry) =>
      typeof entry === 'string'
        ? (structuredClone(BUILTIN_INHIBIT_RULES.find((rule) => rule.name === entry)) as InhibitRuleConfig)
        : entry,
    ),
  )
  .prefault(() => [...BUILTIN_NAMES]);

/**
 * How long an event that an inhibition rule could mute waits for its source to be known (and an
 * incident whose source resolved, for its own state): see inhibition.ts. 0: no wait.
 */
export const MAX_INHIBIT_WAIT = 600_000;
export const inhibitMaxWaitSchema = durationField(0, MAX_INHIBIT_WAIT).default(60_000);
