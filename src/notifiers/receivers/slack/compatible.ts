import {
  DISCORD_MARKDOWN,
  MATTERMOST_MARKDOWN,
  type Markup,
  ROCKETCHAT_MARKDOWN,
  SLACK_MRKDWN,
} from './markup.js';

/**
 * The chat services a `slack` receiver can post to, chosen by its `compatible:` setting: Slack
 * itself, and the services that take Slack's incoming-webhook payload. Each says which URLs are
 * its webhooks (a receiver never posts to "any URL"), where the payload goes, how it is marked up,
 * and whether it renders Block Kit:
 *
 * | service | webhook URL | renders |
 * |---|---|---|
 * | `slack` | `https://hooks.slack.com/services/T…/B…/…` (and GovSlack's `hooks.slack-gov.com`) | Block Kit |
 * | `mattermost` | `https://<server>/hooks/<key>` (self-hosted: any host) | attachments, Markdown |
 * | `discord` | `https://discord.com/api/webhooks/<id>/<token>/slack` (`/slack` added when absent) | attachments, as embeds |
 * | `rocketchat` | `https://<server>/hooks/<integration id>/<token>` (self-hosted: any host) | attachments, Markdown |
 *
 * Plain http is accepted only on loopback, where tests and rehearsals run a stand-in.
 */
export const COMPATIBLE_SERVICES = ['slack', 'mattermost', 'discord', 'rocketchat'] as const;
export type CompatibleService = (typeof COMPATIBLE_SERVICES)[number];

export interface ServiceProfile {
  /** How people write its name: reasons and log lines say `Mattermost answered 400 …`. */
  name: string;
  /** `blocks`: Block Kit; `attachments`: the same content as colored message attachments. */
  payload: 'blocks' | 'attachments';
  markup: Markup;
  /** The URL shapes it hands out, for the config problem (`url: must be …`). */
  urlProblem: string;
  /** True for a URL of this service's shape (https), checked after the shared rules. */
  acceptsUrl(url: URL): boolean;
  /** Where the payload is posted: Discord takes Slack's payload only below `/slack`. */
  endpoint(url: string): string;
  /** Options of the Slack payload this service ignores: refused in the config rather than dropped. */
  ignores: readonly string[];
}

const VIA_ENV = `given through an environment variable such as \${CHAT_WEBHOOK_URL}`;

/** Hosts that serve Slack incoming webhooks (commercial and GovSlack). */
const SLACK_HOSTS = new Set(['hooks.slack.com', 'hooks.slack-gov.com']);
/** `/services/T…/B…/<secret>`: the shape of every incoming-webhook URL Slack hands out. */
const SLACK_PATH = /^\/services\/[A-Z0-9]+\/[A-Z0-9]+\/[A-Za-z0-9]+\/?$/;
/** Mattermost's `/hooks/<key>`, below any path a self-hosted server is served under. */
const MATTERMOST_PATH = /^(\/[^/]+)*\/hooks\/[A-Za-z0-9]{8,64}\/?$/;
/** Rocket.Chat's `/hooks/<integration id>/<token>` (also with the user id between them). */
const ROCKETCHAT_PATH =
  /^(\/[^/]+)*\/hooks\/[A-Za-z0-9]{8,64}(\/[A-Za-z0-9]{8,64})?\/[A-Za-z0-9_-]{8,128}\/?$/;
/** The hosts of Discord's clients (stable, public test build, canary) and its former domain. */
const DISCORD_HOSTS = new Set(['discord.com', 'ptb.discord.com', 'canary.discord.com', 'discordapp.com']);
/** `/api[/v10]/webhooks/<snowflake id>/<token>[/slack]`. */
const DISCORD_PATH = /^\/api(\/v\d{1,2})?\/webhooks\/\d{5,25}\/[A-Za-z0-9_-]{20,200}(\/slack)?\/?$/;

export const SERVICES: Readonly<Record<CompatibleService, ServiceProfile>> = {
  slack: {
    name: 'Slack',
    payload: 'blocks',
    markup: SLACK_MRKDWN,
    urlProblem:
      'must be a Slack incoming-webhook URL (https://hooks.slack.com/services/T…/B…/…), ' +
      `given through an environment variable such as \${SLACK_WEBHOOK_URL}; ` +
      'for Mattermost, Discord or Rocket.Chat set compatible: mattermost, discord or rocketchat',
    acceptsUrl: (url) => SLACK_HOSTS.has(url.hostname) && url.port === '' && SLACK_PATH.test(url.pathname),
    endpoint: (url) => url,
    ignores: [],
  },
  mattermost: {
    name: 'Mattermost',
    payload: 'attachments',
    markup: MATTERMOST_MARKDOWN,
    urlProblem: `with compatible: mattermost, must be a Mattermost incoming-webhook URL (https://<your server>/hooks/<key>), ${VIA_ENV}`,
    acceptsUrl: (url) => MATTERMOST_PATH.test(url.pathname),
    endpoint: (url) => url,
    ignores: [],
  },
  discord: {
    name: 'Discord',
    payload: 'attachments',
    markup: DISCORD_MARKDOWN,
    urlProblem:
      'with compatible: discord, must be a Discord webhook URL ' +
      `(https://discord.com/api/webhooks/<id>/<token>, with or without /slack), ${VIA_ENV}`,
    acceptsUrl: (url) =>
      DISCORD_HOSTS.has(url.hostname) && url.port === '' && DISCORD_PATH.test(url.pathname),
    endpoint: (value) => {
      const url = new URL(value);
      if (!/\/slack\/?$/.test(url.pathname)) url.pathname = `${url.pathname.replace(/\/$/, '')}/slack`;
      return url.toString();
    },
    // Discord's Slack-compatible endpoint posts to the webhook's own channel and has no emoji avatars.
    ignores: ['channel', 'icon_emoji'],
  },
  rocketchat: {
    name: 'Rocket.Chat',
    payload: 'attachments',
    markup: ROCKETCHAT_MARKDOWN,
    urlProblem: `with compatible: rocketchat, must be a Rocket.Chat incoming-webhook URL (https://<your server>/hooks/<integration id>/<token>), ${VIA_ENV}`,
    acceptsUrl: (url) => ROCKETCHAT_PATH.test(url.pathname),
    endpoint: (url) => url,
    ignores: [],
  },
};

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** True for a webhook URL of `service`'s shape, or any path of a loopback stand-in over http. */
export function isWebhookUrl(value: string, service: CompatibleService = 'slack'): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.username || url.password || url.hash) return false;
  if (url.protocol === 'http:') return LOOPBACK_HOSTS.has(url.hostname);
  return url.protocol === 'https:' && SERVICES[service].acceptsUrl(url);
}
