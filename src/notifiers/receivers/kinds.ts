import { z } from 'zod';
import { shown } from '../../lib/fields.js';
import { parseWithin } from '../../lib/issues.js';
import type { RetryPolicy, RetryPolicyOverrides } from '../../lib/retry-policy.js';
import { RECEIVER_NAME } from '../../queues/names.js';
import type { NotifierFactory, ReceiverBase } from '../notifier.js';
import { alertmanagerNotifierFactory } from './alertmanager/index.js';
import { consoleNotifierFactory } from './console/index.js';
import { emailNotifierFactory } from './email/index.js';
import { pagerDutyNotifierFactory } from './pagerduty/index.js';
import { slackNotifierFactory } from './slack/index.js';
import { webhookNotifierFactory } from './webhook/index.js';

/**
 * Every receiver kind fleetwatch knows. A new kind is one folder with a `NotifierFactory` and one
 * line here; the config schema, `config check` masking, secret registration, retry policies and
 * delivery all go through this list.
 */
export const NOTIFIER_FACTORIES: readonly NotifierFactory[] = [
  slackNotifierFactory as unknown as NotifierFactory,
  webhookNotifierFactory as unknown as NotifierFactory,
  consoleNotifierFactory as unknown as NotifierFactory,
  emailNotifierFactory as unknown as NotifierFactory,
  pagerDutyNotifierFactory as unknown as NotifierFactory,
  alertmanagerNotifierFactory as unknown as NotifierFactory,
];

export type ReceiverConfig = ReceiverBase & Record<string, unknown>;

export function factoryFor(kind: string): NotifierFactory | undefined {
  return NOTIFIER_FACTORIES.find((factory) => factory.kind === kind);
}

/** The factory of a configured receiver's kind; an unknown kind (the schema stops those) throws. */
export function factoryOf(receiver: Pick<ReceiverConfig, 'kind' | 'name'>): NotifierFactory {
  const factory = factoryFor(receiver.kind);
  if (!factory) throw new Error(`receiver ${receiver.name}: no notifier for kind "${receiver.kind}"`);
  return factory;
}

/** How a receiver's passing failures are retried: its kind's policy. */
export function retryPolicyFor(receiver: ReceiverConfig, overrides?: RetryPolicyOverrides): RetryPolicy {
  return factoryOf(receiver).retryPolicy(receiver, overrides);
}

const KINDS = NOTIFIER_FACTORIES.map((factory) => factory.kind);

/** One receiver: validated by the schema of its `kind`, so problems name the kind's own fields. */
export const receiverSchema = z.unknown().transform((input, ctx): ReceiverConfig => {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    ctx.addIssue({
      code: 'custom',
      message: 'expected a receiver: a mapping with kind, name and its settings',
    });
    return z.NEVER;
  }
  const kind = (input as { kind?: unknown }).kind;
  const factory = typeof kind === 'string' ? factoryFor(kind) : undefined;
  if (!factory) {
    const kinds = `one of ${KINDS.map((name) => `"${name}"`).join(', ')}`;
    ctx.addIssue({
      code: 'custom',
      path: ['kind'],
      message: kind === undefined ? `is required (${kinds})` : `expected ${kinds}; got ${shown(kind)}`,
    });
    return z.NEVER;
  }
  // The kind's own problems, naming its own fields.
  const parsed = parseWithin(factory.configSchema, input, ctx);
  return parsed === undefined ? z.NEVER : (parsed as ReceiverConfig);
});

/** `receivers:`: a list of named receivers, names unique. */
export const receiversSchema = z
  .array(receiverSchema, { error: 'expected a list of receivers' })
  .default([])
  .superRefine((receivers, ctx) => {
    const seen = new Set<string>();
    receivers.forEach((receiver, index) => {
      if (!RECEIVER_NAME.test(receiver.name)) {
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
  return receivers.map((receiver) => factoryOf(receiver).mask(receiver) as ReceiverConfig);
}

/** Every secret value the receivers' configs hold, for the registry that scrubs logs. */
export function receiverSecrets(receivers: readonly ReceiverConfig[]): string[] {
  return receivers.flatMap((receiver) => factoryOf(receiver).secrets(receiver));
}
