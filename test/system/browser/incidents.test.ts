import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IncidentView } from '../../../src/incidents/view.js';
import { TOKEN } from '../../http/helpers.js';
import { type SlackStandin, SlackStandin as Standin } from '../../support/slack-standin.js';
import {
  ADMIN_TOKEN,
  type ConsoleRig,
  hasChromium,
  NO_CHROMIUM,
  OPERATE_TOKEN,
  startConsoleRig,
} from './harness.js';

/**
 * The Incidents page in headless Chromium against a daemon polling the simulator: a robot that goes
 * down appears without a reload, is acknowledged from the page (and its Slack reminders stop while
 * another incident's go on), silenced with the matchers the page prefills, its silence expired, and
 * it leaves the list when the robot recovers. A read-only role sees the actions disabled, saying why.
 */

if (!hasChromium) console.warn(`test/system/browser/incidents.test.ts: SKIPPED — ${NO_CHROMIUM}`);

const READ_TOKEN = `${TOKEN}-read`;
const CONSOLE_URL = 'https://fleetwatch.example.com';

async function apiGet<T>(rig: ConsoleRig, path: string): Promise<T> {
  const response = await fetch(`${rig.address}${path}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  expect(response.status, path).toBe(200);
  return (await response.json()) as T;
}

async function incidentOf(rig: ConsoleRig, subject: string): Promise<IncidentView | undefined> {
  const page = await apiGet<{ items: IncidentView[] }>(
    rig,
    `/api/incidents?subject=${encodeURIComponent(subject)}`,
  );
  return page.items[0];
}

function rowOf(page: Page, subject: string) {
  return page.locator('tr', { has: page.getByRole('link', { name: subject, exact: true }) });
}

describe('the Incidents page', () => {
  let rig: ConsoleRig | undefined;
  let slack: SlackStandin | undefined;

  beforeAll(async () => {
    if (!hasChromium) return;
    slack = await Standin.start();
    rig = await startConsoleRig({
      config: {
        http: {
          port: 0,
          api_token: ADMIN_TOKEN,
          tokens: [
            { name: 'ops-console', token: OPERATE_TOKEN, role: 'operate' },
            { name: 'viewer', token: READ_TOKEN, role: 'read' },
          ],
        },
        console: { url: CONSOLE_URL },
        receivers: [{ kind: 'slack', name: 'ops-slack', url: slack.url }],
        notifications: {
          route: {
            receiver: 'ops-slack',
            group_by: ['type', 'subject'],
            group_wait: '0s',
            group_interval: '1s',
            repeat_interval: '2s',
            send_resolved: true,
          },
          // The built-in rules would hold the robot's alert until the robots' upstream window (a
          // minute here) is judged; this test is about what follows the alert.
          inhibit_rules: [],
        },
      } as never,
    });
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
    await slack?.close();
  });

  it('shows a robot going down live; acknowledges, silences and expires from the page; drops it once resolved', {
    timeout: 120_000,
  }, async (context) => {
    if (!rig || !slack) return context.skip(NO_CHROMIUM);
    const { page, errors, context: browserContext } = await rig.newPage();
    await rig.logIn(page);
    await page.getByRole('heading', { name: 'Incidents', level: 1 }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();

    const [robot] = rig.sim.control.state().robots;
    const [vehicle] = rig.sim.control.state().vehicles;
    const subject = `robot/${robot!.deviceId}`;
    rig.sim.control.updateRobot(robot!.deviceId, { healthy: false });
    rig.sim.control.updateVehicle(vehicle!.id, { vpnConnected: false });

    // It appears without a reload, grouped under its type, with its entity linked.
    const row = rowOf(page, subject);
    await row.waitFor({ timeout: 30_000 });
    await expect(row.getByRole('link', { name: subject, exact: true }).getAttribute('href')).resolves.toBe(
      `#/robot/${robot!.deviceId}`,
    );
    await page.getByRole('region', { name: 'type robot.health.down' }).waitFor();
    await expect(row.textContent()).resolves.toContain('active');

    // Slack's message links to the robot's page in the console.
    await expect
      .poll(
        () => slack!.received.find((post) => post.raw.includes(`${CONSOLE_URL}/#/robot/${robot!.deviceId}`)),
        { timeout: 30_000 },
      )
      .toBeDefined();

    // Reminded of every 2 s until acknowledged.
    await expect
      .poll(
        () =>
          slack!.received.filter(
            (post) => post.raw.includes('Still firing') && post.raw.includes(robot!.deviceId),
          ).length,
        {
          timeout: 30_000,
        },
      )
      .toBeGreaterThanOrEqual(1);

    // Acknowledged from the page: confirmed in a dialog, then the API says so.
    await row.getByRole('button', { name: `Acknowledge robot.health.down on ${subject}` }).click();
    const ack = page.getByRole('dialog', { name: 'Acknowledge the incident' });
    await ack.getByLabel('Comment').fill('swapping its battery');
    await ack.getByLabel('For').fill('1h');
    await ack.getByRole('button', { name: 'Acknowledge' }).click();
    await row.getByText('acknowledged by ops-console').waitFor();
    const acknowledged = await incidentOf(rig, subject);
    expect(acknowledged).toMatchObject({
      acknowledged: true,
      acknowledgement: { by: 'ops-console', comment: 'swapping its battery' },
    });
    const ackAt = Date.now();

    // Its reminders stop (every 2 s before), while the other incident's go on. Counted from the
    // other incident's first reminder after the acknowledgement, so that a reminder already on its
    // way when it was made does not count.
    const posts = (about: string, after: number) =>
      slack!.received.filter((post) => post.at > after && post.raw.includes(about));
    const reminders = (about: string, after: number) =>
      posts(about, after).filter((post) => post.raw.includes('Still firing'));
    await expect
      .poll(() => reminders(vehicle!.id, ackAt).length, { timeout: 30_000 })
      .toBeGreaterThanOrEqual(1);
    const from = reminders(vehicle!.id, ackAt)[0]!.at;
    await expect
      .poll(() => reminders(vehicle!.id, from).length, { timeout: 30_000 })
      .toBeGreaterThanOrEqual(2);
    expect(reminders(robot!.deviceId, from)).toEqual([]);

    // A silence from the incident: the form comes prefilled with its type and subject.
    await row.getByRole('button', { name: `Silence robot.health.down on ${subject}` }).click();
    const silence = page.getByRole('dialog', { name: 'Silence what this incident matches' });
    await expect(silence.getByLabel('Type').inputValue()).resolves.toBe('robot.health.down');
    await expect(silence.getByLabel('Subject').inputValue()).resolves.toBe(subject);
    await silence.getByLabel('Duration').fill('30m');
    await silence.getByLabel('Comment').fill('battery swap');
    await silence.getByRole('button', { name: 'Create silence' }).click();
    await row.getByText(/^silenced \(silence /).waitFor({ timeout: 15_000 });
    const silenced = await incidentOf(rig, subject);
    expect(silenced?.muted).toMatchObject({ reason: 'silenced' });
    const silences = await apiGet<{ items: Array<{ id: string; matchers: unknown; createdBy: string }> }>(
      rig,
      '/api/silences',
    );
    expect(silences.items.find((item) => item.id === silenced?.muted?.by)).toMatchObject({
      matchers: { type: 'robot.health.down', subject },
      createdBy: 'ops-console',
    });

    // The silence that mutes it, expired from the page.
    await row.getByRole('button', { name: `Expire silence ${silenced!.muted!.by}` }).click();
    const expire = page.getByRole('dialog', { name: 'Expire the silence' });
    await expire.getByRole('button', { name: 'Expire silence' }).click();
    await row.getByText(/^silenced/).waitFor({ state: 'detached', timeout: 15_000 });
    expect((await incidentOf(rig, subject))?.muted).toBeNull();

    // The text filter narrows the list; clearing it brings the row back.
    await page.getByLabel('Type or subject').fill('no-such-thing');
    await row.waitFor({ state: 'detached' });
    await page.getByLabel('Type or subject').fill(robot!.deviceId);
    await row.waitFor();

    // The detail page: the incident, its acknowledgement, the robot's events.
    await row.getByRole('link', { name: `Details of robot.health.down on ${subject}` }).click();
    await page.getByRole('heading', { name: `robot.health.down on ${subject}` }).waitFor();
    await page.getByRole('cell', { name: 'swapping its battery' }).waitFor();
    await page.getByRole('cell', { name: 'robot.health.down' }).first().waitFor();
    await page.getByRole('link', { name: '← Incidents' }).click();
    await row.waitFor();

    // Resolved: it leaves the list without a reload.
    rig.sim.control.updateRobot(robot!.deviceId, { healthy: true });
    await row.waitFor({ state: 'detached', timeout: 30_000 });
    expect(await incidentOf(rig, subject)).toBeUndefined();

    // The one 401 is the session check before the login.
    expect(errors.filter((message) => !/status of 401/.test(message))).toEqual([]);
    await browserContext.close();
  });

  it('applies a filter link followed while the page is open, as on a fresh load', {
    timeout: 60_000,
  }, async (context) => {
    if (!rig) return context.skip(NO_CHROMIUM);
    const { page, requests, context: browserContext } = await rig.newPage();
    await rig.logIn(page);
    await page.goto(`${rig.address}/#/incidents?state=acknowledged&severity=warning&q=vpn`);
    await page.getByRole('heading', { name: 'Incidents', level: 1 }).waitFor();
    const filters = async () => ({
      state: await page.getByRole('combobox', { name: /^State/ }).inputValue(),
      severity: await page.getByRole('combobox', { name: /^Severity/ }).inputValue(),
      text: await page.getByLabel('Type or subject').inputValue(),
    });
    await expect.poll(filters).toEqual({ state: 'acknowledged', severity: 'warning', text: 'vpn' });

    // Changed on the page, then a link (the hash set) while the page stays open.
    await page.getByRole('combobox', { name: /^State/ }).selectOption('all');
    await page.evaluate("location.hash = '#/incidents?state=closed&q=robot'");
    await expect.poll(filters).toEqual({ state: 'closed', severity: '', text: 'robot' });
    await expect
      .poll(() => requests.some((url) => url.includes('/api/incidents?') && url.includes('state=closed')))
      .toBe(true);

    // Back to the first link: its filters again.
    await page.goBack();
    await expect.poll(filters).toEqual({ state: 'acknowledged', severity: 'warning', text: 'vpn' });
    await browserContext.close();
  });

  it('keeps a row whole on a phone: the state and the actions inside the screen, no sideways scroll', {
    timeout: 60_000,
  }, async (context) => {
    if (!rig) return context.skip(NO_CHROMIUM);
    const vehicle = rig.sim.control.state().vehicles[1]!;
    const subject = `vehicle/${vehicle.id}`;
    rig.sim.control.updateVehicle(vehicle.id, { vpnConnected: false });
    const browserContext = await rig.browser.newContext({ viewport: { width: 375, height: 800 } });
    const page = await browserContext.newPage();
    await rig.logIn(page);
    const row = rowOf(page, subject);
    await row.waitFor({ timeout: 30_000 });
    const inside = async (name: string, box: { x: number; width: number } | null) => {
      expect(box, name).not.toBeNull();
      expect(box!.x, name).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width, name).toBeLessThanOrEqual(375);
    };
    await inside('state', await row.locator('.state-cell').boundingBox());
    await expect(row.locator('.state-cell').textContent()).resolves.toContain('active');
    for (const action of ['Acknowledge', 'Silence']) {
      const name = `${action} vehicle.vpn.disconnected on ${subject}`;
      await inside(name, await row.getByRole('button', { name }).boundingBox());
    }
    // Nothing to scroll sideways to, in the table or the page.
    const overflow = `[...document.querySelectorAll('.table-wrap'), document.documentElement]
      .some((element) => element.scrollWidth > element.clientWidth)`;
    await expect(page.evaluate(overflow)).resolves.toBe(false);
    rig.sim.control.updateVehicle(vehicle.id, { vpnConnected: true });
    await browserContext.close();
  });

  it('shows the actions disabled to a read-only role, saying why', { timeout: 60_000 }, async (context) => {
    if (!rig) return context.skip(NO_CHROMIUM);
    const [vehicle] = rig.sim.control.state().vehicles;
    const subject = `vehicle/${vehicle!.id}`;
    rig.sim.control.updateVehicle(vehicle!.id, { vpnConnected: false });
    const { page, context: browserContext } = await rig.newPage();
    await rig.logIn(page, READ_TOKEN);
    const row = rowOf(page, subject);
    await row.waitFor({ timeout: 30_000 });
    const button = row.getByRole('button', { name: `Acknowledge vehicle.vpn.disconnected on ${subject}` });
    await expect(button.isDisabled()).resolves.toBe(true);
    await expect(button.getAttribute('title')).resolves.toContain('Your role (read)');
    await browserContext.close();
  });
});
