import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DeadLetterError,
  DeadLetters,
  receiversWithDeadLetters,
} from '../../../src/notifiers/delivery/dead-letters.js';
import type { DeliveredMarkerStore } from '../../../src/notifiers/delivery/delivered-markers.js';
import { schedulePolicy } from '../../../src/notifiers/receivers/webhook/retry-schedule.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';
import { newSecret } from '../receivers/webhook/helpers.js';
import { DeliveryHarness, notification, vpnLost } from './helpers.js';

const RECEIVER = 'ops-bridge';

let h: DeliveryHarness;
let receiver: WebhookReceiver;
let secret: string;

beforeEach(async () => {
  h = await new DeliveryHarness().open();
  secret = newSecret();
  receiver = await WebhookReceiver.start({ secret });
});

afterEach(async () => {
  await h.close();
  await receiver.close();
});

function ntf(id: string, vehicleId: string, offsetMs = 0) {
  return notification(id, RECEIVER, [vpnLost(vehicleId, offsetMs)]);
}

async function startWebhook(schedule: number[], markers?: DeliveredMarkerStore, tuning = {}) {
  return h.start({
    name: RECEIVER,
    kind: 'webhook',
    notifier: h.webhookNotifier(RECEIVER, receiver.url, secret),
    policy: schedulePolicy(schedule),
    tuning,
    ...(markers ? { markers } : {}),
  });
}

