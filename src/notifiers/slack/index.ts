import type { NotifierFactory } from '../types.js';
import { maskSlackReceiver, type SlackReceiverConfig, slackReceiverSchema } from './config.js';
import { SlackNotifier } from './slack-notifier.js';

/** The `slack` receiver kind: a Slack incoming webhook, one Block Kit message per notification. */
export const slackNotifierFactory: NotifierFactory<SlackReceiverConfig> = {
  kind: 'slack',
  configSchema: slackReceiverSchema,
  create: (config, deps) => new SlackNotifier(config, deps),
  mask: maskSlackReceiver,
};

export { buildSlackMessage, type SlackBlock, type SlackMessage, type SlackMessageOptions } from './blocks.js';
export {
  isIncomingWebhookUrl,
  maskSlackReceiver,
  type SlackReceiverConfig,
  slackReceiverSchema,
} from './config.js';
export { SLACK_LIMITS } from './limits.js';
export { outcomeOfAnswer, parseRetryAfter } from './outcome.js';
export { SlackNotifier, type SlackNotifierOptions } from './slack-notifier.js';
