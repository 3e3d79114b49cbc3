import { z } from 'zod';
import { countField, durationField } from '../lib/fields.js';

/**
 * The config section of one poller (`pollers.<name>`): how often it runs and, for a per-entity
 * poller, in what batches. Each poller's definition carries its own section (see registry.ts);
 * the `pollers:` schema is made of them.
 */

const every = (interval: number) => ({
  enabled: z.boolean().default(true),
  /** How often (1s to 1d); ticks are aligned to the clock so every replica agrees on the tick number. */
  interval: durationField(1_000, 86_400_000).default(interval),
});

/** A list poller: `enabled`, `interval`. */
export function listSettings(interval: number) {
  return z.object(every(interval)).strict();
}

/** A per-entity poller: also `batch_size`, the entities one job polls. */
export function batchSettings(interval: number, batchSize: number) {
  return z.object({ ...every(interval), batch_size: countField(1, 10_000).default(batchSize) }).strict();
}

/** What every poller's section holds once parsed. */
export interface PollerSettings {
  enabled: boolean;
  interval: number;
  batch_size?: number;
}

/** The schema of a poller's section: a strict object whose output has at least `PollerSettings`. */
export type PollerSettingsSchema = z.ZodObject<z.core.$ZodShape, z.core.$strict> & z.ZodType<PollerSettings>;
