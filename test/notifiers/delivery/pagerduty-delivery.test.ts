import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exponentialPolicy } from '../../../src/lib/retry-policy.js';
import type { Notifier } from '../../../src/notifiers/notifier.js';
import { pagerDutyNotifierFactory } from '../../../src/notifiers/receivers/pagerduty/index.js';
import { PagerDutyStandin, pagerDutyAnswers } from '../../support/pagerduty-standin.js';
import { DeliveryHarness, notification, silent, vpnLost } from './helpers.js';

const RECEIVER = 'on-call';
/** Short back-off, same shape as PagerDuty's default (full jitter, doubling, capped). */
const FAST = exponentialPolicy({ baseMs: 20, capMs: 80, attempts: 5 });

let h: DeliveryHarness;
let standin: PagerDutyStandin;
let notifier: Notifier;

beforeEach(async () => {
  h = await new DeliveryHarness().open();
  standin = await PagerDutyStandin.start();
  const config = pagerDutyNotifierFactory.configSchema.parse({
    kind: 'pagerduty',
    name: RECEIVER,
    routing_key: standin.routingKey,
    url: standin.url,
    timeout: '2s',
  });
  notifier = pagerDutyNotifierFactory.create(config, { logger: silent, secrets: h.secrets });
});

afterEach(async () => {
  await h.close();
  await notifier.close?.();
  await standin.close();
});

/** The shortest `max_hold` there is: PagerDuty's 429 asks for 30 s, the hold is cut to this. */
const MAX_HOLD_MS = 1_000;

async function start() {
  return h.start({ name: RECEIVER, kind: 'pagerduty', notifier, policy: FAST, maxHoldMs: MAX_HOLD_MS });
}

describe('delivery to PagerDuty', () => {
  it('holds the receiver on a 429 (30 s cut to max_hold), uses no attempt, then delivers in order', async () => {
    standin.enqueue(pagerDutyAnswers.throttled());
    await h.enqueue(
      notification('ntf-1', RECEIVER, [vpnLost('veh-0001')]),
      notification('ntf-2', RECEIVER, [vpnLost('veh-0002')]),
    );
    const { watch, reports } = await start();

    expect(await watch.nth('ntf-1')).toMatchObject({
      state: 'completed',
      result: { delivered: true, status: 202 },
    });
    expect(await watch.nth('ntf-2')).toMatchObject({ state: 'completed' });
    expect(
      standin.received.map((item) => [(item.body as { dedup_key: string }).dedup_key, item.status]),
    ).toEqual([
      ['test/vehicle/veh-0001#vpn', 429],
      ['test/vehicle/veh-0001#vpn', 202],
      ['test/vehicle/veh-0002#vpn', 202],
    ]);
    expect(reports.map((report) => [report.notificationId, report.outcome.kind, report.attempt])).toEqual([
      ['ntf-1', 'throttled', 1],
      ['ntf-1', 'delivered', 1],
      ['ntf-2', 'delivered', 1],
    ]);
    const job = await h.queue(RECEIVER).getJob('ntf-1');
    expect(job?.data.delivery).toMatchObject({ attempts: 0, throttled: 1 });
    expect(standin.open().map((alert) => alert.dedupKey)).toEqual([
      'test/vehicle/veh-0001#vpn',
      'test/vehicle/veh-0002#vpn',
    ]);
  });

  it('retries a notification that failed half-way as a whole: one alert per incident in the end', async () => {
    standin.enqueue(pagerDutyAnswers.process(), pagerDutyAnswers.serverError());
    const events = [vpnLost('veh-0001'), vpnLost('veh-0002', 1_000)];
    await h.enqueue(notification('ntf-1', RECEIVER, events));
    const { watch, reports } = await start();

    expect(await watch.nth('ntf-1')).toMatchObject({
      state: 'completed',
      result: { delivered: true, attempt: 2 },
    });
    expect(reports.map((report) => [report.outcome.kind, report.attempt])).toEqual([
      ['retry', 1],
      ['delivered', 2],
    ]);
    expect(standin.received.map((item) => item.status)).toEqual([202, 500, 202, 202]);
    // veh-0001's trigger went twice and is one alert: PagerDuty deduplicates by key.
    expect(standin.open().map((alert) => [alert.dedupKey, alert.triggers])).toEqual([
      ['test/vehicle/veh-0001#vpn', 2],
      ['test/vehicle/veh-0002#vpn', 1],
    ]);
    // Guarantee 5: the routing key is in no reason.
    expect(JSON.stringify(reports)).not.toContain(standin.routingKey);
  });

  it('dead-letters a notification PagerDuty refuses, with its words', async () => {
    standin.enqueue({
      status: 400,
      body: {
        status: 'invalid event',
        message: 'Event object is invalid',
        errors: ["'payload.source' is missing or blank"],
      },
    });
    await h.enqueue(notification('ntf-1', RECEIVER, [vpnLost('veh-0001')]));
    const { watch } = await start();
    expect(await watch.nth('ntf-1')).toEqual({
      state: 'failed',
      reason:
        'PagerDuty refused 1 of 1 events (0 accepted); event 1 of 1 (trigger test/vehicle/veh-0001#vpn): ' +
        "PagerDuty answered 400 invalid event: Event object is invalid ('payload.source' is missing or blank)",
    });
  });
});
