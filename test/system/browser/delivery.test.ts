import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSecret } from '../../notifiers/receivers/webhook/helpers.js';
import { eventually } from '../../support/redis.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';
import { ADMIN_TOKEN, type ConsoleRig, hasChromium, NO_CHROMIUM, startConsoleRig } from './harness.js';

/**
 * The Delivery page in headless Chromium, against two webhook stand-ins on loopback that every
 * notification goes to: `ops-bridge` answers 500 (two attempts, no wait between them), so the
 * notification of a vehicle losing its VPN is dead-lettered; `pager` answers 429 with
 * `Retry-After: 3600`, so it is held for an hour. From the page: the dead letter is replayed once
 * the stand-in recovers (delivered, gone from the list), the held receiver resumed.
 */

if (!hasChromium) console.warn(`test/system/browser/delivery.test.ts: SKIPPED — ${NO_CHROMIUM}`);

describe('the Delivery page', () => {
  let rig: ConsoleRig | undefined;
  let failing: WebhookReceiver | undefined;
  let throttled: WebhookReceiver | undefined;

  beforeAll(async () => {
    if (!hasChromium) return;
    const failingSecret = newSecret();
    const throttledSecret = newSecret();
    failing = (await WebhookReceiver.start({ secret: failingSecret })).answerWith(500);
    throttled = (await WebhookReceiver.start({ secret: throttledSecret })).answerWith({
      status: 429,
      headers: { 'retry-after': '3600' },
    });
    rig = await startConsoleRig({
      config: {
        receivers: [
          {
            kind: 'webhook',
            name: 'ops-bridge',
            url: failing.url,
            secrets: [failingSecret],
            retry_schedule: ['0s', '0s'],
          },
          { kind: 'webhook', name: 'pager', url: throttled.url, secrets: [throttledSecret], max_hold: '2h' },
        ],
        notifications: {
          route: {
            receiver: 'ops-bridge',
            group_by: ['...'],
            group_wait: '0s',
            group_interval: '1s',
            routes: [
              { match: { severity: 'info' }, receiver: 'ops-bridge', continue: true },
              { match: { severity: 'info' }, receiver: 'pager' },
            ],
          },
        },
      } as never,
    });
    // The vehicle as observed first (connected), then its VPN lost: one notification to each.
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    await eventually(
      async () => (await fetch(`${rig!.address}/api/vehicles/veh-0001`, { headers: admin })).status,
      (status) => status === 200,
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    rig.sim.control.updateVehicle('veh-0001', { vpnConnected: false });
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
    await failing?.close();
    await throttled?.close();
  });

  it('replays a dead letter once the receiver recovers: delivered, and gone from the list', {
    timeout: 60_000,
  }, async (context) => {
    if (!rig || !failing) return context.skip(NO_CHROMIUM);
    const { page, errors, context: browserContext } = await rig.newPage();
    await rig.logIn(page);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Delivery' }).click();

    const letters = page.getByRole('table', { name: 'Dead letters' });
    const row = letters
      .getByRole('row')
      .filter({ hasText: 'vehicle/veh-0001' })
      .filter({ hasText: 'ops-bridge' });
    await row.waitFor({ timeout: 30_000 });
    await expect(row.textContent()).resolves.toContain('vehicle.vpn.disconnected');
    await expect(row.textContent()).resolves.toContain('500');
    const notificationId = await row.getAttribute('data-notification');
    expect(notificationId).toBeTruthy();
    expect(failing.accepted()).toEqual([]);

    failing.answerWith(200);
    await row
      .getByRole('button', { name: /^Replay the dead letter of vehicle\/veh-0001 to ops-bridge/ })
      .click();
    await page
      .getByRole('dialog', { name: 'Replay this dead letter?' })
      .getByRole('button', { name: 'Replay' })
      .click();
    await page.getByRole('status').filter({ hasText: 'Replayed to ops-bridge' }).waitFor();
    await expect
      .poll(() => failing!.accepted().map((delivery) => delivery.webhookId), { timeout: 20_000 })
      .toContain(notificationId);
    // Gone from the list: a second replay is not offered.
    await row.waitFor({ state: 'detached' });
    const answer = await fetch(`${rig.address}/api/dead-letters?receiver=ops-bridge`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const { items } = (await answer.json()) as { items: { notificationId: string }[] };
    expect(items.map((item) => item.notificationId)).not.toContain(notificationId);
    expect(errors.filter((message) => !/status of 401/.test(message))).toEqual([]);
    await browserContext.close();
  });

  it('resumes a held receiver: the waiting notification is sent at once', {
    timeout: 60_000,
  }, async (context) => {
    if (!rig || !throttled) return context.skip(NO_CHROMIUM);
    const { page, errors, context: browserContext } = await rig.newPage();
    await rig.logIn(page);
    await page.goto(`${rig.address}/#/delivery`);

    const receivers = page.getByRole('table', { name: 'Receivers' });
    const pager = receivers.getByRole('row').filter({ hasText: 'pager' });
    await expect.poll(() => pager.textContent(), { timeout: 30_000 }).toContain('held until');
    await expect(pager.textContent()).resolves.toContain('it asked to wait');
    expect(throttled.accepted()).toEqual([]);

    throttled.answerWith(200);
    await pager.getByRole('button', { name: 'Resume pager' }).click();
    await page.getByRole('dialog', { name: 'Resume pager?' }).getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('status').filter({ hasText: 'pager resumed' }).waitFor();
    await expect.poll(() => throttled!.accepted().length, { timeout: 20_000 }).toBeGreaterThan(0);
    await expect.poll(() => pager.textContent()).toContain('enabled');
    expect(errors.filter((message) => !/status of 401/.test(message))).toEqual([]);
    await browserContext.close();
  });
});
