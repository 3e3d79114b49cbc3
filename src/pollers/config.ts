import { z } from 'zod';
import { POLLER_NAMES, POLLERS, type PollerName, type PollerOf } from './registry.js';
import type { PollerSettingsSchema } from './settings.js';

/**
 * The `pollers:` section of the config file: one entry per poller of the registry, each the
 * section its definition carries (how often, in what batches, anything of its own).
 */

type Sections = { [Name in PollerName]: z.ZodPrefault<PollerOf<Name>['settings']> };

export const pollersSchema = z
  // Built from the list, so the keys are the registry's names; the type says which is which.
  .object(
    Object.fromEntries(
      // Each poller's own schema; the union of them all has no common `prefault` signature.
      POLLER_NAMES.map((name) => [name, (POLLERS[name].settings as PollerSettingsSchema).prefault({})]),
    ) as Sections,
  )
  .strict();

export type PollersConfig = z.output<typeof pollersSchema>;
export type { PollerName };
