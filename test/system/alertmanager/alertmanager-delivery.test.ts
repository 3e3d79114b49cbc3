import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DeliveryService, startDelivery } from '../../../src/notifiers/delivery/delivery-service.js';
import type { DeliveryReport } from '../../../src/notifiers/delivery/delivery-worker.js';
import { alertmanagerReceiverSchema } from '../../../src/notifiers/receivers/alertmanager/index.js';
import { deliveryKeys } from '../../../src/store/keys.js';
import { DeliveryHarness, JobWatch, silent } from '../../notifiers/delivery/helpers.js';
import { notificationOf, vpnBack, vpnLost } from '../../notifiers/receivers/alertmanager/fixtures.js';
import { AlertmanagerProcess, alertmanagerMissing, type GettableAlert } from '../../support/alertmanager.js';
import { eventually, redisUrl } from '../../support/redis.js';

/**
 * An Alertmanager receiver as the daemon runs it: `startDelivery` builds its notifier from the
 * config (with the Redis it keeps its alerts in) and its delivery worker, on real BullMQ and the
 * real Redis, delivering to the real Alertmanager.
 */

const missing = alertmanagerMissing();
if (missing) {
  console.warn(`test/system/alertmanager/alertmanager-delivery.test.ts: SKIPPED — ${missing}`);
}

const WAIT = { timeoutMs: 15_000, intervalMs: 50 };

let h: DeliveryHarness;
let am: AlertmanagerProcess;
let delivery: DeliveryService | undefined;

beforeEach(async () => {
  if (missing) return;
  h = await new DeliveryHarness().open();
  am = await AlertmanagerProcess.start();
});

afterEach(async () => {
  if (missing) return;
  await delivery?.stop(1_000);
  delivery = undefined;
  await am.stop();
  await h.close();
});

function start(reports: DeliveryReport[]): JobWatch {
  const receiver = alertmanagerReceiverSchema.parse({
    kind: 'alertmanager',
    name: 'am',
    urls: [am.url],
    timeout: '2s',
  });
  delivery = startDelivery({
    config: { receivers: [receiver], redis: { url: redisUrl(), prefix: h.prefix } },
    logger: silent,
    store: h.store,
    secrets: h.secrets,
    // Quick retries; enough of them to outlast an Alertmanager restart.
    retry: { backoff: { baseMs: 50, capMs: 200, attempts: 100 } },
    tuning: { errorHoldMs: 50 },
    onOutcome: (report) => reports.push(report),
  });
  const worker = delivery.workers.get('am');
  if (!worker) throw new Error('no delivery worker for the receiver am');
  return new JobWatch(worker);
}

const subjects = (alerts: GettableAlert[]) => alerts.map((alert) => alert.labels.subject).sort();

describe.skipIf(missing !== undefined)('delivery to Alertmanager through the delivery worker', () => {
  it('fires, resolves, and gets through an Alertmanager restart by retrying', async () => {
    const reports: DeliveryReport[] = [];
    const watch = start(reports);
    await delivery?.ready;

    await h.enqueue(notificationOf('n1', [vpnLost('veh-0001', 0)]));
    expect(await watch.nth('n1')).toMatchObject({
      state: 'completed',
      result: { delivered: true, status: 200 },
    });
    await eventually(
      () => am.alerts(),
      (alerts) => alerts.length === 1,
      WAIT,
    );
    // The notifier was given its own key under the prefix, and keeps the alert there.
    const key = deliveryKeys(h.prefix).receiverState('alertmanager', 'am');
    expect(await h.admin.hkeys(key)).toEqual(['vehicle/veh-0001#vpn']);

    await h.enqueue(notificationOf('n2', [vpnBack('veh-0001', 60_000)]));
    expect(await watch.nth('n2')).toMatchObject({ state: 'completed' });
    expect(await am.alerts()).toEqual([]);

    // Alertmanager goes away: the next notification is retried until it is back.
    const address = am.address;
    await am.stop();
    await h.enqueue(notificationOf('n3', [vpnLost('veh-0002', 120_000)]));
    await eventually(
      async () => reports.filter((report) => report.notificationId === 'n3').length,
      (count) => count >= 1,
      WAIT,
    );
    expect(reports.find((report) => report.notificationId === 'n3')?.outcome).toMatchObject({
      kind: 'retry',
      reason: expect.stringMatching(
        /^no Alertmanager accepted the alerts: http:\/\/127\.0\.0\.1:\d+: network error/,
      ),
    });
    am = await AlertmanagerProcess.start({ listenAddress: address });
    expect(await watch.nth('n3', 1, 15_000)).toMatchObject({ state: 'completed' });
    const alerts = await eventually(
      () => am.alerts(),
      (list) => list.length > 0,
      WAIT,
    );
    expect(subjects(alerts)).toEqual(['vehicle/veh-0002']);
    expect(reports.filter((report) => report.notificationId === 'n3').at(-1)?.outcome.kind).toBe('delivered');
  });
});
