import { z } from 'zod';
import { durationField } from '../../../lib/fields.js';
import { REDACTED } from '../../../log/secrets.js';
import { maxHoldSchema, receiverNameSchema } from '../../notifier.js';

/** Hosts that serve Slack incoming webhooks (commercial and GovSlack). */
const WEBHOOK_HOSTS = new Set(['hooks.slack.com', 'hooks.slack-gov.com']);
/** `/services/T…/B…/<secret>`: the shape of every incoming-webhook URL Slack hands out. */
const WEBHOOK_PATH = /^\/services\/[A-Z0-9]+\/[A-Z0-9]+\/[A-Za-z0-9]+\/?$/;
/** Plain http is accepted only on loopback, where tests and rehearsals run a stand-in. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

const URL_PROBLEM =
  'must be a Slack incoming-webhook URL (https://hooks.slack.com/services/T…/B…/…), ' +
  `given through an environment variable such as \${SLACK_WEBHOOK_URL}`;

/** True for a URL Slack would hand out for an incoming webhook, or a loopback stand-in. */
export function isIncomingWebhookUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.username || url.password || url.hash) return false;
  if (url.protocol === 'http:') return LOOPBACK_HOSTS.has(url.hostname);
  return (
    url.protocol === 'https:' &&
    WEBHOOK_HOSTS.has(url.hostname) &&
    url.port === '' &&
    WEBHOOK_PATH.test(url.pathname)
  );
}

/**
 * One Slack receiver. The URL is the credential (anyone holding it can post), so it belongs in
 * the environment and reaches the file as `${SLACK_WEBHOOK_URL}`; it is registered with the secret
 * registry when the notifier is built and printed as `[REDACTED]` by `config check`. The problem
 * message never repeats the value it rejected.
 *
 * `username`, `icon_emoji`, `icon_url` and `channel` are sent with every message; Slack honours
 * them only for legacy custom-integration webhooks (an app's webhook always posts as the app, to
 * the channel chosen when it was installed).
 */
export const slackReceiverSchema = z
  .object({
    kind: z.literal('slack'),
    name: receiverNameSchema,
    max_hold: maxHoldSchema,
    url: z.string({ error: URL_PROBLEM }).trim().refine(isIncomingWebhookUrl, { error: URL_PROBLEM }),
    username: z.string().min(1).max(80).optional(),
    icon_emoji: z
      .string()
      .regex(/^:[a-z0-9_+'-]+:$/, { error: 'must be an emoji code such as :robot_face:' })
      .optional(),
    icon_url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    channel: z
      .string()
      .regex(/^[#@]?[^\s#@][^\s]*$/, { error: 'must be a channel such as #fleet-alerts' })
      .optional(),
    timeout: durationField(100, 120_000).default(10_000),
  })
  .strict();

export type SlackReceiverConfig = z.output<typeof slackReceiverSchema>;

/** The receiver as `config check` prints it: the webhook URL replaced. */
export function maskSlackReceiver(config: SlackReceiverConfig): SlackReceiverConfig {
  return { ...config, url: REDACTED };
}

/** The webhook URL is the credential; its last path segment alone is one too. */
export function slackSecrets(config: Pick<SlackReceiverConfig, 'url'>): string[] {
  const found = [config.url];
  try {
    const token = new URL(config.url).pathname.split('/').filter(Boolean).at(-1);
    if (token && token.length >= 8) found.push(token);
  } catch {
    // Not a URL: the schema stops those before a notifier is built.
  }
  return found;
}
