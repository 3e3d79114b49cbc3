import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, type ConsoleRig, hasChromium, NO_CHROMIUM, startConsoleRig } from './harness.js';

/**
 * The Silences page in headless Chromium: the form opened prefilled from a link, the API's problem
 * shown next to the field it names, a silence created, listed active and expired; the configured
 * maintenance windows beside them.
 */

if (!hasChromium) console.warn(`test/system/browser/silences.test.ts: SKIPPED — ${NO_CHROMIUM}`);

interface Listed {
  items: { id: string; state: string; matchers: Record<string, unknown> }[];
}

describe('the Silences page', () => {
  let rig: ConsoleRig | undefined;

  beforeAll(async () => {
    if (hasChromium)
      rig = await startConsoleRig({
        config: {
          notifications: {
            maintenance: [{ name: 'always-open', schedule: '* * * * *', duration: '1d' }],
          },
        } as never,
      });
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
  });

  async function silences(all = false): Promise<Listed> {
    const response = await fetch(`${rig!.address}/api/silences${all ? '?all=true' : ''}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    return (await response.json()) as Listed;
  }

  it('creates a silence from the form, lists it active, expires it', { timeout: 60_000 }, async (context) => {
    if (!rig) return context.skip(NO_CHROMIUM);
    const { page, errors, context: browserContext } = await rig.newPage();
    await rig.logIn(page);
    // A link for another incident first; the next one, followed while the form is open, fills it anew.
    await page.goto(`${rig.address}/#/silences/new?type=robot.health.down&comment=rb-0007`);
    await expect
      .poll(() => page.getByRole('form', { name: 'New silence' }).getByLabel('Matchers').inputValue())
      .toBe('type=robot.health.down');
    // As a chat message links here: one matcher line per `matchers`, a comment to start from.
    await page.goto(
      `${rig.address}/#/silences/new?matchers=type%3Dvehicle.vpn.*&matchers=subject%3Dvehicle%2Fveh-0003&comment=re%3A+veh-0003+is+off+the+VPN`,
    );

    const form = page.getByRole('form', { name: 'New silence' });
    await expect
      .poll(() => form.getByLabel('Matchers').inputValue())
      .toBe('type=vehicle.vpn.*\nsubject=vehicle/veh-0003');
    await expect(form.getByLabel('Comment').inputValue()).resolves.toBe('re: veh-0003 is off the VPN');
    await expect(form.getByLabel('Created by').inputValue()).resolves.toBe('ops-console');

    // A duration beyond a year: the API's problem, next to the Duration field; nothing stored.
    await form.getByLabel('Duration').fill('9999d');
    await form.getByLabel('Comment').fill('north yard network work, CHG-4711');
    await form.getByRole('button', { name: 'Create silence' }).click();
    await page
      .getByRole('dialog', { name: 'Create this silence?' })
      .getByRole('button', { name: 'Create' })
      .click();
    const durationField = form.locator('.field', { has: page.getByLabel('Duration') });
    const problem = durationField.getByRole('alert');
    await problem.waitFor();
    await expect(problem.textContent()).resolves.toMatch(
      /expected a duration between 1s and 365d.*got 9999d/,
    );
    await expect(form.getByLabel('Duration').getAttribute('aria-invalid')).resolves.toBe('true');
    expect((await silences(true)).items).toEqual([]);

    await form.getByLabel('Duration').fill('2h');
    await form.getByRole('button', { name: 'Create silence' }).click();
    await page
      .getByRole('dialog', { name: 'Create this silence?' })
      .getByRole('button', { name: 'Create' })
      .click();
    await page.waitForURL(/#\/silences$/);
    const table = page.getByRole('table', { name: 'Silences' });
    const row = table.getByRole('row').filter({ hasText: 'subject=vehicle/veh-0003' });
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain('active');
    await expect(row.textContent()).resolves.toContain('north yard network work, CHG-4711');
    const [stored] = (await silences()).items;
    expect(stored).toMatchObject({
      state: 'active',
      matchers: { type: 'vehicle.vpn.*', subject: 'vehicle/veh-0003' },
    });

    // Expire, confirmed: gone from the list, listed as expired with "Show expired".
    await row.getByRole('button', { name: /^Expire silence/ }).click();
    await page
      .getByRole('dialog', { name: 'Expire this silence?' })
      .getByRole('button', { name: 'Expire' })
      .click();
    await row.waitFor({ state: 'detached' });
    await page.getByLabel('Show expired').check();
    const expired = table.getByRole('row').filter({ hasText: 'subject=vehicle/veh-0003' });
    await expect.poll(() => expired.textContent()).toContain('expired');
    expect((await silences(true)).items).toEqual([
      expect.objectContaining({ id: stored!.id, state: 'expired' }),
    ]);

    // The configured maintenance window, open now.
    const windows = page.getByRole('table', { name: 'Maintenance windows' });
    await expect(
      windows.getByRole('row').filter({ hasText: 'always-open' }).textContent(),
    ).resolves.toContain('open until');
    // The browser logs the session check before the login (401) and the refused duration (400).
    expect(errors.filter((message) => !/status of (401|400)/.test(message))).toEqual([]);
    await browserContext.close();
  });
});
