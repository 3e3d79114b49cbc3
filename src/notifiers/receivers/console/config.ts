import { z } from 'zod';
import { countField } from '../../../lib/fields.js';
import { maxHoldSchema, receiverNameSchema } from '../../notifier.js';

/**
 * A console receiver in the config file: every notification is printed as readable lines, for
 * the demo, a rehearsal of the routing, or a terminal next to the real receivers.
 *
 * ```yaml
 * - kind: console
 *   name: terminal
 *   stream: stdout        # or stderr
 *   color: auto           # auto (on a terminal, unless NO_COLOR is set), always, never
 *   max_events: 20        # events listed per notification; the rest are counted
 *   max_hold: 5m          # what every kind has (a console never asks to wait)
 * ```
 *
 * It holds no secret, so `config check` prints it as it is.
 */
export const consoleReceiverSchema = z
  .object({
    kind: z.literal('console'),
    name: receiverNameSchema,
    max_hold: maxHoldSchema,
    stream: z.enum(['stdout', 'stderr']).default('stdout'),
    color: z.enum(['auto', 'always', 'never']).default('auto'),
    max_events: countField(1, 1_000).default(20),
  })
  .strict();

export type ConsoleReceiverConfig = z.output<typeof consoleReceiverSchema>;

/** Nothing to hide. */
export function maskConsoleConfig(config: ConsoleReceiverConfig): ConsoleReceiverConfig {
  return { ...config };
}
