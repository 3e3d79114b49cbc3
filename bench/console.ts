import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { chromium, type Page } from 'playwright-core';
import { request } from 'undici';
import { vehicleId } from '../src/simulator/seed.js';
import { PrivateRedis } from '../test/support/private-redis.js';
import { FleetwatchProcess } from './fleetwatch.js';
import { type Percentiles, percentiles } from './measure.js';
import { SimulatorProcess } from './simulator.js';

/**
 * `npm run bench -- console`: the web console's fleet page with 40,000 entities (20,000 vehicles
 * and 20,000 robots) in headless Chromium, next to a reference measured in the same run: the same
 * API pages fetched by undici in Node, with no page at all. Only the list pollers run: every row
 * has its id, presence and VPN reading, the robot readings are empty; the API reads every facet of
 * every row all the same, so each page costs the server what a polled fleet's does.
 */

export const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'console-bench-token-0123456789abcdef';
const FLEET = { vehicles: 20_000, robots: 20_000 };
const PAGE_LIMIT = 1_000;
/** Filter updates measured: each changes the count of rows shown. */
const FILTER_TEXTS = ['veh-1', '', 'veh-19', '', 'veh-0001', '', 'veh-2', '', 'veh-123', ''];

export interface ConsoleResult {
  entities: number;
  /** Reference: every page of both kinds by undici, both kinds at once as the page loads them. */
  api: { firstPageMs: number; allPagesMs: number; pages: number; bytes: number };
  console: {
    firstRowsMs: number;
    allRowsMs: number;
    filter: Percentiles;
    scrollToEndMs: number;
    /** Table rows in the DOM after scrolling to the end. */
    domRows: number;
    /** The page's JS heap after loading the fleet. */
    heapBytes: number;
  };
}

type Log = (message: string) => void;

// What the functions handed to `page.evaluate` use in the page (Chromium): declared here because
// this file is type-checked against Node's globals, not the DOM's.
interface PageElement {
  textContent: string | null;
  value: string;
  scrollTop: number;
  scrollHeight: number;
  dispatchEvent(event: unknown): boolean;
  querySelectorAll(selector: string): Iterable<PageElement>;
}
declare const document: {
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): Iterable<PageElement>;
};
declare const requestAnimationFrame: (callback: () => void) => number;

async function waitForFleet(base: string, log: Log): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const totals = await Promise.all(
      ['vehicles', 'robots'].map(async (kind) => {
        const res = await request(`${base}/api/${kind}?limit=1`, {
          headers: { authorization: `Bearer ${TOKEN}` },
        });
        const body = (await res.body.json()) as { total?: number };
        return body.total ?? 0;
      }),
    );
    if (totals[0] === FLEET.vehicles && totals[1] === FLEET.robots) return;
    if (Date.now() > deadline)
      throw new Error(`fleetwatch lists ${totals.join(' + ')} entities, not the fleet`);
    log(`waiting for the lists: ${totals.join(' + ')}`);
    await delay(1_000);
  }
}

