import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SecretRegistry } from '../../../src/log/secrets.js';
import type { Notification } from '../../../src/notifiers/notifier.js';
import {
  AlertmanagerNotifier,
  alertmanagerReceiverSchema,
  MAX_BATCH,
} from '../../../src/notifiers/receivers/alertmanager/index.js';
import { deliveryKeys } from '../../../src/store/keys.js';
import { notificationOf, vpnBack, vpnLost } from '../../notifiers/receivers/alertmanager/fixtures.js';
import { AlertmanagerProcess, alertmanagerMissing, type GettableAlert } from '../../support/alertmanager.js';
import { connect, deletePrefixKeys, eventually, uniquePrefix } from '../../support/redis.js';

/**
 * The notifier against the real Alertmanager (Debian's prometheus-alertmanager 0.25 and its
 * amtool), each started by the test on a loopback port of its own, with the receiver's alerts in
 * the real Redis. Waits are on what Alertmanager shows, never on a fixed sleep.
 */

const missing = alertmanagerMissing();
if (missing) {
  console.warn(`test/system/alertmanager/alertmanager-notifier.test.ts: SKIPPED — ${missing}`);
}

/** Short enough to watch several re-sends; the config's own minimum is 10 s. */
const RESEND_MS = 300;
const WAIT = { timeoutMs: 15_000, intervalMs: 50 };
const VPN = 'vehicle/veh-0001#vpn';

const silent = pino({ level: 'silent' });
let redis: Redis;
let prefix: string;
let key: string;
let managers: AlertmanagerProcess[];
let notifiers: AlertmanagerNotifier[];

beforeEach(() => {
  redis = connect();
  prefix = uniquePrefix('t-am');
  key = deliveryKeys(prefix).receiverState('alertmanager', 'am');
  managers = [];
  notifiers = [];
});

afterEach(async () => {
  await Promise.all(notifiers.map((notifier) => notifier.close()));
  await Promise.all(managers.map((manager) => manager.stop()));
  await deletePrefixKeys(redis, prefix);
  redis.disconnect();
});

async function alertmanager(options: { listenAddress?: string } = {}): Promise<AlertmanagerProcess> {
  const manager = await AlertmanagerProcess.start({ resolveTimeout: '1s', ...options });
  managers.push(manager);
  return manager;
}

function notifierFor(
  urls: readonly string[],
  options: { onResend?: (round: { alerts: number; accepted: boolean }) => void } = {},
): AlertmanagerNotifier {
  const config = alertmanagerReceiverSchema.parse({ kind: 'alertmanager', name: 'am', urls, timeout: '2s' });
  const notifier = new AlertmanagerNotifier(
    config,
    {
      logger: silent,
      secrets: new SecretRegistry(),
      consoleUrl: 'https://fw.example.com',
      redis: { connection: redis, key },
    },
    { resendIntervalMs: RESEND_MS, ...options },
  );
  notifiers.push(notifier);
  return notifier;
}

function deliver(notifier: AlertmanagerNotifier, notification: Notification) {
  return notifier.deliver(notification, { attempt: 1 });
}

const vpnAlert = (alerts: GettableAlert[]) =>
  alerts.find((alert) => alert.labels.subject === 'vehicle/veh-0001');

