import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fleetEventSchema } from '../../../src/events/catalogue.js';
import { exponentialPolicy } from '../../../src/lib/retry-policy.js';
import { DeadLetters } from '../../../src/notifiers/delivery/dead-letters.js';
import {
  discordAnswers,
  mattermostAnswers,
  SlackStandin,
  slackAnswers,
} from '../../support/slack-standin.js';
import { DeliveryHarness, notification, vpnLost } from './helpers.js';

const RECEIVER = 'ops-slack';
/** Short back-off, same shape as Slack's default (full jitter, doubling, capped, 8 attempts). */
const FAST = exponentialPolicy({ baseMs: 20, capMs: 80, attempts: 8 });

let h: DeliveryHarness;
let standin: SlackStandin;

beforeEach(async () => {
  h = await new DeliveryHarness().open();
  standin = await SlackStandin.start();
});

afterEach(async () => {
  await h.close();
  await standin.close();
});

function ntf(id: string, vehicleId: string) {
  return notification(id, RECEIVER, [vpnLost(vehicleId)]);
}

async function startSlack() {
  return h.start({
    name: RECEIVER,
    kind: 'slack',
    notifier: h.slackNotifier(RECEIVER, standin.url),
    policy: FAST,
  });
}

/** Which vehicle a Slack post is about (its fallback text names it). */
function vehicleOf(raw: string): string | undefined {
  return /veh-\d{4}/.exec(raw)?.[0];
}

describe('delivery to Slack', () => {
  it('holds the whole receiver for Retry-After on a 429, uses no attempt, then delivers in order', async () => {
    standin.enqueue(slackAnswers.rateLimited(1));
    await h.enqueue(ntf('ntf-1', 'veh-0001'), ntf('ntf-2', 'veh-0002'));
    const { watch, reports } = await startSlack();

    expect(await watch.nth('ntf-1')).toMatchObject({ state: 'completed', result: { delivered: true } });
    expect(await watch.nth('ntf-2')).toMatchObject({ state: 'completed' });
    const posts = await standin.waitFor(3);
    expect(posts.map((post) => [vehicleOf(post.raw), post.status])).toEqual([
      ['veh-0001', 429],
      ['veh-0001', 200],
      ['veh-0002', 200],
    ]);
    // Recorded by the stand-in: nothing reached Slack within the second it asked for.
    expect((posts[1]?.at ?? 0) - (posts[0]?.at ?? 0)).toBeGreaterThanOrEqual(1_000);
    expect(reports.map((report) => [report.notificationId, report.outcome.kind, report.attempt])).toEqual([
      ['ntf-1', 'throttled', 1],
      ['ntf-1', 'delivered', 1],
      ['ntf-2', 'delivered', 1],
    ]);
    const job = await h.queue(RECEIVER).getJob('ntf-1');
    expect(job?.data.delivery).toMatchObject({ attempts: 0, throttled: 1 });
  });

  it.each([
    ['400', slackAnswers.invalidPayload(), 'invalid_payload'],
    ['403', slackAnswers.actionProhibited(), 'action_prohibited'],
    ['404', slackAnswers.channelNotFound(), 'channel_not_found'],
  ])(
    'dead-letters a notification Slack rejects with %s at once, with its error',
    async (status, answer, word) => {
      standin.enqueue(answer);
      await h.enqueue(ntf('ntf-1', 'veh-0001'), ntf('ntf-2', 'veh-0002'));
      const { watch } = await startSlack();

      const failed = await watch.nth('ntf-1');
      expect(failed.state).toBe('failed');
      expect(failed.reason).toBe(`Slack answered ${status} ${word}`);
      // The next notification is not held up by it.
      expect(await watch.nth('ntf-2')).toMatchObject({ state: 'completed' });
      expect(standin.received.map((post) => vehicleOf(post.raw))).toEqual(['veh-0001', 'veh-0002']);

      const deadLetters = new DeadLetters({
        connection: h.producer,
        prefix: h.prefix,
        receivers: [RECEIVER],
      });
      try {
        expect(await deadLetters.list()).toEqual([
          expect.objectContaining({
            id: 'ntf-1',
            receiver: RECEIVER,
            reason: `Slack answered ${status} ${word}`,
            attempts: 1,
            events: 1,
            type: 'vehicle.vpn.disconnected',
            subject: 'vehicle/veh-0001',
          }),
        ]);
      } finally {
        await deadLetters.close();
      }
    },
  );

  it('disables the receiver on 410 channel_is_archived: one event, later notifications dead-lettered unsent', async () => {
    standin.enqueue(slackAnswers.channelIsArchived());
    await h.enqueue(ntf('ntf-1', 'veh-0001'), ntf('ntf-2', 'veh-0002'), ntf('ntf-3', 'veh-0003'));
    const { watch } = await startSlack();

    expect(await watch.nth('ntf-1')).toEqual({
      state: 'failed',
      reason: 'Slack answered 410 channel_is_archived (receiver disabled)',
    });
    for (const id of ['ntf-2', 'ntf-3']) {
      expect(await watch.nth(id)).toEqual({
        state: 'failed',
        reason: 'receiver disabled: Slack answered 410 channel_is_archived',
      });
    }
    expect(standin.received).toHaveLength(1);
    expect(await h.disabledReceivers.status(RECEIVER)).toMatchObject({
      kind: 'slack',
      reason: 'Slack answered 410 channel_is_archived',
      status: 410,
    });

    const events = await h.receiverEvents();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'monitor.receiver.disabled',
      subject: `receiver/${RECEIVER}`,
      data: {
        severity: 'critical',
        receiver: RECEIVER,
        kind: 'slack',
        reason: 'Slack answered 410 channel_is_archived',
      },
    });
    expect(fleetEventSchema('monitor.receiver.disabled').safeParse(events[0]).success).toBe(true);

    // Re-enabled, it is sent to again.
    await h.disabledReceivers.enable(RECEIVER);
    await h.enqueue(ntf('ntf-4', 'veh-0004'));
    expect(await watch.nth('ntf-4')).toMatchObject({ state: 'completed' });
    expect(standin.received.map((post) => vehicleOf(post.raw))).toEqual(['veh-0001', 'veh-0004']);
    expect(await h.receiverEvents()).toHaveLength(1);
  });

  it('on stop, a send still under way after the grace is aborted, uses no attempt and waits for the next start', async () => {
    standin.enqueue(slackAnswers.hang());
    await h.enqueue(ntf('ntf-1', 'veh-0001'));
    const { worker, reports } = await startSlack();
    await standin.waitFor(1);
    expect(await worker.close(100)).toBe('forced');
    const job = await h.queue(RECEIVER).getJob('ntf-1');
    expect(await job?.getState()).toBe('waiting');
    expect(job?.data.delivery).toBeUndefined();
    expect(reports.map((report) => report.outcome.kind)).toEqual(['retry']);
  });

  it('retries a 500 with back-off and delivers on the third request', async () => {
    standin.enqueue(slackAnswers.rollupError(), slackAnswers.rollupError());
    await h.enqueue(ntf('ntf-1', 'veh-0001'), ntf('ntf-2', 'veh-0002'));
    const { watch, reports } = await startSlack();

    expect(await watch.nth('ntf-1')).toMatchObject({
      state: 'completed',
      result: { delivered: true, attempt: 3 },
    });
    expect(await watch.nth('ntf-2')).toMatchObject({ state: 'completed' });
    expect(standin.received.map((post) => [vehicleOf(post.raw), post.status])).toEqual([
      ['veh-0001', 500],
      ['veh-0001', 500],
      ['veh-0001', 200],
      ['veh-0002', 200],
    ]);
    expect(reports.map((report) => [report.outcome.kind, report.attempt])).toEqual([
      ['retry', 1],
      ['retry', 2],
      ['delivered', 3],
      ['delivered', 1],
    ]);
    // Guarantee 5: the webhook URL (a credential) is in no reason.
    const token = standin.url.split('/').at(-1) as string;
    expect(JSON.stringify(reports)).not.toContain(token);
  });
});

