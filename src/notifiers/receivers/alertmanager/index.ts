import { backoffPolicy, type ExponentialBackoff } from '../../../lib/retry-policy.js';
import type { NotifierFactory } from '../../notifier.js';
import { AlertmanagerNotifier } from './alertmanager-notifier.js';
import {
  type AlertmanagerReceiverConfig,
  alertmanagerReceiverSchema,
  alertmanagerSecrets,
  maskAlertmanagerConfig,
} from './config.js';

/**
 * How a notification no peer took (5xx, network, time-out) is tried again: exponential back-off
 * with full jitter, base 1 s, doubling, capped at 5 min, 8 attempts. Firing alerts pushed before
 * are re-sent meanwhile by the re-send loop, which does not depend on this.
 */
export const ALERTMANAGER_BACKOFF: Readonly<ExponentialBackoff> = {
  baseMs: 1_000,
  capMs: 5 * 60_000,
  attempts: 8,
};

/** The `alertmanager` receiver kind: incidents as alerts, pushed to every Alertmanager peer. */
export const alertmanagerNotifierFactory: NotifierFactory<AlertmanagerReceiverConfig> = {
  kind: 'alertmanager',
  configSchema: alertmanagerReceiverSchema,
  create: (config, deps) => new AlertmanagerNotifier(config, deps),
  mask: maskAlertmanagerConfig,
  secrets: alertmanagerSecrets,
  retryPolicy: (_config, overrides) => backoffPolicy(ALERTMANAGER_BACKOFF, overrides),
};

export {
  AlertmanagerNotifier,
  type AlertmanagerNotifierOptions,
  MAX_BATCH,
  RESOLVE_WINDOW,
} from './alertmanager-notifier.js';
export { type PostableAlert, planAlerts, type StoredAlert } from './alerts.js';
export {
  type AlertmanagerReceiverConfig,
  alertmanagerReceiverSchema,
  alertmanagerSecrets,
  alertsUrl,
  maskAlertmanagerConfig,
} from './config.js';
export { batchOutcome, peerOutcome } from './outcome.js';
