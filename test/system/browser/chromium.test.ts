import { existsSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../../../src/daemon/index.js';
import { closeQuietly } from '../../../src/lib/redis-connection.js';
import { startSimulator } from '../../../src/simulator/index.js';
import type { Simulator } from '../../../src/simulator/types.js';
import { TOKEN } from '../../http/helpers.js';
import { testConfig } from '../../pollers/harness.js';
import { connect, deletePrefixKeys, eventually, uniquePrefix } from '../../support/redis.js';

// The callbacks of page.evaluate run in the page: `globalThis` there is the window (the project
// compiles without the DOM types, so they say what they use).

/**
 * fleetwatch in a real browser (headless Chromium, Debian's package; `.ci/run` installs it): a
 * page served by fleetwatch logs in with `fetch`, gets the HttpOnly session cookie, powers a
 * vehicle with the CSRF token, follows `/api/events/stream` with `EventSource` (which cannot send
 * an Authorization header: the cookie is what lets it in) and sees the power change arrive from
 * the simulator through the daemon; then the queue UI renders for an admin session, and shows the
 * browser's Basic login prompt without one.
 *
 * Without /usr/bin/chromium the test is skipped and says why.
 */

const CHROMIUM = '/usr/bin/chromium';
const OPERATE = `${TOKEN}-operate`;
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) {
  console.warn(
    `test/system/browser/chromium.test.ts: SKIPPED — ${CHROMIUM} is not installed (apt-get install chromium), ` +
      'so the browser end-to-end test did not run.',
  );
}

