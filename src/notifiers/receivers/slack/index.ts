import { backoffPolicy, type ExponentialBackoff } from '../../../lib/retry-policy.js';
import type { NotifierFactory } from '../../notifier.js';
import { maskSlackReceiver, type SlackReceiverConfig, slackReceiverSchema, slackSecrets } from './config.js';
import { SlackNotifier } from './slack-notifier.js';

/**
 * How a Slack receiver's passing failures (5xx, network, time-out) are retried: Slack has no
 * schedule of its own, so exponential back-off with full jitter, base 1 s, doubling, capped at
 * 5 min, 8 attempts.
 */
export const SLACK_BACKOFF: Readonly<ExponentialBackoff> = {
  baseMs: 1_000,
  capMs: 5 * 60_000,
  attempts: 8,
};

/**
 * The `slack` receiver kind: a Slack incoming webhook, one Block Kit message per notification; or,
 * with `compatible:`, a Mattermost, Discord or Rocket.Chat webhook that takes Slack's payload, one
 * message of attachments per notification.
 */
export const slackNotifierFactory: NotifierFactory<SlackReceiverConfig> = {
  kind: 'slack',
  configSchema: slackReceiverSchema,
  create: (config, deps) => new SlackNotifier(config, deps),
  mask: maskSlackReceiver,
  secrets: slackSecrets,
  retryPolicy: (_config, overrides) => backoffPolicy(SLACK_BACKOFF, overrides),
};

export { type AttachmentMessage, buildAttachmentMessage, type SlackAttachment } from './attachments.js';
export { buildSlackMessage, type SlackBlock, type SlackMessage, type SlackMessageOptions } from './blocks.js';
export { COMPATIBLE_SERVICES, type CompatibleService, isWebhookUrl, SERVICES } from './compatible.js';
export {
  maskSlackReceiver,
  type SlackReceiverConfig,
  slackReceiverSchema,
  slackSecrets,
} from './config.js';
export { ATTACHMENT_LIMITS, SLACK_LIMITS } from './limits.js';
export { outcomeOfAnswer, parseRetryAfter } from './outcome.js';
export { SlackNotifier, type SlackNotifierOptions } from './slack-notifier.js';
