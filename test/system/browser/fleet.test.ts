import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, type ConsoleRig, hasChromium, NO_CHROMIUM, startConsoleRig } from './harness.js';

/**
 * The fleet page in headless Chromium: every vehicle and robot the daemon observed, filterable,
 * sortable, loaded page by page and drawn with only the rows in view in the DOM.
 */

if (!hasChromium) console.warn(`test/system/browser/fleet.test.ts: SKIPPED — ${NO_CHROMIUM}`);

const VEHICLES = 2_000;

async function vpnOf(rig: ConsoleRig, id: string): Promise<boolean | null | undefined> {
  const response = await fetch(`${rig.address}/api/vehicles/${id}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  if (!response.ok) return undefined;
  return ((await response.json()) as { vpn: { connected: boolean | null } }).vpn.connected;
}

describe('the fleet page', () => {
  let rig: ConsoleRig | undefined;

  beforeAll(async () => {
    if (!hasChromium) return;
    // Many vehicles, so the page loads several API pages; power is not polled (2,000 status reads
    // a second would only slow the machine), the list alone makes the fleet.
    rig = await startConsoleRig({
      sim: { vehicles: VEHICLES, robots: 2 },
      pollers: { power: { enabled: false } },
    });
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
  });

  it('lists the fleet, filters, sorts, and keeps the DOM small while scrolling to the end', {
    timeout: 90_000,
  }, async (context) => {
    if (!rig) return context.skip(NO_CHROMIUM);
    // veh-0001 … veh-0009 on the VPN but veh-0007 (the seeded fleet has others off it).
    for (let n = 1; n <= 9; n += 1) rig.sim.control.updateVehicle(`veh-000${n}`, { vpnConnected: n !== 7 });
    await expect.poll(() => vpnOf(rig!, 'veh-0007'), { timeout: 30_000 }).toBe(false);
    await expect.poll(() => vpnOf(rig!, 'veh-0009'), { timeout: 30_000 }).toBe(true);
    const { page, errors, context: browserContext } = await rig.newPage();
    await rig.logIn(page);
    await page.getByRole('link', { name: 'Fleet' }).click();
    const table = page.getByRole('table', { name: 'Vehicles' });
    await expect
      .poll(
        () =>
          page
            .getByRole('status')
            .filter({ hasText: /vehicles$/ })
            .textContent(),
        { timeout: 30_000 },
      )
      .toBe(`${VEHICLES.toLocaleString('en')} vehicles`);

    // Only the rows in view (and a few either side) are in the DOM.
    const rendered = await table.getByRole('row').count();
    expect(rendered).toBeGreaterThan(5);
    expect(rendered).toBeLessThan(100);
    expect(await table.getAttribute('aria-rowcount')).toBe(String(VEHICLES + 1));
    await table.getByRole('link', { name: 'veh-0001' }).waitFor();

    // Scrolling to the end shows the last vehicle, still with few rows.
    await page.locator('.vrows').evaluate((element) => {
      element.scrollTop = element.scrollHeight;
    });
    await table.getByRole('link', { name: 'veh-2000' }).waitFor();
    expect(await table.getByRole('row').count()).toBeLessThan(100);

    // Sorted by id; a click on the header turns it round: the last vehicle comes first.
    await page.locator('.vrows').evaluate((element) => {
      element.scrollTop = 0;
    });
    expect(await table.getByRole('columnheader', { name: /^Vehicle/ }).getAttribute('aria-sort')).toBe(
      'ascending',
    );
    await table.getByRole('button', { name: /^Vehicle/ }).click();
    await expect
      .poll(() => table.getByRole('columnheader', { name: /^Vehicle/ }).getAttribute('aria-sort'))
      .toBe('descending');
    await expect.poll(() => table.getByRole('row').nth(1).getByRole('link').textContent()).toBe('veh-2000');

    // A filter word narrows the list.
    await page.getByLabel('Filter vehicles').fill('veh-001');
    await expect
      .poll(() =>
        page
          .getByRole('status')
          .filter({ hasText: /vehicles$/ })
          .textContent(),
      )
      .toBe(`10 of ${VEHICLES.toLocaleString('en')} vehicles`);
    expect(await table.getByRole('row').count()).toBe(11);

    // With a state filter: the vehicle the simulator took off the VPN before the page loaded.
    await page.getByLabel('Filter vehicles').fill('veh-000');
    await page.getByLabel('Show').selectOption({ label: 'VPN down' });
    await expect.poll(() => table.getByRole('link').allTextContents()).toEqual(['veh-0007']);

    // Live: another one drops off; its event makes the page fetch it again, no reload.
    rig.sim.control.updateVehicle('veh-0009', { vpnConnected: false });
    await expect
      .poll(() => table.getByRole('link').allTextContents(), { timeout: 30_000 })
      .toEqual(['veh-0009', 'veh-0007']);

    // The robots' tab, and a row links to the entity's page.
    await page.getByRole('tab', { name: /Robots/ }).click();
    const robots = page.getByRole('table', { name: 'Robots' });
    await robots.getByRole('link', { name: 'rb-0001' }).click();
    await page.waitForURL(/#\/robot\/rb-0001$/);

    // The session check before the login answers 401; nothing else may fail.
    expect(errors.filter((message) => !/status of 401/.test(message))).toEqual([]);
    await browserContext.close();
  });

  it('says when elements of the list are not as the spec says, and stops saying it once they are', {
    timeout: 90_000,
  }, async (context) => {
    if (!rig) return context.skip(NO_CHROMIUM);
    const rejected = async () => {
      const response = await fetch(`${rig!.address}/api/vehicles?limit=1`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      return ((await response.json()) as { list: { rejected: { count: number } } }).list.rejected.count;
    };
    rig.sim.control.updateVehicle('veh-0050', { listFields: { ipAddress: null } });
    await expect.poll(rejected, { timeout: 30_000 }).toBe(1);
    const { page, errors, context: browserContext } = await rig.newPage();
    await rig.logIn(page);
    await page.goto(`${rig.address}/#/fleet`);
    const notice = page.getByRole('status').filter({ hasText: 'of the vehicle list' });
    await expect
      .poll(() => notice.textContent(), { timeout: 30_000 })
      .toMatch(
        /^1 element of the vehicle list is not as the spec says: fleetwatch cannot watch what it carries \(the VPN state and address of the vehicles they name\)\. First: .*veh-0050.*ipAddress/,
      );

    rig.sim.control.updateVehicle('veh-0050', { listFields: null });
    await expect.poll(rejected, { timeout: 30_000 }).toBe(0);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /vehicles$/ })
      .waitFor();
    await expect.poll(() => notice.count(), { timeout: 30_000 }).toBe(0);
    expect(errors.filter((message) => !/status of 401/.test(message))).toEqual([]);
    await browserContext.close();
  });
});
