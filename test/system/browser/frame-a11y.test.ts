import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleRig, hasChromium, NO_CHROMIUM, startConsoleRig } from './harness.js';

/**
 * The console's frame by keyboard and on a phone: the first Tab reaches "Skip to content", which
 * moves focus to the content without changing the route; a focused link shows a focus ring; a
 * change of page names it in the title and starts focus at the content; at 375 px the sections
 * wrap and nothing is wider than the screen.
 */

// Run in the page (this project's types have no DOM): what has focus, and how wide the page is.
const ACTIVE_ID = 'document.activeElement?.id';
const ACTIVE_TEXT = 'document.activeElement?.textContent';
const ACTIVE_STYLE = `(() => {
  const style = getComputedStyle(document.activeElement);
  return { text: document.activeElement.textContent, outline: style.outlineStyle, width: style.outlineWidth };
})()`;
const PAGE_WIDTH = 'document.documentElement.scrollWidth';

if (!hasChromium) console.warn(`test/system/browser/frame-a11y.test.ts: SKIPPED — ${NO_CHROMIUM}`);

describe('the console frame: keyboard and phone', () => {
  let rig: ConsoleRig | undefined;

  beforeAll(async () => {
    if (hasChromium) rig = await startConsoleRig();
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
  });

  it('skips to the content, shows focus, moves focus on a change of page', {
    timeout: 60_000,
  }, async (context) => {
    if (!rig) return context.skip(NO_CHROMIUM);
    const { page, context: browserContext } = await rig.newPage();
    await rig.logIn(page);
    // A fresh load: focus starts at the top of the document.
    await page.goto(`${rig.address}/#/silences`);
    await page.reload();
    await page.getByRole('heading', { name: 'Silences', level: 1 }).waitFor();
    await expect(page.title()).resolves.toBe('Silences · fleetwatch');

    await page.keyboard.press('Tab');
    const skip = page.getByRole('button', { name: 'Skip to content' });
    await expect(page.evaluate(ACTIVE_TEXT)).resolves.toBe('Skip to content');
    const box = await skip.boundingBox();
    expect(box && box.x >= 0 && box.y >= 0).toBe(true);
    await page.keyboard.press('Enter');
    await expect(page.evaluate(ACTIVE_ID)).resolves.toBe('content');
    expect(new URL(page.url()).hash).toBe('#/silences');

    // From the top again: after the skip button, the first section link, with a visible ring.
    await page.reload();
    await page.getByRole('heading', { name: 'Silences', level: 1 }).waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    const focused = (await page.evaluate(ACTIVE_STYLE)) as { text: string; outline: string; width: string };
    expect(focused.text).toBe('Incidents');
    expect(focused.outline).toBe('solid');
    expect(focused.width).toBe('2px');

    await page.keyboard.press('Enter');
    await page.waitForURL(/#\/incidents$/);
    await expect.poll(() => page.evaluate(ACTIVE_ID)).toBe('content');
    await expect(page.title()).resolves.toBe('Incidents · fleetwatch');
    await browserContext.close();
  });

  it('wraps the sections on a phone, nothing wider than the screen', { timeout: 60_000 }, async (context) => {
    if (!rig) return context.skip(NO_CHROMIUM);
    const browserContext = await rig.browser.newContext({ viewport: { width: 375, height: 740 } });
    const page = await browserContext.newPage();
    await rig.logIn(page);
    for (const hash of ['#/incidents', '#/silences', '#/delivery']) {
      await page.goto(`${rig.address}/${hash}`);
      await page.locator('main h1').waitFor();
      await expect(page.evaluate(PAGE_WIDTH)).resolves.toBeLessThanOrEqual(375);
      const links = page.getByRole('navigation', { name: 'Sections' }).getByRole('link');
      for (const link of await links.all()) {
        const box = await link.boundingBox();
        expect(box, (await link.textContent()) ?? '').not.toBeNull();
        expect(box!.x + box!.width).toBeLessThanOrEqual(375);
        expect(box!.height).toBeGreaterThanOrEqual(24);
      }
    }
    await browserContext.close();
  });
});
