import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../../src/log/logger.js';
import { SecretRegistry } from '../../../../src/log/secrets.js';
import type { DeliveryOutcome, Notifier } from '../../../../src/notifiers/notifier.js';
import type { SlackReceiverConfig } from '../../../../src/notifiers/receivers/slack/config.js';
import { slackNotifierFactory } from '../../../../src/notifiers/receivers/slack/index.js';
import {
  SlackStandin,
  type StandinAnswer,
  slackAnswers,
  validateSlackPayload,
} from '../../../support/slack-standin.js';
import { notification, vehicles, vpnLost } from './fixtures.js';

let standin: SlackStandin;
let lines: string[];
let outcomes: DeliveryOutcome[];
let notifiers: Notifier[];

beforeEach(async () => {
  standin = await SlackStandin.start();
  lines = [];
  outcomes = [];
  notifiers = [];
});

afterEach(async () => {
  await Promise.all(notifiers.map((notifier) => notifier.close?.()));
  await standin.close();
  // Guarantee 5: neither the URL nor its secret last segment shows in any reason or log line.
  const token = standin.url.split('/').at(-1) as string;
  for (const text of [...lines, ...outcomes.map((outcome) => JSON.stringify(outcome))]) {
    expect(text).not.toContain(standin.url);
    expect(text).not.toContain(token);
  }
});

/**
 * A notifier on the stand-in. Its logger scrubs with a registry of its own that knows no secret,
 * so a URL in a log line would show: nothing but the notifier keeps it out.
 */
function slackNotifier(
  overrides: Partial<Record<keyof SlackReceiverConfig, unknown>> = {},
  consoleUrl?: string,
): Notifier {
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const logger = createLogger({ destination, format: 'json', level: 'debug', secrets: new SecretRegistry() });
  const config = slackNotifierFactory.configSchema.parse({
    kind: 'slack',
    name: 'ops-slack',
    url: standin.url,
    ...overrides,
  });
  const notifier = slackNotifierFactory.create(config, {
    logger,
    secrets: new SecretRegistry(),
    ...(consoleUrl ? { consoleUrl } : {}),
  });
  notifiers.push(notifier);
  return notifier;
}

async function deliver(notifier: Notifier, events = [vpnLost('veh-0003')], signal?: AbortSignal) {
  const outcome = await notifier.deliver(notification(events), { attempt: 1, signal });
  outcomes.push(outcome);
  return outcome;
}

