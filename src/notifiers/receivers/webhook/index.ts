import type { NotifierFactory } from '../../notifier.js';
import {
  maskWebhookConfig,
  type WebhookReceiverConfig,
  webhookReceiverSchema,
  webhookSecrets,
} from './config.js';
import { schedulePolicy } from './retry-schedule.js';
import { WebhookNotifier } from './webhook-notifier.js';

export type { WebhookReceiverConfig } from './config.js';
export {
  DEFAULT_RETRY_SCHEDULE_MS,
  DEFAULT_TIMEOUT_MS,
  maskWebhookConfig,
  webhookReceiverSchema,
  webhookSecrets,
} from './config.js';
export { CLOUDEVENT_BATCH_CONTENT_TYPE, CLOUDEVENT_CONTENT_TYPE, encodePayload } from './payload.js';
export { classifyAnswer, parseRetryAfter } from './response.js';
export { attemptCount, delayForAttempt, schedulePolicy } from './retry-schedule.js';
export { sign } from './signature.js';
export { WebhookNotifier, type WebhookNotifierOptions } from './webhook-notifier.js';

/**
 * Signed webhooks (Standard Webhooks, CloudEvents bodies). The notifier registers the receiver's
 * secrets; passing failures are retried on the receiver's own `retry_schedule`.
 */
export const webhookNotifierFactory: NotifierFactory<WebhookReceiverConfig> = {
  kind: 'webhook',
  configSchema: webhookReceiverSchema,
  create: (config, deps) => new WebhookNotifier(config, deps),
  mask: maskWebhookConfig,
  secrets: webhookSecrets,
  retryPolicy: (config, overrides = {}) =>
    schedulePolicy(overrides.schedule ?? config.retry_schedule, overrides.random),
};
