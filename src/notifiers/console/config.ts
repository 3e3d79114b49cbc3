import { z } from 'zod';

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
 * ```
 *
 * It holds no secret, so `config check` prints it as it is.
 */
export const consoleReceiverSchema = z
  .object({
    kind: z.literal('console'),
    name: z
      .string({ error: 'must be the receiver name routes refer to' })
      .min(1, { error: 'must not be empty' }),
    stream: z.enum(['stdout', 'stderr']).default('stdout'),
    color: z.enum(['auto', 'always', 'never']).default('auto'),
    max_events: z.number().int().min(1).max(1_000).default(20),
  })
  .strict();

export type ConsoleReceiverConfig = z.output<typeof consoleReceiverSchema>;

/** Nothing to hide. */
export function maskConsoleConfig(config: ConsoleReceiverConfig): ConsoleReceiverConfig {
  return { ...config };
}
