/**
 * Takes the console's screenshots for the README: `npx tsx scripts/screenshots.ts`.
 *
 * Starts the simulator and a `fleetwatch run` daemon in this process on a throwaway Redis prefix
 * (REDIS_URL, else the local Redis, else a private one, as the demo finds it), makes a demo fleet
 * of incidents (vehicles off the VPN, one of them silenced; a robot down), a receiver that is held
 * (a loopback stand-in answering 429 with `Retry-After`) and one whose notifications are
 * dead-lettered (answering 500), logs in with headless Chromium (/usr/bin/chromium, or CHROMIUM)
 * and saves `docs/images/console-*.png`: each page at 1280×800 in the light theme, the incidents
 * at phone width, the fleet in the dark theme. A page that is still a placeholder is shot as it
 * is. Then it deletes its keys and stops everything it started.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { pino } from 'pino';
import { chromium, type Page } from 'playwright-core';
import { configSchema } from '../src/config/schema.js';
import { startDaemon } from '../src/daemon/index.js';
import { demoConfigInput } from '../src/demo/config.js';
import { deletePrefixKeys, findRedis } from '../src/demo/redis.js';
import { startSimulator } from '../src/simulator/index.js';
import { buildConsole, ROOT } from './build-console.js';

const OUT = resolve(ROOT, 'docs', 'images');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const TOKEN = randomBytes(24).toString('hex');
const VEHICLES_DOWN = ['veh-0002', 'veh-0005', 'veh-0007'];
const SILENCED = 'veh-0007';
/** How long the script waits for the fleet to reach each state before shooting what there is. */
const SETTLE_MS = 30_000;
/** Every replica reads the silences again at least this often. */
const SILENCE_CACHE_MS = 2_500;

/** A loopback stand-in for a webhook receiver that always gives the same answer. */
async function standIn(
  status: number,
  headers: Record<string, string> = {},
): Promise<Server & { url: string }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(status, headers).end());
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return Object.assign(server, { url: `http://127.0.0.1:${port}/hook` });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T | undefined> {
  const deadline = Date.now() + SETTLE_MS;
  while (Date.now() < deadline) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((done) => setTimeout(done, 250));
  }
  console.warn(`screenshots: ${what} did not happen within ${SETTLE_MS / 1000} s; shooting what there is`);
  return undefined;
}

const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;

