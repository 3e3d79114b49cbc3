import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../../src/config/schema.js';
import { ADMIN_TOKEN, type ConsoleRig, hasChromium, NO_CHROMIUM, startConsoleRig } from './harness.js';

/**
 * The vehicle and robot pages in headless Chromium: the snapshot, the actions (each confirmed,
 * each through the API: the simulator's state changes), the timeline, and a read-role session
 * that sees the actions disabled.
 */

if (!hasChromium) console.warn(`test/system/browser/entity.test.ts: SKIPPED — ${NO_CHROMIUM}`);

const READ_TOKEN = `${ADMIN_TOKEN}-read`;
/** The simulator's client id (the daemon's upstream client): its lease is one it may release. */
const CLIENT = 'fleetwatch-demo';

async function readApi<T>(rig: ConsoleRig, path: string): Promise<T | undefined> {
  const response = await fetch(`${rig.address}${path}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  return response.ok ? ((await response.json()) as T) : undefined;
}

/** Clicks an action's button, then the confirmation's button of the same name. */
async function confirmAction(page: Page, name: string): Promise<void> {
  await page.getByRole('button', { name, exact: true }).click();
  const dialog = page.getByRole('dialog');
  await dialog.waitFor();
  await dialog.getByRole('button', { name, exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
}

describe('the entity pages', () => {
  let rig: ConsoleRig | undefined;

  beforeAll(async () => {
    if (!hasChromium) return;
    rig = await startConsoleRig({
      sim: { powerDelayMs: 1_500 },
      // The raw `http` section, as the YAML file has it (testConfig parses it).
      config: {
        http: {
          port: 0,
          api_token: ADMIN_TOKEN,
          tokens: [
            { name: 'ops-console', token: `${ADMIN_TOKEN}-operate`, role: 'operate' },
            { name: 'viewer', token: READ_TOKEN, role: 'read' },
          ],
        },
      } as unknown as Partial<Config>,
    });
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
  });

  it('powers a vehicle on from its page, shows the wait and the change on the timeline', {
    timeout: 90_000,
  }, async (context) => {
    if (!rig) return context.skip(NO_CHROMIUM);
    rig.sim.control.updateVehicle('veh-0001', { state: 'off', pendingCommand: null, powerCapable: true });
    await expect
      .poll(
        async () =>
          (await readApi<{ power: { state: string } }>(rig!, '/api/vehicles/veh-0001'))?.power.state,
        {
          timeout: 20_000,
        },
      )
      .toBe('off');
    const { page, errors, context: browserContext } = await rig.newPage();
    await rig.logIn(page);
    await page.goto(`${rig.address}/#/vehicle/veh-0001`);
    await expect.poll(() => page.getByTestId('power-state').textContent()).toBe('off');

    await confirmAction(page, 'Power on');
    const progress = page.getByRole('status', { name: 'Power progress' });
    await expect.poll(() => progress.textContent()).toMatch(/Power on: requested → waiting… \(\d+\.\d s\)/);
    await expect
      .poll(() => progress.textContent(), { timeout: 30_000 })
      .toMatch(/requested → completed after \d+\.\d s: the vehicle reports on/);
    expect(rig.sim.control.getVehicle('veh-0001')?.state).toBe('on');

    // The power change arrives on the timeline (live), and the snapshot follows.
    const timeline = page.getByRole('table', { name: 'Timeline' });
    await timeline
      .getByRole('row')
      .filter({ hasText: 'vehicle.power.changed' })
      .filter({ hasText: 'off → on' })
      .waitFor({
        timeout: 20_000,
      });
    await expect.poll(() => page.getByTestId('power-state').textContent(), { timeout: 20_000 }).toBe('on');
    expect(errors.filter((message) => !/status of 401/.test(message))).toEqual([]);
    await browserContext.close();
  });

  it('releases and transfers a robot lease and sends STOP through the API', {
    timeout: 90_000,
  }, async (context) => {
    if (!rig) return context.skip(NO_CHROMIUM);
    const sim = rig.sim.control;
    sim.updateRobot('rb-0001', { lease: { holderId: CLIENT } });
    const { page, errors, context: browserContext } = await rig.newPage();
    await rig.logIn(page);
    await page.goto(`${rig.address}/#/robot/rb-0001`);
    await expect.poll(() => page.getByTestId('lease-holder').textContent(), { timeout: 20_000 }).toBe(CLIENT);

    await confirmAction(page, 'Release lease');
    await page.getByRole('status').filter({ hasText: 'Lease released' }).waitFor();
    expect(sim.getRobot('rb-0001')?.lease.holderId).toBeNull();

    sim.updateRobot('rb-0001', { lease: { holderId: CLIENT } });
    await page.getByLabel('Transfer the lease to').fill('alice');
    await confirmAction(page, 'Transfer lease');
    await page.getByRole('status').filter({ hasText: 'Lease transferred to alice' }).waitFor();
    expect(sim.getRobot('rb-0001')?.lease.holderId).toBe('alice');
    await expect
      .poll(() => page.getByTestId('lease-holder').textContent(), { timeout: 20_000 })
      .toBe('alice');

    // PAUSE, then STOP: destructive, so its confirmation starts on Cancel.
    await confirmAction(page, 'PAUSE');
    await page.getByRole('status').filter({ hasText: 'PAUSE sent' }).waitFor();
    expect(sim.getRobot('rb-0001')?.paused).toBe(true);
    const historyBefore = sim.getRobot('rb-0001')!.commandHistory;
    await page.getByRole('button', { name: 'STOP', exact: true }).click();
    const dialog = page.getByRole('dialog');
    await expect
      .poll(() =>
        dialog
          .getByRole('button', { name: 'Cancel' })
          .evaluate((button) => button === button.ownerDocument.activeElement),
      )
      .toBe(true);
    await dialog.getByRole('button', { name: 'STOP', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'STOP sent' }).waitFor();
    expect(sim.getRobot('rb-0001')?.paused).toBe(false);
    expect(sim.getRobot('rb-0001')!.commandHistory).toBe(historyBefore + 1);

    // A route from the robot's own list (naming a route the simulator lacks creates it).
    sim.updateRobot('rb-0001', { loadedRoute: 'south-loop' });
    sim.updateRobot('rb-0001', { loadedRoute: 'north-loop' });
    await page.reload();
    await page
      .getByLabel('Route to load')
      .getByRole('option', { name: 'south-loop' })
      .waitFor({ state: 'attached' });
    await page.getByLabel('Route to load').selectOption('south-loop');
    await confirmAction(page, 'Load route');
    await page.getByRole('status').filter({ hasText: 'Route south-loop loaded' }).waitFor();
    expect(sim.getRobot('rb-0001')?.loadedRoute).toBe('south-loop');
    expect(errors.filter((message) => !/status of 401/.test(message))).toEqual([]);
    await browserContext.close();
  });

  it('shows power on/off disabled, saying why, on a vehicle without power control', {
    timeout: 60_000,
  }, async (context) => {
    if (!rig) return context.skip(NO_CHROMIUM);
    rig.sim.control.updateVehicle('veh-0003', { powerCapable: false });
    await expect
      .poll(
        async () =>
          (await readApi<{ power: { powerCapable: boolean } }>(rig!, '/api/vehicles/veh-0003'))?.power
            .powerCapable,
        { timeout: 20_000 },
      )
      .toBe(false);
    const { page, context: browserContext } = await rig.newPage();
    await rig.logIn(page);
    await page.goto(`${rig.address}/#/vehicle/veh-0003`);
    const why = 'This vehicle has no power control: the fleet service cannot switch it';
    await page.getByText(`${why}.`).waitFor();
    for (const name of ['Power on', 'Power off']) {
      const button = page.getByRole('button', { name, exact: true });
      expect(await button.isDisabled(), name).toBe(true);
      expect(await button.getAttribute('title')).toBe(why);
    }
    await browserContext.close();
  });

  it('shows a read-role session the actions disabled, with the role they need', {
    timeout: 60_000,
  }, async (context) => {
    if (!rig) return context.skip(NO_CHROMIUM);
    const { page, context: browserContext } = await rig.newPage();
    await rig.logIn(page, READ_TOKEN);
    await page.goto(`${rig.address}/#/robot/rb-0002`);
    await page.getByRole('button', { name: 'STOP', exact: true }).waitFor();
    for (const name of [
      'Release lease',
      'Force release',
      'Transfer lease',
      'STOP',
      'PAUSE',
      'RESUME',
      'Load route',
    ]) {
      const button = page.getByRole('button', { name, exact: true });
      expect(await button.isDisabled(), name).toBe(true);
      expect(await button.getAttribute('title')).toBe('Needs the operate or admin role');
    }
    await page.getByText('Needs the operate or admin role (you are read).').waitFor();
    await page.goto(`${rig.address}/#/vehicle/veh-0002`);
    await page.getByRole('button', { name: 'Power on' }).waitFor();
    expect(await page.getByRole('button', { name: 'Power on' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Power off' }).isDisabled()).toBe(true);
    await browserContext.close();
  });
});
