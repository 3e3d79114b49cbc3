import { z } from 'zod';
import { countField, durationField } from '../../../lib/fields.js';
import { httpUrlSchema } from '../../../lib/http-url.js';
import { REDACTED } from '../../../log/secrets.js';
import { maxHoldSchema, receiverNameSchema } from '../../notifier.js';

/**
 * A PagerDuty receiver (Events API v2) in the config file:
 *
 * ```yaml
 * - kind: pagerduty
 *   name: on-call
 *   routing_key: ${PAGERDUTY_ROUTING_KEY}   # the integration key of an Events API v2 integration
 *   severity_map: { warning: error }        # optional: fleetwatch severity → PagerDuty severity
 *   changes: trigger                        # events of no incident: trigger (default) or skip
 *   events_per_minute: 120                  # pacing per receiver and process (1 to 1000)
 *   fold_above: 20                          # more new incidents at once: one alert for them
 *   timeout: 10s
 *   max_hold: 5m
 * ```
 */

/** Where PagerDuty takes Events API v2 events. */
export const EVENTS_API_URL = 'https://events.pagerduty.com/v2/enqueue';

/** Events PagerDuty accepts per routing key and minute (its documented Events API limit). */
export const DEFAULT_EVENTS_PER_MINUTE = 120;
const MAX_EVENTS_PER_MINUTE = 1_000;
/** New incidents in one notification above which they become one alert of their group (fold.ts). */
export const DEFAULT_FOLD_ABOVE = 20;
const MAX_FOLD_ABOVE = 100_000;
export const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_TIMEOUT_MS = 2 * 60_000;

/** Routing keys are 32 characters; PagerDuty refuses any other length. */
const ROUTING_KEY = /^[A-Za-z0-9]{32}$/;
const ROUTING_KEY_PROBLEM =
  'must be the 32-character integration key of a PagerDuty Events API v2 integration, ' +
  `given through an environment variable such as \${PAGERDUTY_ROUTING_KEY}`;

export const PAGERDUTY_SEVERITIES = ['critical', 'error', 'warning', 'info'] as const;
export type PagerDutySeverity = (typeof PAGERDUTY_SEVERITIES)[number];

const pagerDutySeverity = z.enum(PAGERDUTY_SEVERITIES, {
  error: `expected one of ${PAGERDUTY_SEVERITIES.join(', ')}`,
});

/** fleetwatch's three severities keep their names in PagerDuty unless the map says otherwise. */
export const DEFAULT_SEVERITY_MAP: Readonly<Record<'info' | 'warning' | 'critical', PagerDutySeverity>> = {
  info: 'info',
  warning: 'warning',
  critical: 'critical',
};

export const pagerDutyReceiverSchema = z
  .object({
    kind: z.literal('pagerduty'),
    name: receiverNameSchema,
    max_hold: maxHoldSchema,
    // The message never repeats the value: it is a secret, and a config error is printed.
    routing_key: z
      .string({ error: ROUTING_KEY_PROBLEM })
      .trim()
      .refine((value) => ROUTING_KEY.test(value), { error: ROUTING_KEY_PROBLEM }),
    /** The Events API endpoint; the public one unless a proxy (or a test's stand-in) is in between. */
    url: httpUrlSchema.default(EVENTS_API_URL),
    /** The whole request: connect, send, answer. */
    timeout: durationField(100, MAX_TIMEOUT_MS).default(DEFAULT_TIMEOUT_MS),
    severity_map: z
      .object({
        info: pagerDutySeverity.optional(),
        warning: pagerDutySeverity.optional(),
        critical: pagerDutySeverity.optional(),
      })
      .strict()
      .optional(),
    /** Events of no incident (a power change, a removal): `trigger` an alert of their own, or `skip`. */
    changes: z.enum(['trigger', 'skip'], { error: 'expected trigger or skip' }).default('trigger'),
    /** Sends per minute at most (PagerDuty allows 120 per routing key). */
    events_per_minute: countField(1, MAX_EVENTS_PER_MINUTE).default(DEFAULT_EVENTS_PER_MINUTE),
    /** More incidents new to PagerDuty (or changes) than this in one notification: one alert for them. */
    fold_above: countField(1, MAX_FOLD_ABOVE).default(DEFAULT_FOLD_ABOVE),
  })
  .strict();

export type PagerDutyReceiverConfig = z.output<typeof pagerDutyReceiverSchema>;

/** The routing key is the only secret: anyone holding it can open incidents on the service. */
export function pagerDutySecrets(config: Pick<PagerDutyReceiverConfig, 'routing_key'>): string[] {
  return [config.routing_key];
}

/** The receiver as `config check` prints it: the routing key replaced. */
export function maskPagerDutyReceiver(config: PagerDutyReceiverConfig): PagerDutyReceiverConfig {
  return { ...config, routing_key: REDACTED };
}
