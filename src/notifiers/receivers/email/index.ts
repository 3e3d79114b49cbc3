import { backoffPolicy, type ExponentialBackoff } from '../../../lib/retry-policy.js';
import type { NotifierFactory } from '../../notifier.js';
import { type EmailReceiverConfig, emailReceiverSchema, emailSecrets, maskEmailConfig } from './config.js';
import { EmailNotifier } from './email-notifier.js';

export {
  DEFAULT_PORTS,
  type EmailReceiverConfig,
  emailReceiverSchema,
  emailSecrets,
  maskEmailConfig,
  parseSmarthost,
  serverOf,
} from './config.js';
export { EmailNotifier, loadNodemailer, messageIdOf } from './email-notifier.js';
export { buildEmail, type EmailMessage, type EmailMessageOptions } from './message.js';
export { isPermanentReply, outcomeOfSmtpError } from './outcome.js';

/**
 * How an email receiver's passing failures (4yz replies, TLS and network trouble, time-outs) are
 * retried: mail servers greylist (451 for a few minutes) and restart, so exponential back-off with
 * full jitter from 5 s, doubling, capped at 10 min, 10 attempts (about 40 min at the ceiling
 * before a dead letter).
 */
export const EMAIL_BACKOFF: Readonly<ExponentialBackoff> = {
  baseMs: 5_000,
  capMs: 10 * 60_000,
  attempts: 10,
};

/** The `email` receiver kind: one message per notification, over SMTP (STARTTLS or TLS). */
export const emailNotifierFactory: NotifierFactory<EmailReceiverConfig> = {
  kind: 'email',
  configSchema: emailReceiverSchema,
  create: (config, deps) => new EmailNotifier(config, deps),
  mask: maskEmailConfig,
  secrets: emailSecrets,
  retryPolicy: (_config, overrides) => backoffPolicy(EMAIL_BACKOFF, overrides),
};
