import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../../src/log/logger.js';
import { SecretRegistry } from '../../../../src/log/secrets.js';
import type { DeliveryOutcome, Notifier } from '../../../../src/notifiers/notifier.js';
import { buildAttachmentMessage } from '../../../../src/notifiers/receivers/slack/attachments.js';
import { SERVICES } from '../../../../src/notifiers/receivers/slack/compatible.js';
import { slackNotifierFactory } from '../../../../src/notifiers/receivers/slack/index.js';
import {
  DISCORD_MARKDOWN,
  MATTERMOST_MARKDOWN,
  ROCKETCHAT_MARKDOWN,
} from '../../../../src/notifiers/receivers/slack/markup.js';
import {
  discordAnswers,
  mattermostAnswers,
  rocketchatAnswers,
  SlackStandin,
  type StandinAnswer,
  type StandinService,
  validateAttachmentsPayload,
} from '../../../support/slack-standin.js';
import { notification, vehicles, vpnBack, vpnLost } from './fixtures.js';

const MATTERMOST_URL = 'https://chat.example.com/hooks/xi7eq1g3wjfmdq8o5ky9r6ufzc';
const DISCORD_URL =
  'https://discord.com/api/webhooks/1234567890123456789/aBcDeFgHiJkLmNoPqRsTuVwXyZ_0123456789-abcdefghijkl';
const ROCKETCHAT_URL =
  'https://rocket.example.com/hooks/Fb4bGZc8tjyqkfPkM/kJ8WH9sBcGqA4zNqgN2h3PnRtEbf7Xy5ZcMdWvKuLsT';
const SLACK_URL = 'https://hooks.slack.com/services/T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX';

