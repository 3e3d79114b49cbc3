import { z } from 'zod';
import {
  type InhibitRuleConfig,
  inhibitMaxWaitSchema,
  inhibitRulesSchema,
  type MaintenanceConfig,
  maintenanceSchema,
} from './muting/config.js';
import {
  BUILTIN_TAG_NAMES,
  type ChildRouteConfig,
  type EntityTagConfig,
  entityTagSchema,
  type RootRouteConfig,
  rootRouteSchema,
} from './routing/config.js';
import { BUILTIN_LABELS, GROUP_BY_ALL } from './routing/labels.js';
import type { MatchSpec } from './routing/matcher.js';

/**
 * The `notifications:` section of the config file: the route tree (routing/config.ts), the
 * entity tags that label events, the maintenance windows and the inhibition rules
 * (muting/config.ts), with the checks that need more than one of them.
 */

type Path = (string | number)[];

/** Problems that need more than one section: labels and tag names against `entity_tags`, window and rule names. */
export function notificationsProblems(config: {
  route?: RootRouteConfig | undefined;
  entity_tags: readonly EntityTagConfig[];
  maintenance: readonly MaintenanceConfig[];
  inhibit_rules?: readonly InhibitRuleConfig[];
}): { path: Path; message: string }[] {
  const problems: { path: Path; message: string }[] = [];
  const tagNames = new Set(config.entity_tags.flatMap((entry) => Object.keys(entry.tags)));
  const known = () =>
    [...BUILTIN_LABELS, ...[...tagNames].sort()].join(', ') +
    (tagNames.size === 0 ? ' (add entity_tags to group by your own tags)' : '');

  const checkTags = (match: MatchSpec | undefined, path: Path) => {
    for (const name of Object.keys(match?.tags ?? {})) {
      if (!tagNames.has(name)) {
        problems.push({
          path: [...path, 'match', 'tags', name],
          message: `no entity_tags entry sets the tag "${name}", so this never matches`,
        });
      }
    }
  };
  const walk = (
    route: { group_by?: string[]; match?: MatchSpec; routes: ChildRouteConfig[] },
    path: Path,
  ) => {
    route.group_by?.forEach((label, index) => {
      if (label !== GROUP_BY_ALL && !BUILTIN_TAG_NAMES.has(label) && !tagNames.has(label)) {
        problems.push({
          path: [...path, 'group_by', index],
          message: `"${label}" is not a label; use ${known()}`,
        });
      }
    });
    checkTags(route.match, path);
    route.routes.forEach((child, index) => {
      walk(child, [...path, 'routes', index]);
    });
  };
  if (config.route) walk(config.route, ['route']);

  const names = new Set<string>();
  config.maintenance.forEach((window, index) => {
    if (names.has(window.name)) {
      problems.push({
        path: ['maintenance', index, 'name'],
        message: `"${window.name}" is used by another window`,
      });
    }
    names.add(window.name);
    checkTags(window.match, ['maintenance', index]);
  });

  const rules = new Set<string>();
  config.inhibit_rules?.forEach((rule, index) => {
    const path: Path = ['inhibit_rules', index];
    if (rules.has(rule.name)) {
      problems.push({ path: [...path, 'name'], message: `"${rule.name}" is used by another rule` });
    }
    rules.add(rule.name);
    for (const side of ['source_matchers', 'target_matchers'] as const) {
      for (const name of Object.keys(rule[side].tags ?? {})) {
        if (!tagNames.has(name)) {
          problems.push({
            path: [...path, side, 'tags', name],
            message: `no entity_tags entry sets the tag "${name}", so this never matches`,
          });
        }
      }
    }
    rule.equal.forEach((label, at) => {
      if (!BUILTIN_TAG_NAMES.has(label) && !tagNames.has(label)) {
        problems.push({ path: [...path, 'equal', at], message: `"${label}" is not a label; use ${known()}` });
      }
    });
  });
  return problems;
}

/**
 * The three sections together. Mount it as one object (`notifications: notificationsConfigSchema
 * .prefault({})`) to keep the cross-section checks; if the sections are spread into the top level
 * instead, run `notificationsProblems` on the parsed config.
 */
export const notificationsConfigSchema = z
  .strictObject({
    route: rootRouteSchema.optional(),
    entity_tags: z.array(entityTagSchema, { error: 'must be a list of { match, tags }' }).default([]),
    maintenance: z.array(maintenanceSchema, { error: 'must be a list of windows' }).default([]),
    inhibit_rules: inhibitRulesSchema,
    inhibit_max_wait: inhibitMaxWaitSchema,
  })
  .superRefine((config, ctx) => {
    for (const problem of notificationsProblems(config)) {
      ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
    }
  });

export type NotificationsConfig = z.output<typeof notificationsConfigSchema>;