async function main(): Promise<void> {
  await buildConsole();
  const redis = await findRedis(process.env);
  const prefix = `fwshots-${randomBytes(4).toString('hex')}`;
  const sim = await startSimulator({ vehicles: 12, robots: 4, seed: 7, behaviours: false });
  const held = await standIn(429, { 'retry-after': '3600' });
  const broken = await standIn(500);
  // The demo's config (pollers every second or two, thresholds of one or two), with receivers
  // that fail and hold, so the delivery page has something to show.
  const config = configSchema.parse({
    ...demoConfigInput({ simulatorUrl: sim.url, redisUrl: redis.url, prefix, logLevel: 'silent' }),
    receivers: [
      { kind: 'webhook', name: 'ops-bridge', url: broken.url, secrets: [whsec()], retry_schedule: ['0s'] },
      { kind: 'webhook', name: 'pager', url: held.url, secrets: [whsec()], max_hold: '2h' },
    ],
    notifications: {
      route: {
        receiver: 'ops-bridge',
        group_by: ['...'],
        group_wait: '0s',
        group_interval: '1s',
        routes: [
          { match: { severity: 'info' }, receiver: 'ops-bridge', continue: true },
          { match: { severity: 'warning' }, receiver: 'pager' },
        ],
      },
      maintenance: [
        { name: 'saturday-updates', schedule: '0 22 * * sat', duration: '4h', time_zone: 'Europe/Berlin' },
      ],
    },
    http: { host: '127.0.0.1', port: 0, api_token: TOKEN },
  });
  const daemon = startDaemon(config, { logger: pino({ enabled: false }) });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const address = await daemon.http?.listening;
    if (!address) throw new Error('the daemon did not serve HTTP');
    const call = async (path: string, init: RequestInit = {}) => {
      const response = await fetch(`${address}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      });
      return { ok: response.ok, body: (await response.json()) as Record<string, unknown> };
    };
    const total = async (path: string) => ((await call(path)).body.total as number | undefined) ?? 0;
    const items = async (path: string) => ((await call(path)).body.items as unknown[] | undefined) ?? [];

    const silencedAt = Date.now();
    await call('/api/silences', {
      method: 'POST',
      body: JSON.stringify({
        matchers: { subject: `vehicle/${SILENCED}` },
        duration: '4h',
        createdBy: 'dana',
        comment: 'depot network work, CHG-4711',
      }),
    });
    // After the first poll, so that the losses are news, and after the silence cache (2 s) has
    // been read again, so that the silence mutes the vehicle's.
    await until('the first poll of the fleet', async () =>
      (await total('/api/vehicles')) >= 12 && Date.now() - silencedAt > SILENCE_CACHE_MS ? true : undefined,
    );
    for (const id of VEHICLES_DOWN) sim.control.updateVehicle(id, { vpnConnected: false });
    const robot = sim.control.state().robots[1]?.deviceId;
    if (robot) sim.control.updateRobot(robot, { healthy: false });
    await until('the incidents', async () =>
      (await total('/api/incidents?subject=robot/*')) > 0 ? true : undefined,
    );
    await until('a dead letter', async () =>
      (await items('/api/dead-letters')).length > 0 ? true : undefined,
    );
    await until('the held receiver', async () =>
      (await items('/api/receivers')).some((item) => (item as { hold: unknown }).hold) ? true : undefined,
    );

    mkdirSync(OUT, { recursive: true });
    const shoot = async (
      name: string,
      hash: string,
      options: { width?: number; height?: number; dark?: boolean } = {},
    ) => {
      const context = await browser.newContext({
        viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
        colorScheme: options.dark ? 'dark' : 'light',
      });
      const page = await context.newPage();
      await logIn(page, address);
      await page.goto(`${address}/${hash}`);
      await settled(page);
      const file = resolve(OUT, `console-${name}.png`);
      await page.screenshot({ path: file });
      console.log(`wrote docs/images/console-${name}.png`);
      await context.close();
    };
    await shoot('incidents', '#/incidents');
    await shoot('fleet', '#/fleet');
    await shoot('vehicle', `#/vehicle/${VEHICLES_DOWN[0]}`);
    if (robot) await shoot('robot', `#/robot/${encodeURIComponent(robot)}`);
    await shoot('silences', '#/silences');
    await shoot('delivery', '#/delivery');
    await shoot('phone', '#/incidents', { width: 375, height: 740 });
    await shoot('dark', '#/fleet', { dark: true });
  } finally {
    await browser.close();
    await daemon.stop();
    await sim.close();
    held.close();
    broken.close();
    const left = await deletePrefixKeys(redis.url, prefix);
    if (left > 0) console.warn(`screenshots: ${left} keys under {${prefix}} are left`);
    await redis.stop();
  }
}

async function logIn(page: Page, address: string): Promise<void> {
  await page.goto(`${address}/`);
  await page.getByLabel('API token').fill(TOKEN);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('navigation', { name: 'Sections' }).waitFor();
}

/** The page's heading is there and nothing says "Loading…" any more (at most a few seconds). */
async function settled(page: Page): Promise<void> {
  await page
    .locator('main h1')
    .first()
    .waitFor({ timeout: 10_000 })
    .catch(() => {});
  await page
    .getByText('Loading…')
    .first()
    .waitFor({ state: 'detached', timeout: 10_000 })
    .catch(() => {});
  // Fonts and the last paint of the tables.
  await page.evaluate('document.fonts.ready').catch(() => {});
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`screenshots: ${(error as Error).message}`);
    process.exit(1);
  },
);
