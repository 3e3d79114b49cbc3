import { z } from 'zod';
import { durationField } from '../../../lib/fields.js';
import { REDACTED } from '../../../log/secrets.js';
import { maxHoldSchema, receiverNameSchema } from '../../notifier.js';
import { COMPATIBLE_SERVICES, isWebhookUrl, SERVICES } from './compatible.js';

/**
 * One Slack receiver. The URL is the credential (anyone holding it can post), so it belongs in
 * the environment and reaches the file as `${SLACK_WEBHOOK_URL}`; it is registered with the secret
 * registry when the notifier is built and printed as `[REDACTED]` by `config check`. The problem
 * message never repeats the value it rejected.
 *
 * `username`, `icon_emoji`, `icon_url` and `channel` are sent with every message; Slack honours
 * them only for legacy custom-integration webhooks (an app's webhook always posts as the app, to
 * the channel chosen when it was installed).
 *
 * `compatible` names the service behind the URL (compatible.ts): `slack` (the default) takes only
 * Slack's webhook URLs, each other value only its own service's shapes, so a URL never goes to a
 * service it was not written for; an option the service ignores is refused, not dropped.
 */
export const slackReceiverSchema = z
  .object({
    kind: z.literal('slack'),
    name: receiverNameSchema,
    max_hold: maxHoldSchema,
    compatible: z.enum(COMPATIBLE_SERVICES).default('slack'),
    // Checked against the shapes of `compatible` below.
    url: z.string({ error: SERVICES.slack.urlProblem }).trim(),
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
  .strict()
  .superRefine((config, ctx) => {
    const profile = SERVICES[config.compatible];
    if (!isWebhookUrl(config.url, config.compatible)) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: profile.urlProblem });
    }
    for (const option of profile.ignores) {
      if ((config as Record<string, unknown>)[option] === undefined) continue;
      ctx.addIssue({
        code: 'custom',
        path: [option],
        message: `${profile.name} ignores ${option}; remove it (compatible: ${config.compatible})`,
      });
    }
  });

export type SlackReceiverConfig = z.output<typeof slackReceiverSchema>;

/** The receiver as `config check` prints it: the webhook URL replaced. */
export function maskSlackReceiver(config: SlackReceiverConfig): SlackReceiverConfig {
  return { ...config, url: REDACTED };
}

/** The webhook URL is the credential; its last path segment (Discord's before `/slack`) alone is one too. */
export function slackSecrets(config: Pick<SlackReceiverConfig, 'url'>): string[] {
  const found = [config.url];
  try {
    const segments = new URL(config.url).pathname.split('/').filter(Boolean);
    const token = segments.at(-1) === 'slack' ? segments.at(-2) : segments.at(-1);
    if (token && token.length >= 8) found.push(token);
  } catch {
    // Not a URL: the schema stops those before a notifier is built.
  }
  return found;
}
