import { z } from 'zod';
import { consoleNotifierFactory } from './console/index.js';
import { slackNotifierFactory } from './slack/index.js';
import type { NotifierFactory } from './types.js';
import { webhookNotifierFactory } from './webhook/index.js';

/**
 * Every receiver kind fleetwatch knows. A new kind is one folder with a `NotifierFactory` and one
 * line here; the config schema, `config check` masking and delivery all go through this list.
 */
export const NOTIFIER_FACTORIES: readonly NotifierFactory[] = [
  slackNotifierFactory as unknown as NotifierFactory,
  webhookNotifierFactory as unknown as NotifierFactory,
  consoleNotifierFactory as unknown as NotifierFactory,
];

export type ReceiverConfig = { kind: string; name: string } & Record<string, unknown>;

export function factoryFor(kind: string): NotifierFactory | undefined {
  return NOTIFIER_FACTORIES.find((factory) => factory.kind === kind);
}

const KINDS = NOTIFIER_FACTORIES.map((factory) => factory.kind);

/** One receiver: validated by the schema of its `kind`, so problems name the kind's own fields. */
export const receiverSchema = z.unknown().transform((input, ctx): ReceiverConfig => {
  const kind = (input as { kind?: unknown } | null)?.kind;
  const factory = typeof kind === 'string' ? factoryFor(kind) : undefined;
  if (!factory) {
    ctx.addIssue({
      code: 'custom',
      path: ['kind'],
      message: `must be one of ${KINDS.map((name) => `"${name}"`).join(', ')}`,
    });
    return z.NEVER;
  }
  const result = factory.configSchema.safeParse(input, { reportInput: true });
  if (!result.success) {
    // The kind's own issues, kept whole so the config loader words them like any other.
    for (const issue of result.error.issues)
      ctx.addIssue(issue as unknown as Parameters<typeof ctx.addIssue>[0]);
    return z.NEVER;
  }
  return result.data as ReceiverConfig;
});

/** `receivers:`: a list of named receivers, names unique. */
export const receiversSchema = z
  .array(receiverSchema)
  .default([])
  .superRefine((receivers, ctx) => {
    const seen = new Set<string>();
    receivers.forEach((receiver, index) => {
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(receiver.name)) {
        ctx.addIssue({
          code: 'custom',
          path: [index, 'name'],
          message: 'must be 1 to 64 letters, digits, "_" or "-" (it names the receiver\'s queue)',
        });
      } else if (seen.has(receiver.name)) {
        ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `"${receiver.name}" is used twice` });
      }
      seen.add(receiver.name);
    });
  });

/** Receivers as `config check` prints them. */
export function maskReceivers(receivers: readonly ReceiverConfig[]): ReceiverConfig[] {
  return receivers.map(
    (receiver) => (factoryFor(receiver.kind)?.mask(receiver) ?? receiver) as ReceiverConfig,
  );
}