describe('SlackNotifier delivery', () => {
  it('posts the Block Kit message and reports 200 as delivered', async () => {
    const notifier = slackNotifier({ username: 'fleetwatch', channel: '#fleet', icon_emoji: ':robot_face:' });
    expect(await deliver(notifier)).toEqual({ kind: 'delivered', status: 200 });
    const [post] = await standin.waitFor(1);
    expect(post?.problems).toEqual([]);
    expect(post?.headers['content-type']).toBe('application/json');
    expect(post?.payload).toMatchObject({
      text: ':large_orange_circle: veh-0003 is off the VPN: connected → disconnected',
      username: 'fleetwatch',
      channel: '#fleet',
      icon_emoji: ':robot_face:',
      unfurl_links: false,
      blocks: expect.arrayContaining([expect.objectContaining({ type: 'header' })]),
    });
    expect(lines.some((line) => line.includes('slack message delivered'))).toBe(true);
  });

  it('links into the console when console.url is set', async () => {
    expect(await deliver(slackNotifier({}, 'https://fleetwatch.example.com'))).toMatchObject({
      kind: 'delivered',
    });
    const [post] = await standin.waitFor(1);
    expect(post?.problems).toEqual([]);
    expect(post?.raw).toContain('<https://fleetwatch.example.com/#/vehicle/veh-0003|vehicle veh-0003>');
  });

  it('delivers groups of 40 and 500 that pass the stand-in validator', async () => {
    const notifier = slackNotifier();
    expect(await deliver(notifier, vehicles(40))).toMatchObject({ kind: 'delivered' });
    expect(await deliver(notifier, vehicles(500))).toMatchObject({ kind: 'delivered' });
    const posts = await standin.waitFor(2);
    expect(posts.map((post) => [post.status, post.problems])).toEqual([
      [200, []],
      [200, []],
    ]);
    expect(JSON.stringify(posts[1]?.payload)).toContain('…and 400 more');
  });

  it.each([
    ['invalid_payload', slackAnswers.invalidPayload(), 'rejected', 400],
    ['user_not_found', slackAnswers.userNotFound(), 'rejected', 400],
    ['action_prohibited', slackAnswers.actionProhibited(), 'rejected', 403],
    ['channel_not_found', slackAnswers.channelNotFound(), 'rejected', 404],
    ['channel_is_archived', slackAnswers.channelIsArchived(), 'gone', 410],
    ['rollup_error', slackAnswers.rollupError(), 'retry', 500],
  ] as Array<[string, StandinAnswer, DeliveryOutcome['kind'], number]>)(
    '%s is %s',
    async (word, answer, kind, status) => {
      standin.enqueue(answer);
      const outcome = await deliver(slackNotifier());
      expect(outcome).toEqual({ kind, status, reason: `Slack answered ${status} ${word}` });
      expect(lines.some((line) => line.includes('slack delivery failed') && line.includes(word))).toBe(true);
    },
  );

  it.each([
    ['7', 7_000],
    [undefined, 1_000],
    ['garbage', 1_000],
    ['100000', 100_000_000],
  ])('429 with Retry-After %j is throttled for %d ms', async (retryAfter, ms) => {
    standin.enqueue(slackAnswers.rateLimited(retryAfter));
    const outcome = await deliver(slackNotifier());
    expect(outcome).toEqual({
      kind: 'throttled',
      status: 429,
      retryAfterMs: ms,
      reason: `Slack answered 429 rate_limited; retry after ${ms} ms`,
    });
  });

  it('keeps each concurrent delivery’s answer to itself', async () => {
    const notifier = slackNotifier();
    standin.enqueue(slackAnswers.rateLimited(2), slackAnswers.rateLimited(3));
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, index) => deliver(notifier, [vpnLost(`veh-${index}`)])),
    );
    const throttled = results.filter((outcome) => outcome.kind === 'throttled');
    expect(throttled.map((outcome) => outcome.retryAfterMs).sort()).toEqual([2_000, 3_000]);
    expect(results.filter((outcome) => outcome.kind === 'delivered')).toHaveLength(4);
    const posts = await standin.waitFor(6);
    expect(posts.every((post) => typeof post.at === 'number')).toBe(true);
  });

  it('gives up after its time-out and asks for a retry', async () => {
    standin.enqueue(slackAnswers.hang());
    const started = Date.now();
    const outcome = await deliver(slackNotifier({ timeout: '250ms' }));
    expect(outcome).toEqual({ kind: 'retry', reason: 'no answer from Slack within 250 ms' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(Date.now() - started).toBeLessThan(3_000);
    await standin.waitFor(1);
  });

  it('stops when the delivery is aborted', async () => {
    standin.enqueue(slackAnswers.hang());
    const controller = new AbortController();
    const pending = deliver(slackNotifier(), undefined, controller.signal);
    await standin.waitFor(1);
    controller.abort();
    expect(await pending).toEqual({ kind: 'retry', reason: 'delivery aborted before Slack answered' });
    expect(await deliver(slackNotifier(), undefined, controller.signal)).toEqual({
      kind: 'retry',
      reason: 'delivery aborted before sending',
    });
  });

  it('asks for a retry when Slack cannot be reached', async () => {
    const notifier = slackNotifier();
    await standin.close();
    const outcome = await deliver(notifier);
    expect(outcome.kind).toBe('retry');
    expect(outcome).toMatchObject({ reason: expect.stringMatching(/^could not reach Slack: fetch failed/) });
  });

  it('treats an unknown webhook (404 no_service) as gone', async () => {
    const revoked = standin.url.replace(/[^/]+$/, 'revokedrevokedrevoked');
    const outcome = await deliver(slackNotifier({ url: revoked }));
    expect(outcome).toEqual({ kind: 'gone', status: 404, reason: 'Slack answered 404 no_service' });
    expect(JSON.stringify(outcome)).not.toContain('revokedrevokedrevoked');
  });

  it('scrubs the URL even when the answer repeats it', async () => {
    standin.enqueue({ status: 502, body: `upstream ${standin.url} failed` });
    const outcome = await deliver(slackNotifier());
    expect(outcome).toMatchObject({ kind: 'retry', status: 502 });
    expect(outcome).toMatchObject({ reason: expect.stringContaining('[REDACTED]') });
  });
});

describe('Slack stand-in', () => {
  async function post(body: string) {
    const response = await fetch(standin.url, { method: 'POST', body });
    return { status: response.status, text: await response.text() };
  }

  it('answers invalid_blocks when a payload breaks Slack limits, and records it', async () => {
    const blocks = Array.from({ length: 51 }, () => ({
      type: 'section',
      text: { type: 'mrkdwn', text: 'x' },
    }));
    expect(await post(JSON.stringify({ text: 'hi', blocks }))).toEqual({
      status: 400,
      text: 'invalid_blocks',
    });
    expect(
      await post(
        JSON.stringify({ blocks: [{ type: 'header', text: { type: 'plain_text', text: 'h'.repeat(151) } }] }),
      ),
    ).toEqual({ status: 400, text: 'invalid_blocks' });
    expect(await post('{not json')).toEqual({ status: 400, text: 'invalid_payload' });
    expect(await post(JSON.stringify({ text: 'fine' }))).toEqual({ status: 200, text: 'ok' });
    const received = await standin.waitFor(4);
    expect(received[0]?.problems).toEqual(['blocks: 51 > 50']);
    expect(received[1]?.problems).toEqual(['blocks[0]: text: 151 > 150 characters']);
  });

  it('checks fields, section text and the text fallback', () => {
    const field = { type: 'mrkdwn', text: 'f' };
    expect(validateSlackPayload({ blocks: [{ type: 'section', fields: Array(11).fill(field) }] })).toEqual([
      'blocks[0]: fields: 11 > 10',
    ]);
    expect(
      validateSlackPayload({
        blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'x'.repeat(3_001) } }],
      }),
    ).toEqual(['blocks[0]: text: 3001 > 3000 characters']);
    expect(validateSlackPayload({ text: 'x'.repeat(40_001) })).toEqual(['text: 40001 > 40000']);
    expect(validateSlackPayload({})).toEqual(['no_text']);
  });
});
