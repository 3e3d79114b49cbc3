import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../../src/http/routes/console.js';
import { type ConsoleRig, hasChromium, NO_CHROMIUM, startConsoleRig } from './harness.js';

/**
 * The console's frame in headless Chromium: served at `/` with a Content-Security-Policy that
 * allows only this origin's scripts, a login form that exchanges a token for the session cookie,
 * the sections, the theme, and no request that leaves the origin.
 */

if (!hasChromium) console.warn(`test/system/browser/console.test.ts: SKIPPED — ${NO_CHROMIUM}`);

describe('the console in headless Chromium', () => {
  let rig: ConsoleRig | undefined;

  beforeAll(async () => {
    if (hasChromium) rig = await startConsoleRig();
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
  });

  it('logs in with a token, shows the sections, and asks nothing of another origin', {
    timeout: 60_000,
  }, async (context) => {
    if (!rig) return context.skip(NO_CHROMIUM);
    const { page, requests, errors, context: browserContext } = await rig.newPage();
    const answer = await page.goto(`${rig.address}/`);
    expect(answer?.status()).toBe(200);
    expect(answer?.headers()['content-security-policy']).toBe(CONSOLE_CSP);

    // A wrong token: the API's words, and still the login.
    await page.getByLabel('API token').fill('not-a-token-of-this-installation');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('not valid');

    await rig.logIn(page);
    await expect(page.getByText('ops-console')).toBeTruthy();
    const sections = await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link')
      .allTextContents();
    expect(sections).toEqual(['Incidents', 'Fleet', 'Live events', 'Silences', 'Delivery']);
    await page.getByRole('link', { name: 'Fleet' }).click();
    await page.waitForURL(/#\/fleet$/);

    // Dark and light, by the viewer's choice.
    const before = await page.locator('html').getAttribute('data-theme');
    await page.getByRole('button', { name: /Switch to (dark|light) theme/ }).click();
    const other = before === 'dark' ? 'light' : 'dark';
    await page.locator(`html[data-theme="${other}"]`).waitFor({ state: 'attached' });

    // Logging out ends the session: the login again.
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('API token').waitFor();

    const origin = new URL(rig.address).origin;
    expect(requests.filter((url) => new URL(url).origin !== origin)).toEqual([]);
    expect(errors.filter((message) => !/status of 401/.test(message))).toEqual([]);
    await browserContext.close();
  });
  it('says an unknown route is no page, with links to the sections', { timeout: 60_000 }, async (context) => {
    if (!rig) return context.skip(NO_CHROMIUM);
    const { page, context: browserContext } = await rig.newPage();
    await rig.logIn(page);
    await page.goto(`${rig.address}/#/bogus`);
    await page.getByRole('heading', { name: 'No such page', level: 1 }).waitFor();
    await expect(page.title()).resolves.toBe('No such page · fleetwatch');
    await expect(page.getByRole('heading', { name: 'Incidents' }).count()).resolves.toBe(0);
    const main = page.getByRole('main');
    await expect(main.textContent()).resolves.toContain('#/bogus');
    await expect(main.getByRole('link').allTextContents()).resolves.toEqual([
      'Incidents',
      'Fleet',
      'Live events',
      'Silences',
      'Delivery',
    ]);
    await main.getByRole('link', { name: 'Fleet' }).click();
    await page.getByRole('heading', { name: 'Fleet', level: 1 }).waitFor();
    // The empty route is still the landing page.
    await page.goto(`${rig.address}/#/`);
    await page.getByRole('heading', { name: 'Incidents', level: 1 }).waitFor();
    await browserContext.close();
  });
});