describe('delivery to a signed webhook', () => {
  it('a receiver down for several attempts, then back, gets everything once, in order', async () => {
    receiver.respondWith(500, 500, 503, 500);
    // Two vehicles, interleaved: each one's notifications must arrive in the order they were made.
    const queued = [
      ntf('ntf-a1', 'veh-0001', 0),
      ntf('ntf-b1', 'veh-0002', 1_000),
      ntf('ntf-a2', 'veh-0001', 2_000),
      ntf('ntf-b2', 'veh-0002', 3_000),
      ntf('ntf-a3', 'veh-0001', 4_000),
    ];
    await h.enqueue(...queued);
    const { watch, reports } = await startWebhook([0, 20, 20, 20, 20, 20]);

    for (const item of queued) expect(await watch.nth(item.id)).toMatchObject({ state: 'completed' });
    const accepted = receiver.deliveries.filter((delivery) => delivery.answer === 200);
    // Nothing overtook the notification that was failing: every failed request was for the first.
    expect(receiver.deliveries.map((delivery) => delivery.webhookId)).toEqual([
      'ntf-a1',
      'ntf-a1',
      'ntf-a1',
      'ntf-a1',
      'ntf-a1',
      'ntf-b1',
      'ntf-a2',
      'ntf-b2',
      'ntf-a3',
    ]);
    expect(accepted.map((delivery) => delivery.webhookId)).toEqual(queued.map((item) => item.id));
    expect(new Set(accepted.map((delivery) => delivery.webhookId)).size).toBe(queued.length);
    expect(receiver.uniqueEvents().map((event) => event.id)).toEqual(
      queued.map((item) => item.events[0]?.id),
    );
    expect(reports.filter((report) => report.notificationId === 'ntf-a1').map((r) => r.attempt)).toEqual([
      1, 2, 3, 4, 5,
    ]);
  });

  it('honours a Retry-After on a 503 as a hold that uses no attempt', async () => {
    receiver.respondWith({ status: 503, headers: { 'retry-after': '1' } });
    await h.enqueue(ntf('ntf-1', 'veh-0001'));
    // One attempt only: had the 503 counted, the notification would be a dead letter.
    const { watch, reports } = await startWebhook([0]);

    expect(await watch.nth('ntf-1')).toMatchObject({ state: 'completed' });
    const [first, second] = receiver.deliveries;
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(1_000);
    expect(reports.map((report) => [report.outcome.kind, report.attempt])).toEqual([
      ['throttled', 1],
      ['delivered', 1],
    ]);
  });

  it('dead-letters after the last attempt with the last reason; a replay delivers exactly once; purge removes', async () => {
    receiver.respondWith(500, 502, 500);
    await h.enqueue(ntf('ntf-1', 'veh-0001'));
    const { watch } = await startWebhook([0, 20, 20]);

    const failed = await watch.nth('ntf-1');
    expect(failed).toEqual({ state: 'failed', reason: 'gave up after 3 attempts: HTTP 500' });
    expect(receiver.deliveries).toHaveLength(3);

    const deadLetters = new DeadLetters({
      connection: h.producer,
      prefix: h.prefix,
      receivers: [RECEIVER],
      disabledReceivers: h.disabledReceivers,
    });
    try {
      const [letter] = await deadLetters.list();
      expect(letter).toMatchObject({
        id: 'ntf-1',
        receiver: RECEIVER,
        reason: 'gave up after 3 attempts: HTTP 500',
        attempts: 3,
      });
      expect(Date.parse(letter?.failedAt ?? '')).toBeGreaterThan(0);
      expect(await receiversWithDeadLetters(h.producer, h.prefix)).toEqual([RECEIVER]);

      // Replay: attempts start over; the receiver is back (200).
      await deadLetters.replay('ntf-1');
      expect(await watch.nth('ntf-1', 2)).toMatchObject({ state: 'completed' });
      expect(receiver.deliveries.map((delivery) => delivery.answer)).toEqual([500, 502, 500, 200]);

      // A second replay of the same id sends nothing: it is not a dead letter any more.
      await expect(deadLetters.replay('ntf-1')).rejects.toMatchObject({
        problem: 'not_dead',
        message: 'ntf-1 is not a dead letter any more (it is delivered)',
      });
      expect(await h.queue(RECEIVER).getJobState('ntf-1')).toBe('completed');
      expect(await deadLetters.list()).toEqual([]);

      // Two replays racing: exactly one moves the letter.
      receiver.respondWith(400);
      await h.enqueue(ntf('ntf-2', 'veh-0002'));
      expect(await watch.nth('ntf-2')).toMatchObject({ state: 'failed', reason: 'HTTP 400' });
      const raced = await Promise.allSettled([deadLetters.replay('ntf-2'), deadLetters.replay('ntf-2')]);
      expect(raced.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
      const lost = raced.find((result) => result.status === 'rejected');
      expect((lost as PromiseRejectedResult).reason).toBeInstanceOf(DeadLetterError);
      expect(await watch.nth('ntf-2', 2)).toMatchObject({ state: 'completed' });
      expect(receiver.deliveries.filter((delivery) => delivery.webhookId === 'ntf-2')).toHaveLength(2);

      // Purge.
      receiver.respondWith(400);
      await h.enqueue(ntf('ntf-3', 'veh-0003'));
      expect(await watch.nth('ntf-3')).toMatchObject({ state: 'failed' });
      expect((await deadLetters.list()).map((entry) => entry.id)).toEqual(['ntf-3']);
      expect(await deadLetters.purge('ntf-3')).toMatchObject({ id: 'ntf-3', receiver: RECEIVER });
      expect(await deadLetters.list()).toEqual([]);
      await expect(deadLetters.purge('ntf-3')).rejects.toMatchObject({ problem: 'not_found' });
      await expect(deadLetters.replay('nope')).rejects.toMatchObject({ problem: 'not_found' });
    } finally {
      await deadLetters.close();
    }
  });

  it("fleetwatch's own trouble (Redis) holds the receiver without using an attempt; it gives up after 5", async () => {
    let failures = 2;
    const flaky: DeliveredMarkerStore = {
      has: async (name, id) => {
        if (id === 'ntf-bad' || failures-- > 0) throw new Error('Connection is closed.');
        return h.markers.has(name, id);
      },
      mark: (name, id) => h.markers.mark(name, id),
    };
    await h.enqueue(ntf('ntf-1', 'veh-0001'), ntf('ntf-bad', 'veh-0002'), ntf('ntf-2', 'veh-0003'));
    const { watch, reports } = await startWebhook([0], flaky);

    expect(await watch.nth('ntf-1')).toMatchObject({ state: 'completed', result: { attempt: 1 } });
    expect(await watch.nth('ntf-bad')).toEqual({
      state: 'failed',
      reason: 'delivery failed 5 times in fleetwatch itself: Connection is closed.',
    });
    expect(await watch.nth('ntf-2')).toMatchObject({ state: 'completed' });
    expect(receiver.deliveries.map((delivery) => delivery.webhookId)).toEqual(['ntf-1', 'ntf-2']);
    expect(reports).toHaveLength(2);
  });

  it('a worker killed after the receiver accepted but before completing does not make the next one send again', async () => {
    // Replica A writes the delivered marker and then freezes, as if SIGKILLed right there.
    let frozen = false;
    let thaw: () => void = () => {};
    const freezing: DeliveredMarkerStore = {
      has: (name, id) => h.markers.has(name, id),
      mark: async (name, id) => {
        await h.markers.mark(name, id);
        frozen = true;
        await new Promise<void>((resolve) => {
          thaw = resolve;
        });
      },
    };
    const tuning = { lockDuration: 400, stalledInterval: 200, maxStalledCount: 2 };
    await h.enqueue(ntf('ntf-1', 'veh-0001'), ntf('ntf-2', 'veh-0002'));
    const a = await startWebhook([0], freezing, tuning);
    await receiver.waitFor(1);
    while (!frozen) await new Promise((resolve) => setImmediate(resolve));
    // Killed: it renews no lock and completes nothing from here on.
    const killing = a.worker.worker.close(true);

    // Replica B takes the stalled job once its lock has expired, finds the marker, sends nothing.
    const b = await startWebhook([0], undefined, tuning);
    expect(await b.watch.nth('ntf-1')).toEqual({ state: 'completed', result: { delivered: 'earlier' } });
    expect(await b.watch.nth('ntf-2')).toMatchObject({ state: 'completed', result: { delivered: true } });
    expect(receiver.deliveries.map((delivery) => delivery.webhookId)).toEqual(['ntf-1', 'ntf-2']);
    thaw();
    await killing;
  });
});
