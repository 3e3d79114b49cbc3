import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FleetEvent } from '../../../src/events/types.js';
import { exponentialPolicy } from '../../../src/lib/retry-policy.js';
import type { Notification, Notifier } from '../../../src/notifiers/notifier.js';
import { pagerDutyNotifierFactory } from '../../../src/notifiers/receivers/pagerduty/index.js';
import { deliveryKeys } from '../../../src/store/keys.js';
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
  notifier = pagerDutyNotifierFactory.create(receiverConfig(), { logger: silent, secrets: h.secrets });
});

afterEach(async () => {
  await h.close();
  await notifier.close?.();
  await standin.close();
});

/** The receiver on the stand-in. */
function receiverConfig() {
  return pagerDutyNotifierFactory.configSchema.parse({
    kind: 'pagerduty',
    name: RECEIVER,
    routing_key: standin.routingKey,
    url: standin.url,
    timeout: '2s',
  });
}

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

/** `vehicle.vpn.connected` of `vehicleId`: the resolution of its VPN incident. */
function vpnBack(vehicleId: string, offsetMs = 0): FleetEvent {
  const lost = vpnLost(vehicleId, offsetMs);
  return {
    ...lost,
    id: `evt-back-${vehicleId}-${offsetMs}`,
    type: 'vehicle.vpn.connected',
    data: { severity: 'info', vehicleId, previous: 'disconnected', current: 'connected', durationMs: 60_000 },
  };
}

const ids = (count: number) =>
  Array.from({ length: count }, (_, index) => `veh-${String(index + 1).padStart(4, '0')}`);

describe('delivery to PagerDuty in a storm', () => {
  const GROUP = `test/group/${RECEIVER}/type=vehicle.vpn.disconnected`;
  let folding: Notifier;
  let stateKey: string;

  beforeEach(() => {
    stateKey = deliveryKeys(h.prefix).receiverState('pagerduty', RECEIVER);
    folding = pagerDutyNotifierFactory.create(receiverConfig(), {
      logger: silent,
      secrets: h.secrets,
      redis: { connection: h.connection, key: stateKey },
    });
  });

  afterEach(async () => {
    await folding.close?.();
  });

  it('pages 300 robots down as one alert, kept through a retry, and resolves it with the last one back', async () => {
    // The first attempt records the fold, then PagerDuty fails the group's trigger.
    standin.enqueue(pagerDutyAnswers.serverError());
    const vehicles = ids(300);
    await h.enqueue(
      notification(
        'ntf-down',
        RECEIVER,
        vehicles.map((id, index) => vpnLost(id, index)),
      ),
      notification(
        'ntf-back-1',
        RECEIVER,
        vehicles.slice(0, 299).map((id) => vpnBack(id, 120_000)),
      ),
      notification(
        'ntf-back-2',
        RECEIVER,
        vehicles.slice(299).map((id) => vpnBack(id, 180_000)),
      ),
    );
    const { watch, reports } = await h.start({
      name: RECEIVER,
      kind: 'pagerduty',
      notifier: folding,
      policy: FAST,
      maxHoldMs: MAX_HOLD_MS,
    });

    expect(await watch.nth('ntf-down')).toMatchObject({ state: 'completed', result: { attempt: 2 } });
    expect(await watch.nth('ntf-back-2')).toMatchObject({ state: 'completed' });
    expect(reports.map((report) => [report.notificationId, report.outcome.kind])).toEqual([
      ['ntf-down', 'retry'],
      ['ntf-down', 'delivered'],
      ['ntf-back-1', 'delivered'],
      ['ntf-back-2', 'delivered'],
    ]);
    // 600 incident changes, 3 PagerDuty events: the trigger twice (a 500, then accepted), one resolve.
    expect(
      standin.received.map((item) => {
        const body = item.body as { event_action: string; dedup_key: string };
        return [body.event_action, body.dedup_key, item.status];
      }),
    ).toEqual([
      ['trigger', GROUP, 500],
      ['trigger', GROUP, 202],
      ['resolve', GROUP, 202],
    ]);
    expect(standin.alerts.map((alert) => [alert.dedupKey, alert.status, alert.triggers])).toEqual([
      [GROUP, 'resolved', 1],
    ]);
    const trigger = standin.received[1]?.body as { payload: { summary: string } };
    expect(trigger.payload.summary).toBe('300 vehicles are off the VPN: 300 incidents in this alert');
    // Nothing is left of the fold once its alert is resolved.
    expect(await h.connection.exists(stateKey)).toBe(0);
  });

  it('remembers the fold in Redis: another replica’s notifier resolves it', async () => {
    const vehicles = ids(25);
    await h.enqueue(
      notification(
        'ntf-down',
        RECEIVER,
        vehicles.map((id, index) => vpnLost(id, index)),
      ),
    );
    const first = await h.start({ name: RECEIVER, kind: 'pagerduty', notifier: folding, policy: FAST });
    expect(await first.watch.nth('ntf-down')).toMatchObject({ state: 'completed' });
    expect(await h.connection.hget(stateKey, `n:${GROUP}`)).toBe('25');
    expect(await h.connection.hget(stateKey, 'i:test/vehicle/veh-0007#vpn')).toBe(GROUP);

    // A notifier built afresh (a restart, another replica) reads the same record.
    const again = pagerDutyNotifierFactory.create(receiverConfig(), {
      logger: silent,
      secrets: h.secrets,
      redis: { connection: h.connection, key: stateKey },
    });
    const { received, outcome } = await deliverOnce(
      again,
      notification(
        'ntf-back',
        RECEIVER,
        vehicles.map((id) => vpnBack(id, 60_000)),
      ),
    );
    await again.close?.();
    expect(outcome.kind).toBe('delivered');
    expect(received).toEqual([['resolve', GROUP]]);
    expect(standin.open()).toEqual([]);
  });
});

async function deliverOnce(notifier: Notifier, sent: Notification) {
  const before = standin.received.length;
  const outcome = await notifier.deliver(sent, { attempt: 1 });
  const received = standin.received.slice(before).map((item) => {
    const body = item.body as { event_action: string; dedup_key: string };
    return [body.event_action, body.dedup_key];
  });
  return { received, outcome };
}