/** Every page of one kind, as the console asks for them. */
async function pageThrough(base: string, kind: string, onPage: (bytes: number) => void): Promise<void> {
  let cursor: string | null = null;
  do {
    const query: string = `limit=${PAGE_LIMIT}${cursor ? `&cursor=${cursor}` : ''}`;
    const res = await request(`${base}/api/${kind}?${query}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const text = await res.body.text();
    onPage(text.length);
    cursor = (JSON.parse(text) as { nextCursor: string | null }).nextCursor;
  } while (cursor);
}

async function measureApi(base: string): Promise<ConsoleResult['api']> {
  const started = performance.now();
  let firstPageMs = Number.NaN;
  let pages = 0;
  let bytes = 0;
  const onPage = (size: number) => {
    if (pages === 0) firstPageMs = performance.now() - started;
    pages += 1;
    bytes += size;
  };
  await Promise.all([pageThrough(base, 'vehicles', onPage), pageThrough(base, 'robots', onPage)]);
  return { firstPageMs, allPagesMs: performance.now() - started, pages, bytes };
}

/**
 * One filter update, timed in the page: from the input event to the new count shown, painted.
 * (The functions run in the page have no named inner functions: the TypeScript loader would wrap
 * those in a helper the page does not have.)
 */
function timeFilter(page: Page, text: string): Promise<number> {
  return page.evaluate(async (value) => {
    const input = document.querySelector('input[aria-label="Filter vehicles"]')!;
    const before = [...document.querySelectorAll('[role="status"]')]
      .map((element) => element.textContent)
      .join('|');
    const started = performance.now();
    input.value = value;
    input.dispatchEvent(new Event('input', { bubbles: true }));
    for (const deadline = started + 60_000; ; ) {
      if (performance.now() > deadline)
        throw new Error(`the count did not change after filtering by "${value}"`);
      await new Promise<void>((resolve) => requestAnimationFrame(resolve));
      const shown = [...document.querySelectorAll('[role="status"]')]
        .map((element) => element.textContent)
        .join('|');
      if (shown !== before) break;
    }
    await new Promise<void>((resolve) => requestAnimationFrame(resolve));
    return performance.now() - started;
  }, text);
}

async function measureBrowser(base: string, workDir: string, log: Log): Promise<ConsoleResult['console']> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('pageerror', (error) => log(`page error: ${error.message}`));
    try {
      return await measurePage(page, base, log);
    } catch (error) {
      const shot = join(workDir, 'console-failure.png');
      await page.screenshot({ path: shot }).catch(() => {});
      log(
        `the page as it was (${shot}): ${(
          await page
            .locator('main')
            .textContent()
            .catch(() => '')
        )?.slice(0, 300)}`,
      );
      throw error;
    }
  } finally {
    await browser.close();
  }
}

async function measurePage(page: Page, base: string, log: Log): Promise<ConsoleResult['console']> {
  await page.goto(`${base}/`);
  await page.getByLabel('API token').fill(TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('navigation', { name: 'Sections' }).waitFor();

  const started = performance.now();
  // The robots load alongside the vehicles (the tab shown): their last page ends the load.
  let robotsLoadedMs = Number.NaN;
  const robotsLoaded = page.waitForResponse(
    async (response) => {
      if (!new URL(response.url()).pathname.endsWith('/api/robots')) return false;
      const last = ((await response.json()) as { nextCursor: string | null }).nextCursor === null;
      if (last) robotsLoadedMs = performance.now() - started;
      return last;
    },
    { timeout: 300_000 },
  );
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Fleet' }).click();
  const table = page.getByRole('table', { name: 'Vehicles' });
  await table.locator('tbody tr').first().waitFor({ timeout: 120_000 });
  const firstRowsMs = performance.now() - started;
  log(`first rows after ${Math.round(firstRowsMs)} ms`);
  await page
    .getByRole('status')
    .filter({ hasText: `${FLEET.vehicles.toLocaleString('en')} vehicles` })
    .waitFor({ timeout: 300_000 });
  await page.locator('.fleet-progress').waitFor({ state: 'detached', timeout: 300_000 });
  await robotsLoaded;
  const allRowsMs = Math.max(performance.now() - started, robotsLoadedMs);
  log(`all rows after ${Math.round(allRowsMs)} ms`);

  const filterMs: number[] = [];
  for (const text of FILTER_TEXTS) filterMs.push(await timeFilter(page, text));

  // The table is sorted by id as text (veh-9999 comes after veh-20000).
  const lastVehicle = Array.from({ length: FLEET.vehicles }, (_, i) => vehicleId(i + 1))
    .sort()
    .at(-1);
  const scrollToEndMs = await page.evaluate(async (last) => {
    const viewport = document.querySelector('.vrows')!;
    const started = performance.now();
    viewport.scrollTop = viewport.scrollHeight;
    for (const deadline = started + 60_000; ; ) {
      if (performance.now() > deadline) throw new Error(`${last} did not appear at the end`);
      await new Promise<void>((resolve) => requestAnimationFrame(resolve));
      if ([...viewport.querySelectorAll('a')].some((link) => link.textContent === last)) break;
    }
    await new Promise<void>((resolve) => requestAnimationFrame(resolve));
    return performance.now() - started;
  }, lastVehicle);
  const domRows = await table.locator('tr').count();
  const heapBytes = await page.evaluate(
    () => (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? 0,
  );
  return { firstRowsMs, allRowsMs, filter: percentiles(filterMs), scrollToEndMs, domRows, heapBytes };
}

export async function measureConsole(root: string, log: Log): Promise<ConsoleResult> {
  const workDir = mkdtempSync(join(tmpdir(), 'fleetwatch-bench-console-'));
  const redis = await PrivateRedis.start();
  const simulator = await SimulatorProcess.start(root, FLEET, workDir);
  let fleetwatch: FleetwatchProcess | undefined;
  try {
    const off = { enabled: false };
    fleetwatch = await FleetwatchProcess.start({
      root,
      workDir,
      simulatorUrl: simulator.url,
      redis: { url: `redis://127.0.0.1:${redis.port}` },
      sinkUrl: 'http://127.0.0.1:9/',
      intervalMs: 60_000,
      overrides: {
        pollers: {
          vehicles: { interval: '60s' },
          robots: { interval: '60s' },
          power: off,
          robot_health: off,
          robot_feedback: off,
          robot_lease: off,
          robot_config: off,
          robot_command_queue: off,
          upstream: { interval: '60s' },
        },
        receivers: [],
        notifications: {},
      },
      apiToken: TOKEN,
    });
    const base = fleetwatch.address;
    log(`fleetwatch at ${base}; waiting for ${FLEET.vehicles} + ${FLEET.robots} entities`);
    await waitForFleet(base, log);
    const api = await measureApi(base);
    log(
      `API: first page ${Math.round(api.firstPageMs)} ms, all ${api.pages} pages ${Math.round(api.allPagesMs)} ms`,
    );
    const page = await measureBrowser(base, workDir, log);
    log(
      `console: first rows ${Math.round(page.firstRowsMs)} ms, all ${Math.round(page.allRowsMs)} ms, filter p50 ${Math.round(page.filter.p50)} ms, scroll to end ${Math.round(page.scrollToEndMs)} ms, ${page.domRows} rows in the DOM`,
    );
    return { entities: FLEET.vehicles + FLEET.robots, api, console: page };
  } finally {
    await fleetwatch?.stop();
    await simulator.stop();
    await redis.stop();
  }
}