function problems(input: Record<string, unknown>): string[] {
  const result = slackNotifierFactory.configSchema.safeParse({ kind: 'slack', name: 'chat', ...input });
  return result.success
    ? []
    : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

describe('compatible: the service behind a slack receiver', () => {
  it.each([
    ['mattermost', MATTERMOST_URL],
    ['mattermost', 'https://example.org/chat/hooks/xi7eq1g3wjfmdq8o5ky9r6ufzc'],
    ['discord', DISCORD_URL],
    ['discord', `${DISCORD_URL}/slack`],
    ['discord', DISCORD_URL.replace('discord.com', 'discordapp.com')],
    ['rocketchat', ROCKETCHAT_URL],
    ['slack', SLACK_URL],
  ])('%s takes %s', (compatible, url) => {
    expect(problems({ compatible, url })).toEqual([]);
  });

  it('keeps a plain slack receiver to Slack URLs, and says how to post elsewhere', () => {
    for (const url of [MATTERMOST_URL, DISCORD_URL, ROCKETCHAT_URL]) {
      const found = problems({ url });
      expect(found).toHaveLength(1);
      expect(found[0]).toMatch(
        /^url: must be a Slack incoming-webhook URL \(https:\/\/hooks\.slack\.com\/services\//,
      );
      expect(found[0]).toContain('set compatible: mattermost, discord or rocketchat');
      expect(found[0]).not.toContain(url);
    }
  });

  it.each([
    [
      'mattermost',
      SLACK_URL,
      'url: with compatible: mattermost, must be a Mattermost incoming-webhook URL (https://<your server>/hooks/<key>)',
    ],
    [
      'mattermost',
      'http://chat.example.com/hooks/xi7eq1g3wjfmdq8o5ky9r6ufzc',
      'url: with compatible: mattermost',
    ],
    [
      'discord',
      'https://evil.example.com/api/webhooks/1234567890123456789/aBcDeFgHiJkLmNoPqRsTuVwXyZ',
      'url: with compatible: discord, must be a Discord webhook URL (https://discord.com/api/webhooks/<id>/<token>, with or without /slack)',
    ],
    ['discord', 'https://discord.com/api/channels/123/messages', 'url: with compatible: discord'],
    [
      'rocketchat',
      MATTERMOST_URL,
      'url: with compatible: rocketchat, must be a Rocket.Chat incoming-webhook URL (https://<your server>/hooks/<integration id>/<token>)',
    ],
  ])('%s refuses %s, naming the field and the shape', (compatible, url, message) => {
    const found = problems({ compatible, url });
    expect(found).toHaveLength(1);
    expect(found[0]?.startsWith(message)).toBe(true);
    expect(found[0]).not.toContain(url);
  });

  it('refuses an unknown service and the options a service ignores', () => {
    expect(problems({ compatible: 'teams', url: SLACK_URL })[0]).toMatch(
      /^compatible: .*"slack".*"mattermost".*"discord".*"rocketchat"/,
    );
    expect(
      problems({ compatible: 'discord', url: DISCORD_URL, channel: '#ops', icon_emoji: ':robot_face:' }),
    ).toEqual([
      'channel: Discord ignores channel; remove it (compatible: discord)',
      'icon_emoji: Discord ignores icon_emoji; remove it (compatible: discord)',
    ]);
  });

  it('posts Discord payloads below /slack and keeps its token secret', () => {
    expect(SERVICES.discord.endpoint(DISCORD_URL)).toBe(`${DISCORD_URL}/slack`);
    expect(SERVICES.discord.endpoint(`${DISCORD_URL}/slack`)).toBe(`${DISCORD_URL}/slack`);
    expect(SERVICES.discord.endpoint(`${DISCORD_URL}?thread_id=42`)).toBe(
      `${DISCORD_URL}/slack?thread_id=42`,
    );
    const config = slackNotifierFactory.configSchema.parse({
      kind: 'slack',
      name: 'chat',
      compatible: 'discord',
      url: `${DISCORD_URL}/slack`,
    });
    expect(slackNotifierFactory.secrets(config)).toEqual([
      `${DISCORD_URL}/slack`,
      DISCORD_URL.split('/').at(-1),
    ]);
  });
});

describe('attachments: the message for services that do not draw Block Kit', () => {
  it('carries the same content as colored attachments in the service markup, no blocks', () => {
    const message = buildAttachmentMessage(notification(vehicles(3)), MATTERMOST_MARKDOWN, {
      consoleUrl: 'https://fleetwatch.example.com',
    });
    expect(message).not.toHaveProperty('blocks');
    expect(validateAttachmentsPayload(message)).toEqual([]);
    const [attachment] = message.attachments;
    expect(attachment).toMatchObject({ color: '#f2a100', title: '🟠 3 vehicles are off the VPN' });
    expect(attachment?.fields).toContainEqual({
      title: 'Event',
      value: '`vehicle.vpn.disconnected`',
      short: true,
    });
    expect(attachment?.fields).toContainEqual({
      title: 'State',
      value: 'connected → disconnected',
      short: true,
    });
    expect(attachment?.text).toContain('• `veh-0001` · since 2026-03-04 09:59:00 UTC');
    expect(attachment?.text).toContain(
      '🔗 console: [incidents](https://fleetwatch.example.com/#/incidents) · [silence](',
    );
  });

  it('shows resolutions as their own green attachment', () => {
    const message = buildAttachmentMessage(
      notification([...vehicles(2), vpnBack('veh-0009', 9)]),
      DISCORD_MARKDOWN,
    );
    expect(message.attachments.map((attachment) => [attachment.color, attachment.title])).toEqual([
      ['#f2a100', '🟠 2 vehicles are off the VPN'],
      ['#2eb67d', '✅ Resolved: veh-0009 is back on the VPN: disconnected → connected after 3m 05s'],
    ]);
    // Discord renders `<t:…>` in the reader's time zone; its bold is `**`.
    expect(message.attachments[0]?.text).toMatch(/since <t:\d+:f>/);
    expect(validateAttachmentsPayload(message)).toEqual([]);
  });

  it('marks up for each service and keeps outside text inert: no mention, no formatting', () => {
    const mean = vpnLost('@here **x** [a](b)');
    const reminder = { firstNotifiedAt: '2026-03-04T08:00:00.000Z', count: 2 };
    for (const [markup, bold] of [
      [MATTERMOST_MARKDOWN, '**'],
      [ROCKETCHAT_MARKDOWN, '*'],
    ] as const) {
      const message = buildAttachmentMessage(notification([mean], { reminder }), markup);
      const text = message.attachments[0]?.text ?? '';
      expect(text).toContain(`🔁 ${bold}Still firing (reminder 2)${bold}`);
      // Outside code spans (in which nothing is parsed, and ids stay as they are to copy them).
      const prose = JSON.stringify(message).replace(/`[^`]*`/g, '');
      expect(prose).not.toMatch(/@here/);
      expect(prose).toContain('@\u2060here');
      expect(message.attachments[0]?.title).toContain('@\u2060here **x** [a](b)');
      expect(validateAttachmentsPayload(message)).toEqual([]);
    }
    const single = buildAttachmentMessage(
      notification([{ ...mean, data: { ...mean.data, summary: '*bold* _it_' } }]),
      MATTERMOST_MARKDOWN,
    );
    expect(single.attachments[0]?.text?.split('\n')[0]).toBe('\\*bold\\* \\_it\\_');
    expect(single.attachments[0]?.fields?.[0]).toEqual({
      title: 'Vehicle',
      value: '`@here **x** [a](b)`',
      short: true,
    });
  });

  it('stays within the embed limits for any size, both parts listed as far as they fit', () => {
    for (const count of [1, 40, 500, 3_000]) {
      const events = [...vehicles(count), ...vehicles(count, vpnBack)];
      const message = buildAttachmentMessage(notification(events), DISCORD_MARKDOWN, {
        maxListed: Number.POSITIVE_INFINITY,
        consoleUrl: 'https://fleetwatch.example.com',
      });
      expect(validateAttachmentsPayload(message)).toEqual([]);
      expect(message.attachments).toHaveLength(2);
      if (count >= 500) {
        for (const attachment of message.attachments) expect(attachment.text).toMatch(/_…and \d+ more_/);
      }
    }
    const long = 'x'.repeat(10_000);
    const huge = buildAttachmentMessage(
      notification([
        {
          ...vpnLost(long),
          id: long,
          source: long,
          data: { ...vpnLost(long).data, summary: long, comment: long },
        },
      ]),
      MATTERMOST_MARKDOWN,
    );
    expect(validateAttachmentsPayload(huge)).toEqual([]);
  });
});

// --- delivery against stand-ins that answer as each service documents ---------------------------

let standin: SlackStandin | undefined;
const notifiers: Notifier[] = [];
const outcomes: DeliveryOutcome[] = [];
const lines: string[] = [];

afterEach(async () => {
  await Promise.all(notifiers.splice(0).map((notifier) => notifier.close?.()));
  const current = standin;
  standin = undefined;
  await current?.close();
  // The URL and its token never show in a reason or a log line.
  if (current) {
    const token = current.url.split('/').at(-1) as string;
    for (const text of [...lines, ...outcomes.map((outcome) => JSON.stringify(outcome))]) {
      expect(text).not.toContain(token);
    }
  }
  lines.length = 0;
  outcomes.length = 0;
});

async function chat(service: Exclude<StandinService, 'slack'>, overrides: Record<string, unknown> = {}) {
  standin = await SlackStandin.start(service);
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const config = slackNotifierFactory.configSchema.parse({
    kind: 'slack',
    name: `${service}-chat`,
    compatible: service,
    url: standin.url,
    ...overrides,
  });
  const notifier = slackNotifierFactory.create(config, {
    logger: createLogger({ destination, format: 'json', level: 'debug', secrets: new SecretRegistry() }),
    secrets: new SecretRegistry(),
    consoleUrl: 'https://fleetwatch.example.com',
  });
  notifiers.push(notifier);
  const deliver = async (events = [vpnLost('veh-0003')]) => {
    const outcome = await notifier.deliver(notification(events), { attempt: 1 });
    outcomes.push(outcome);
    return outcome;
  };
  return { standin, deliver };
}

describe.each(['mattermost', 'discord', 'rocketchat'] as const)('a %s receiver', (service) => {
  it('posts attachments the service draws whole, for one event, a group and a mixed one', async () => {
    const { standin, deliver } = await chat(service, { username: 'fleetwatch' });
    expect(await deliver()).toMatchObject({ kind: 'delivered', status: 200 });
    expect(await deliver(vehicles(500))).toMatchObject({ kind: 'delivered' });
    expect(await deliver([...vehicles(3), vpnBack('veh-0009', 9)])).toMatchObject({ kind: 'delivered' });
    const posts = await standin.waitFor(3);
    expect(posts.map((post) => [post.status, post.problems])).toEqual([
      [200, []],
      [200, []],
      [200, []],
    ]);
    expect(posts[0]?.payload).toMatchObject({
      username: 'fleetwatch',
      attachments: [{ color: '#f2a100', title: '🟠 veh-0003 is off the VPN: connected → disconnected' }],
    });
    expect(posts[0]?.payload).not.toHaveProperty('blocks');
    expect(posts[0]?.raw).toContain('[vehicle veh-0003](https://fleetwatch.example.com/#/vehicle/veh-0003)');
    // As many lines as the strictest service's 4,096 characters of text hold; the rest counted.
    expect(JSON.stringify(posts[1]?.payload)).toMatch(/_…and 4\d\d more_/);
    expect(
      (posts[2]?.payload as { attachments: { color: string }[] } | undefined)?.attachments.map(
        (a) => a.color,
      ),
    ).toEqual(['#f2a100', '#2eb67d']);
  });
});

describe('answers of each service', () => {
  it.each([
    [
      'mattermost',
      mattermostAnswers.invalidWebhook(),
      'gone',
      400,
      'Mattermost answered 400 web.incoming_webhook.invalid.app_error (Invalid webhook.)',
    ],
    [
      'mattermost',
      mattermostAnswers.disabled(),
      'gone',
      501,
      'Mattermost answered 501 web.incoming_webhook.disabled.app_error',
    ],
    [
      'mattermost',
      mattermostAnswers.parseError(),
      'rejected',
      400,
      'Mattermost answered 400 model.incoming_hook.parse_data.app_error (Unable to parse incoming data.)',
    ],
    ['discord', discordAnswers.unknownWebhook(), 'gone', 404, 'Discord answered 404 10015 Unknown Webhook'],
    [
      'discord',
      discordAnswers.invalidToken(),
      'gone',
      401,
      'Discord answered 401 50027 Invalid Webhook Token',
    ],
    [
      'discord',
      discordAnswers.invalidFormBody(),
      'rejected',
      400,
      'Discord answered 400 50035 Invalid Form Body',
    ],
    [
      'rocketchat',
      rocketchatAnswers.unknownIntegration(),
      'gone',
      404,
      'Rocket.Chat answered 404 Invalid integration id or token provided.',
    ],
    [
      'rocketchat',
      rocketchatAnswers.disabled(),
      'retry',
      503,
      'Rocket.Chat answered 503 Service Unavailable',
    ],
  ] as Array<[Exclude<StandinService, 'slack'>, StandinAnswer, DeliveryOutcome['kind'], number, string]>)(
    '%s: %j is %s',
    async (service, answer, kind, status, reason) => {
      const { standin, deliver } = await chat(service);
      standin.enqueue(answer);
      const outcome = await deliver();
      expect(outcome).toMatchObject({ kind, status });
      expect(outcome.kind !== 'delivered' && outcome.reason.startsWith(reason)).toBe(true);
    },
  );

  it('holds Mattermost for its Retry-After, Discord for its retry_after, Rocket.Chat until its window resets', async () => {
    const mattermost = await chat('mattermost');
    mattermost.standin.enqueue(mattermostAnswers.rateLimited(7));
    expect(await mattermost.deliver()).toMatchObject({ kind: 'throttled', status: 429, retryAfterMs: 7_000 });
    await mattermost.standin.close();

    const discord = await chat('discord');
    discord.standin.enqueue(discordAnswers.rateLimited(2.5));
    expect(await discord.deliver()).toMatchObject({
      kind: 'throttled',
      status: 429,
      retryAfterMs: 2_500,
      reason: 'Discord answered 429 You are being rate limited.; retry after 2500 ms',
    });
    await discord.standin.close();

    const rocketchat = await chat('rocketchat');
    rocketchat.standin.enqueue(rocketchatAnswers.rateLimited(Date.now() + 60_000, 60));
    const outcome = await rocketchat.deliver();
    expect(outcome).toMatchObject({ kind: 'throttled', status: 429 });
    // The window's end as the service set it, read after the answer arrived: never longer.
    expect(
      outcome.kind === 'throttled' && outcome.retryAfterMs <= 60_000 && outcome.retryAfterMs > 1_000,
    ).toBe(true);
  });

  it('treats an unknown Mattermost key, Discord webhook or Rocket.Chat integration as gone', async () => {
    for (const service of ['mattermost', 'discord', 'rocketchat'] as const) {
      const { standin } = await chat(service);
      const revoked = standin.url.replace(/[^/]+$/, 'revokedrevokedrevoked');
      const config = slackNotifierFactory.configSchema.parse({
        kind: 'slack',
        name: 'x',
        compatible: service,
        url: revoked,
      });
      const notifier = slackNotifierFactory.create(config, {
        logger: createLogger({ level: 'silent' }),
        secrets: new SecretRegistry(),
      });
      notifiers.push(notifier);
      const outcome = await notifier.deliver(notification([vpnLost('veh-1')]), { attempt: 1 });
      expect(outcome).toMatchObject({ kind: 'gone' });
      await standin.close();
    }
  });

  it('Discord: a Slack payload at the webhook itself is empty to Discord, which is why it goes below /slack', async () => {
    const { standin } = await chat('discord');
    const response = await fetch(standin.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(buildAttachmentMessage(notification([vpnLost('veh-1')]), DISCORD_MARKDOWN)),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ message: 'Cannot send an empty message', code: 50006 });
  });

  it('the stand-ins refuse Block Kit, as the services draw none of it', async () => {
    for (const service of ['mattermost', 'discord', 'rocketchat'] as const) {
      const { standin } = await chat(service);
      const response = await fetch(service === 'discord' ? `${standin.url}/slack` : standin.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ blocks: [{ type: 'header', text: { type: 'plain_text', text: 'x' } }] }),
      });
      expect(response.status).toBe(400);
      expect((await standin.waitFor(1))[0]?.problems).toEqual([
        'blocks: not rendered by this service',
        'no_text',
      ]);
      await standin.close();
    }
  });
});
