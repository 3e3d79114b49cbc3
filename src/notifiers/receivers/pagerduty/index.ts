import { backoffPolicy, type ExponentialBackoff } from '../../../lib/retry-policy.js';
import type { NotifierFactory } from '../../notifier.js';
import {
  maskPagerDutyReceiver,
  type PagerDutyReceiverConfig,
  pagerDutyReceiverSchema,
  pagerDutySecrets,
} from './config.js';
import { PagerDutyNotifier } from './pagerduty-notifier.js';

/**
 * How a PagerDuty receiver's passing failures (5xx, network, time-out) are retried: exponential
 * back-off with full jitter from 2 s, doubling, capped at 5 min, 15 attempts — up to about 40 min
 * (typically half that) before the notification becomes a dead letter. A page is worth waiting for
 * through a PagerDuty disturbance, and the repeats are harmless (dedup keys).
 */
export const PAGERDUTY_BACKOFF: Readonly<ExponentialBackoff> = {
  baseMs: 2_000,
  capMs: 5 * 60_000,
  attempts: 15,
};

/** The `pagerduty` receiver kind: PagerDuty's Events API v2, one event per incident. */
export const pagerDutyNotifierFactory: NotifierFactory<PagerDutyReceiverConfig> = {
  kind: 'pagerduty',
  configSchema: pagerDutyReceiverSchema,
  create: (config, deps) => new PagerDutyNotifier(config, deps),
  mask: maskPagerDutyReceiver,
  secrets: pagerDutySecrets,
  retryPolicy: (_config, overrides) => backoffPolicy(PAGERDUTY_BACKOFF, overrides),
};

export { DEFAULT_THROTTLE_MS, pagerDutyWords, resultOfAnswer } from './answer.js';
export {
  DEFAULT_EVENTS_PER_MINUTE,
  DEFAULT_SEVERITY_MAP,
  EVENTS_API_URL,
  maskPagerDutyReceiver,
  type PagerDutyReceiverConfig,
  pagerDutyReceiverSchema,
  pagerDutySecrets,
} from './config.js';
export { boundedSummary, dedupKey, type PlannedEvent, planEvents } from './events.js';
export { SendPacer } from './pacer.js';
export { PagerDutyNotifier, type PagerDutyNotifierOptions } from './pagerduty-notifier.js';
