import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeKeys } from '../../../src/store/keys.js';
import { ADMIN_TOKEN, type ConsoleRig, hasChromium, NO_CHROMIUM, startConsoleRig } from './harness.js';

/**
 * The Live events page in headless Chromium: the stream's events newest first, narrowed by a type
 * glob, a subject glob and a minimum severity; after the network drops, the events logged meanwhile
 * arrive once it is back (EventSource resumes with Last-Event-ID).
 */

if (!hasChromium) console.warn(`test/system/browser/events.test.ts: SKIPPED — ${NO_CHROMIUM}`);

async function logged(rig: ConsoleRig, type: string, subject: string): Promise<number> {
  const query = new URLSearchParams({ type, subject });
  const response = await fetch(`${rig.address}/api/events?${query}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: unknown[] }).items.length;
}

describe('the Live events page', () => {
  let rig: ConsoleRig | undefined;

  beforeAll(async () => {
    if (hasChromium) rig = await startConsoleRig();
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
  });

  it('follows the stream with filters, and catches up after the network drops', {
    timeout: 120_000,
  }, async (context) => {
    if (!rig) return context.skip(NO_CHROMIUM);
    const { page, errors, context: browserContext } = await rig.newPage();
    await rig.logIn(page);
    await page.getByRole('link', { name: 'Live events' }).click();
    await page.getByRole('heading', { name: 'Live events' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();

    const [robot] = rig.sim.control.state().robots;
    const [vehicle] = rig.sim.control.state().vehicles;
    const subject = `robot/${robot!.deviceId}`;
    const rows = page.getByRole('row');
    const rowOf = (type: string) => rows.filter({ hasText: type }).filter({ hasText: subject });

    // Robots only, by a type glob and a subject glob.
    await page.getByLabel('Type').fill('robot.*');
    await page.getByLabel('Subject').fill('robot/*');
    // A vehicle event, logged (and so streamed) before the robot's.
    rig.sim.control.updateVehicle(vehicle!.id, { vpnConnected: false });
    await expect
      .poll(() => logged(rig!, 'vehicle.vpn.disconnected', `vehicle/${vehicle!.id}`), { timeout: 30_000 })
      .toBe(1);
    rig.sim.control.updateRobot(robot!.deviceId, { healthy: false });
    await rowOf('robot.health.down').waitFor({ timeout: 30_000 });
    // In words, as the CLI and the notifications say it, not as field names.
    await expect(rowOf('robot.health.down').textContent()).resolves.toContain(
      `${robot!.deviceId} fails its health check`,
    );
    await expect(rows.filter({ hasText: 'vehicle.vpn.disconnected' }).count()).resolves.toBe(0);
    await expect(
      rowOf('robot.health.down').getByRole('link', { name: subject }).getAttribute('href'),
    ).resolves.toBe(`#/robot/${robot!.deviceId}`);

    // The network drops; the robot recovers meanwhile; the event arrives once it is back.
    // Offline alone keeps an open connection in Chromium: the server drops it too, and offline keeps
    // the browser from reconnecting until the test says so.
    await browserContext.setOffline(true);
    rig.daemon.http!.app!.server.closeAllConnections();
    await page.getByRole('status').filter({ hasText: 'Reconnecting' }).waitFor({ timeout: 30_000 });
    rig.sim.control.updateRobot(robot!.deviceId, { healthy: true });
    await expect.poll(() => logged(rig!, 'robot.health.up', subject), { timeout: 30_000 }).toBe(1);
    await expect(rowOf('robot.health.up').count()).resolves.toBe(0);
    await browserContext.setOffline(false);
    await rowOf('robot.health.up').waitFor({ timeout: 30_000 });
    await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
    // Newest first, each once.
    const types = await page.locator('tbody tr td:nth-child(2)').allTextContents();
    expect(types.indexOf('robot.health.up')).toBeLessThan(types.indexOf('robot.health.down'));
    expect(types.filter((type) => type === 'robot.health.up')).toHaveLength(1);

    // A minimum severity: the resolution (info) goes, the failure stays.
    await page.getByLabel('Minimum severity').selectOption('warning');
    await rowOf('robot.health.up').waitFor({ state: 'detached' });
    await rowOf('robot.health.down').waitFor();

    // Paused: what arrives is held, and shown on resume.
    await page.getByLabel('Minimum severity').selectOption('');
    await page.getByRole('button', { name: 'Pause' }).click();
    rig.sim.control.updateRobot(robot!.deviceId, { healthy: false });
    await page.getByText(/Paused: [1-9]\d* new events? held/).waitFor({ timeout: 30_000 });
    await expect(rowOf('robot.health.down').count()).resolves.toBe(1);
    await page.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => rowOf('robot.health.down').count()).toBe(2);

    // The 401 before the login, and the connection the test drops.
    expect(
      errors.filter(
        (message) => !/status of 401|ERR_INTERNET_DISCONNECTED|ERR_INCOMPLETE_CHUNKED_ENCODING/.test(message),
      ),
    ).toEqual([]);
    await browserContext.close();
  });

  it('says so when the capped log dropped events while the page was away', {
    timeout: 60_000,
  }, async (context) => {
    if (!rig) return context.skip(NO_CHROMIUM);
    const { page, context: browserContext } = await rig.newPage();
    await rig.logIn(page);
    await page.goto(`${rig.address}/#/events`);
    await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();

    await browserContext.setOffline(true);
    rig.daemon.http!.app!.server.closeAllConnections();
    await page.getByRole('status').filter({ hasText: 'Reconnecting' }).waitFor({ timeout: 30_000 });
    // More events than the log keeps, meanwhile: written to the log as the commit writes them, and
    // trimmed to 5 (the daemon's cap is at least 100, too many to cause here in a test's time).
    const key = storeKeys(rig.prefix).events;
    for (let index = 0; index < 10; index += 1) {
      const event = {
        specversion: '1.0',
        id: `evt-gap-${index}`,
        source: 'fleetwatch/test',
        type: 'vehicle.vpn.connected',
        subject: 'vehicle/gap-test',
        time: new Date().toISOString(),
        datacontenttype: 'application/json',
        data: { severity: 'info', previous: 'disconnected', current: 'connected', index },
      };
      await rig.admin.xadd(
        key,
        'MAXLEN',
        '5',
        '*',
        'id',
        event.id,
        'type',
        event.type,
        'subject',
        event.subject,
        'event',
        JSON.stringify(event),
      );
    }
    await browserContext.setOffline(false);
    await page
      .getByRole('alert')
      .filter({ hasText: 'Some events may be missing' })
      .waitFor({ timeout: 30_000 });
    // What the log still had is there: the last five.
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'vehicle/gap-test' }).count()).toBe(5);
    await page.getByRole('button', { name: 'Dismiss' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'Some events may be missing' })
      .waitFor({ state: 'detached' });
    await browserContext.close();
  });
});