describe('fleetwatch in headless Chromium', () => {
  const prefix = uniquePrefix('tb');
  let sim: Simulator;
  let admin: Redis;
  let daemon: Daemon | undefined;
  let browser: Browser | undefined;
  let address: string;
  let vehicle: string;

  beforeAll(async () => {
    if (!hasChromium) return;
    sim = await startSimulator({ vehicles: 2, robots: 1, seed: 5, behaviours: false, powerDelayMs: 500 });
    vehicle = sim.control.state().vehicles[0]!.id;
    sim.control.updateVehicle(vehicle, { powerCapable: true, state: 'off', pendingCommand: null });
    admin = connect();
    daemon = startDaemon(
      testConfig(sim.url, prefix, {
        pollers: { robot_config: { enabled: false } },
        http: {
          port: 0,
          api_token: TOKEN,
          tokens: [{ name: 'ops-console', token: OPERATE, role: 'operate' }],
        },
      }),
      { logger: pino({ enabled: false }) },
    );
    const listening = await daemon.http!.listening;
    if (listening === undefined) throw new Error('the daemon did not serve HTTP');
    address = listening;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await daemon?.stop();
    await sim?.close();
    if (admin) {
      await deletePrefixKeys(admin, prefix);
      await closeQuietly(admin);
    }
  });

  it('logs in, powers a vehicle and sees it on the event stream, then opens the queue UI', {
    timeout: 90_000,
  }, async (context) => {
    if (!hasChromium) {
      context.skip(`${CHROMIUM} is not installed (apt-get install chromium)`);
      return;
    }
    // The daemon has read the vehicle's power once: what follows is a change, not its first sight.
    await eventually(
      async () => {
        const response = await fetch(`${address}/api/vehicles/${vehicle}`, {
          headers: { authorization: `Bearer ${TOKEN}` },
        });
        return response.ok ? ((await response.json()) as { power?: { state: string | null } }) : undefined;
      },
      (view) => view?.power?.state === 'off',
      { timeoutMs: 20_000, intervalMs: 100 },
    );

    const browserContext = await browser!.newContext();
    const page = await browserContext.newPage();
    // A page of fleetwatch's own origin (any will do: the API is what the page talks to).
    expect((await page.goto(`${address}/healthz`))?.status()).toBe(200);

    const login = await page.evaluate(async (token) => {
      const response = await fetch('/api/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token }),
      });
      return { status: response.status, body: await response.json() };
    }, OPERATE);
    expect(login.status).toBe(201);
    expect(login.body).toMatchObject({ actor: 'ops-console', role: 'operate', via: 'session' });

    const cookies = await browserContext.cookies(address);
    expect(cookies).toEqual([
      expect.objectContaining({ name: 'fleetwatch_session', httpOnly: true, sameSite: 'Strict', path: '/' }),
    ]);
    // HttpOnly: the page's scripts cannot read it.
    expect(
      await page.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie),
    ).not.toContain('fleetwatch_session');

    // Follow the vehicle's events with EventSource: no way to add a header, the cookie goes by itself.
    await page.evaluate((subject) => {
      const state = { open: false, types: [] as string[], errors: 0 };
      (globalThis as unknown as { stream: typeof state }).stream = state;
      const source = new EventSource(`/api/events/stream?subject=${encodeURIComponent(subject)}`);
      source.onopen = () => {
        state.open = true;
      };
      source.onerror = () => {
        state.errors += 1;
      };
      source.onmessage = (message) => {
        state.types.push((JSON.parse(message.data) as { type: string }).type);
      };
    }, `vehicle/${vehicle}`);
    await page.waitForFunction(
      () => (globalThis as unknown as { stream: { open: boolean } }).stream.open,
      null,
      {
        timeout: 10_000,
      },
    );

    // A change needs the CSRF token from GET /api/session; without it the session cookie is refused.
    const power = await page.evaluate(async (id) => {
      const url = `/api/vehicles/${encodeURIComponent(id)}/power/on`;
      const refused = await fetch(url, { method: 'POST' });
      const session = (await (await fetch('/api/session')).json()) as { csrfToken: string };
      const accepted = await fetch(url, { method: 'POST', headers: { 'x-csrf-token': session.csrfToken } });
      return {
        refused: {
          status: refused.status,
          code: ((await refused.json()) as { error: { code: string } }).error.code,
        },
        accepted: accepted.status,
      };
    }, vehicle);
    expect(power).toEqual({ refused: { status: 403, code: 'csrf_token_missing' }, accepted: 202 });

    // The simulator switches the vehicle on; the daemon's power poller sees it; the stream says so.
    const seen = await page.waitForFunction(
      () => {
        const types = (globalThis as unknown as { stream: { types: string[] } }).stream.types;
        return types.includes('vehicle.power.changed') ? types : undefined;
      },
      null,
      { timeout: 30_000 },
    );
    expect(await seen.jsonValue()).toContain('vehicle.power.changed');
    expect(sim.control.getVehicle(vehicle)?.state).toBe('on');

    // The queue UI is for admins: this session (operate) is refused, an admin session opens it.
    const refused = await page.goto(`${address}/admin/queues`);
    expect(refused?.status()).toBe(403);
    const adminContext = await browser!.newContext();
    try {
      const adminPage = await adminContext.newPage();
      await adminPage.goto(`${address}/healthz`);
      const adminLogin = await adminPage.evaluate(async (token) => {
        const response = await fetch('/api/session', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ token }),
        });
        return response.status;
      }, TOKEN);
      expect(adminLogin).toBe(201);
      const board = await adminPage.goto(`${address}/admin/queues`);
      expect(board?.status()).toBe(200);
      // Bull Board renders its queue list from its own API, through the same cookie.
      await adminPage.getByText('events', { exact: true }).first().waitFor({ timeout: 20_000 });
      await expect(adminPage.title()).resolves.toContain('fleetwatch');
      expect(await adminPage.content()).toContain('poll-robots');
    } finally {
      await adminContext.close();
    }

    // Without a session, Chromium finds the Basic challenge and asks for credentials (the token as
    // the password); given them, the board opens.
    const basicContext = await browser!.newContext({ httpCredentials: { username: 'ops', password: TOKEN } });
    try {
      const basicPage = await basicContext.newPage();
      const board = await basicPage.goto(`${address}/admin/queues`);
      expect(board?.status()).toBe(200);
      await basicPage.getByText('events', { exact: true }).first().waitFor({ timeout: 20_000 });
    } finally {
      await basicContext.close();
    }
    await browserContext.close();
  });
});