describe.skipIf(missing !== undefined)('the alertmanager receiver against the real Alertmanager', () => {
  it('a firing incident is an alert in amtool alert query and in /api/v2/alerts', async () => {
    const am = await alertmanager();
    const notifier = notifierFor([am.url]);
    const notification = notificationOf('n1', [vpnLost('veh-0001')], {
      type: 'vehicle.vpn.disconnected',
      site: 'north',
    });
    expect(await deliver(notifier, notification)).toEqual({ kind: 'delivered', status: 200 });

    const queried = await eventually(
      () => am.amtoolAlerts('alertname=vehicle.vpn.disconnected'),
      (alerts) => alerts.length === 1,
      WAIT,
    );
    expect(queried[0]?.labels).toEqual({
      alertname: 'vehicle.vpn.disconnected',
      subject: 'vehicle/veh-0001',
      severity: 'warning',
      installation: 'production',
      site: 'north',
    });
    const [alert] = await am.alerts();
    expect(alert).toMatchObject({
      labels: queried[0]?.labels,
      annotations: {
        summary: 'veh-0001 is off the VPN: connected → disconnected',
        console: 'https://fw.example.com/#/vehicle/veh-0001',
      },
      generatorURL: 'https://fw.example.com/#/vehicle/veh-0001',
      startsAt: notification.events[0]?.data.since,
      status: { state: 'active' },
    });
    expect(alert?.annotations.description).toContain('vpnConnected');
    expect(await redis.hkeys(key)).toEqual([VPN]);
  });

  it('stays firing across re-sends past its first endsAt, and ends by itself once fleetwatch is gone', async () => {
    const am = await alertmanager();
    let rounds = 0;
    const notifier = notifierFor([am.url], { onResend: () => (rounds += 1) });
    expect(await deliver(notifier, notificationOf('n1', [vpnLost('veh-0001')]))).toMatchObject({
      kind: 'delivered',
    });
    const first = await eventually(
      () => am.alerts(),
      (alerts) => vpnAlert(alerts) !== undefined,
      WAIT,
    );
    const firstEnd = Date.parse(vpnAlert(first)?.endsAt ?? '');
    expect(firstEnd).toBeGreaterThan(Date.now());

    // Alertmanager updated it after the time it would have ended without a re-send.
    const later = await eventually(
      () => am.alerts(),
      (alerts) => {
        const alert = vpnAlert(alerts);
        return alert === undefined || Date.parse(alert.updatedAt) > firstEnd;
      },
      WAIT,
    );
    const alert = vpnAlert(later);
    expect(alert?.status.state).toBe('active');
    expect(Date.parse(alert?.endsAt ?? '')).toBeGreaterThan(firstEnd);
    expect(alert?.startsAt).toBe(vpnAlert(first)?.startsAt);
    expect(rounds).toBeGreaterThan(1);

    // No more re-sends: Alertmanager ends it at the endsAt of the last push.
    await notifier.close();
    await eventually(
      () => am.alerts(),
      (alerts) => vpnAlert(alerts) === undefined,
      WAIT,
    );
  });

  it('resolves when the resolving event is delivered; the resolution is kept a window, then dropped', async () => {
    const am = await alertmanager();
    const notifier = notifierFor([am.url]);
    await deliver(notifier, notificationOf('n1', [vpnLost('veh-0001', 0)]));
    await eventually(
      () => am.alerts(),
      (alerts) => vpnAlert(alerts) !== undefined,
      WAIT,
    );

    expect(await deliver(notifier, notificationOf('n2', [vpnBack('veh-0001', 120_000)]))).toEqual({
      kind: 'delivered',
      status: 200,
    });
    expect(vpnAlert(await am.alerts())).toBeUndefined();
    expect(JSON.parse((await redis.hget(key, VPN)) ?? '{}')).toMatchObject({
      endsAt: notificationOf('n2', [vpnBack('veh-0001', 120_000)]).events[0]?.time,
    });
    // Re-sent as resolved until its window is over, then gone from the hash.
    await eventually(
      () => redis.hlen(key),
      (count) => count === 0,
      WAIT,
    );
    expect(vpnAlert(await am.alerts())).toBeUndefined();
  });

  it('a silence in Alertmanager does not stop delivery: the alert is there, suppressed', async () => {
    const am = await alertmanager();
    const silence = await am.silence(
      ['alertname=vehicle.vpn.disconnected', 'subject="vehicle/veh-0001"'],
      'maintenance',
    );
    expect(silence).toMatch(/^[0-9a-f-]{36}$/);
    const notifier = notifierFor([am.url]);

    expect(await deliver(notifier, notificationOf('n1', [vpnLost('veh-0001')]))).toEqual({
      kind: 'delivered',
      status: 200,
    });
    const alerts = await eventually(
      () => am.alerts(),
      (list) => vpnAlert(list)?.status.state === 'suppressed',
      WAIT,
    );
    expect(vpnAlert(alerts)?.status.silencedBy).toEqual([silence]);
    expect(await am.amtoolAlerts('--silenced', 'alertname=vehicle.vpn.disconnected')).toHaveLength(1);
  });

  it('every peer gets the alert; a peer restarted empty gets it back from the next re-send', async () => {
    const [a, b] = await Promise.all([alertmanager(), alertmanager()]);
    if (!a || !b) throw new Error('two Alertmanagers did not start');
    const notifier = notifierFor([a.url, b.url]);
    expect(await deliver(notifier, notificationOf('n1', [vpnLost('veh-0001')]))).toMatchObject({
      kind: 'delivered',
    });
    for (const peer of [a, b]) {
      await eventually(
        () => peer.alerts(),
        (alerts) => vpnAlert(alerts) !== undefined,
        WAIT,
      );
    }

    // b loses everything (a new storage directory) and comes back where it was.
    const address = b.address;
    await b.stop();
    const fresh = await alertmanager({ listenAddress: address });
    const back = await eventually(
      () => fresh.alerts(),
      (alerts) => vpnAlert(alerts) !== undefined,
      WAIT,
    );
    expect(vpnAlert(back)?.status.state).toBe('active');
  });

  it('delivered while one peer is down; retry (naming each peer) when none answers', async () => {
    const [up, gone] = await Promise.all([alertmanager(), alertmanager()]);
    if (!up || !gone) throw new Error('two Alertmanagers did not start');
    await gone.stop();
    const notifier = notifierFor([up.url, gone.url]);
    expect(await deliver(notifier, notificationOf('n1', [vpnLost('veh-0001')]))).toMatchObject({
      kind: 'delivered',
    });
    await eventually(
      () => up.alerts(),
      (alerts) => vpnAlert(alerts) !== undefined,
      WAIT,
    );

    await up.stop();
    const outcome = await deliver(notifier, notificationOf('n2', [vpnLost('veh-0002')]));
    expect(outcome.kind).toBe('retry');
    expect(outcome.kind !== 'delivered' && outcome.reason).toMatch(
      new RegExp(
        `^no Alertmanager accepted the alerts: ${up.url}: network error: .+; ${gone.url}: network error: `,
      ),
    );
    // Not pushed, so not stored: only the first incident is re-sent.
    expect(await redis.hkeys(key)).toEqual([VPN]);
  });

  it('the same notification delivered twice leaves one alert', async () => {
    const am = await alertmanager();
    const notifier = notifierFor([am.url]);
    const notification = notificationOf('n1', [vpnLost('veh-0001')]);
    expect(await deliver(notifier, notification)).toMatchObject({ kind: 'delivered' });
    expect(await deliver(notifier, notification)).toMatchObject({ kind: 'delivered' });
    const alerts = await eventually(
      () => am.alerts(),
      (list) => list.length > 0,
      WAIT,
    );
    expect(alerts).toHaveLength(1);
    expect(await am.amtoolAlerts()).toHaveLength(1);
    expect(await redis.hkeys(key)).toEqual([VPN]);
  });

  it(`a notification of more than ${MAX_BATCH} incidents is posted in batches, every alert arriving`, async () => {
    const am = await alertmanager();
    // Alertmanager counts alerts, not requests: a pass-through in front of it counts the requests.
    const batches: number[] = [];
    const proxy = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        batches.push((JSON.parse(body.toString('utf8')) as unknown[]).length);
        fetch(`${am.url}${request.url}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        }).then(
          async (answer) => response.writeHead(answer.status).end(await answer.text()),
          () => response.writeHead(502).end(),
        );
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const notifier = notifierFor([`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`]);
      const count = MAX_BATCH + 200;
      const events = Array.from({ length: count }, (_, index) =>
        vpnLost(`veh-${String(index).padStart(5, '0')}`),
      );
      expect(await deliver(notifier, notificationOf('n1', events))).toMatchObject({ kind: 'delivered' });
      expect(batches.slice(0, 2)).toEqual([MAX_BATCH, 200]);
      await eventually(
        () => am.alerts(),
        (alerts) => alerts.length === count,
        WAIT,
      );
      expect(await redis.hlen(key)).toBe(count);
      // A re-send round is batched the same way.
      await eventually(
        async () => batches.length,
        (length) => length >= 4,
        WAIT,
      );
      expect(batches.slice(2, 4)).toEqual([MAX_BATCH, 200]);
    } finally {
      await notifiers.pop()?.close();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});