describe('delivery to Slack-compatible chats', () => {
  it('holds a Discord receiver for the retry_after of its 429, then delivers in order', async () => {
    const discord = await SlackStandin.start('discord');
    try {
      discord.enqueue(discordAnswers.rateLimited(1.2));
      await h.enqueue(ntf('ntf-1', 'veh-0001'), ntf('ntf-2', 'veh-0002'));
      const { watch, reports } = await h.start({
        name: RECEIVER,
        kind: 'slack',
        notifier: h.slackNotifier(RECEIVER, discord.url, 'discord'),
        policy: FAST,
      });
      expect(await watch.nth('ntf-1')).toMatchObject({ state: 'completed' });
      expect(await watch.nth('ntf-2')).toMatchObject({ state: 'completed' });
      const posts = await discord.waitFor(3);
      expect(posts.map((post) => [vehicleOf(post.raw), post.status, post.problems])).toEqual([
        ['veh-0001', 429, []],
        ['veh-0001', 200, []],
        ['veh-0002', 200, []],
      ]);
      // Recorded by the stand-in: nothing reached it within the 1.2 s it asked for.
      expect((posts[1]?.at ?? 0) - (posts[0]?.at ?? 0)).toBeGreaterThanOrEqual(1_200);
      expect(reports.map((report) => [report.outcome.kind, report.attempt])).toEqual([
        ['throttled', 1],
        ['delivered', 1],
        ['delivered', 1],
      ]);
    } finally {
      await discord.close();
    }
  });

  it('disables a Mattermost receiver whose webhook was deleted', async () => {
    const mattermost = await SlackStandin.start('mattermost');
    try {
      mattermost.enqueue(mattermostAnswers.invalidWebhook());
      await h.enqueue(ntf('ntf-1', 'veh-0001'), ntf('ntf-2', 'veh-0002'));
      const { watch } = await h.start({
        name: RECEIVER,
        kind: 'slack',
        notifier: h.slackNotifier(RECEIVER, mattermost.url, 'mattermost'),
        policy: FAST,
      });
      const reason = 'Mattermost answered 400 web.incoming_webhook.invalid.app_error (Invalid webhook.)';
      expect(await watch.nth('ntf-1')).toEqual({ state: 'failed', reason: `${reason} (receiver disabled)` });
      expect(await watch.nth('ntf-2')).toEqual({ state: 'failed', reason: `receiver disabled: ${reason}` });
      expect(mattermost.received).toHaveLength(1);
      expect(await h.disabledReceivers.status(RECEIVER)).toMatchObject({
        kind: 'slack',
        reason,
        status: 400,
      });
    } finally {
      await mattermost.close();
    }
  });
});
