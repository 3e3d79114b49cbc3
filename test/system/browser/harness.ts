import { existsSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { Config } from '../../../src/config/schema.js';
import { type Daemon, startDaemon } from '../../../src/daemon/index.js';
import { closeQuietly } from '../../../src/lib/redis-connection.js';
import { startSimulator } from '../../../src/simulator/index.js';
import type { Simulator, SimulatorOptions } from '../../../src/simulator/types.js';
import { TOKEN } from '../../http/helpers.js';
import { testConfig } from '../../pollers/harness.js';
import { connect, deletePrefixKeys, uniquePrefix } from '../../support/redis.js';

/**
 * What the console's browser tests share: the simulator, a `fleetwatch run` daemon in process (real
 * Redis, real HTTP on loopback) with the admin token `TOKEN` and an operate token, and headless
 * Chromium (Debian's package; `.ci/run` installs it). Without /usr/bin/chromium `hasChromium` is
 * false and each test skips saying why.
 */

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
export const OPERATE_TOKEN = `${TOKEN}-operate`;
export const ADMIN_TOKEN = TOKEN;
export const NO_CHROMIUM = `${CHROMIUM} is not installed (apt-get install chromium)`;

export interface ConsoleRig {
  sim: Simulator;
  admin: Redis;
  daemon: Daemon;
  browser: Browser;
  /** `http://127.0.0.1:<port>` */
  address: string;
  prefix: string;
  /** A fresh browser context (own cookies), its page, and every request URL it made. */
  newPage(): Promise<{ context: BrowserContext; page: Page; requests: string[]; errors: string[] }>;
  /** Logs in through the console's own login form. */
  logIn(page: Page, token?: string): Promise<void>;
  close(): Promise<void>;
}

export async function startConsoleRig(
  options: { sim?: SimulatorOptions; config?: Partial<Config>; pollers?: Record<string, unknown> } = {},
): Promise<ConsoleRig> {
  const prefix = uniquePrefix('tcon');
  const sim = await startSimulator({ vehicles: 3, robots: 2, seed: 5, behaviours: false, ...options.sim });
  const admin = connect();
  const config = testConfig(sim.url, prefix, {
    pollers: { robot_config: { enabled: false }, ...options.pollers },
    http: {
      port: 0,
      api_token: ADMIN_TOKEN,
      tokens: [{ name: 'ops-console', token: OPERATE_TOKEN, role: 'operate' }],
    },
    ...options.config,
  });
  const daemon = startDaemon(config, { logger: pino({ enabled: false }) });
  const address = await daemon.http!.listening;
  if (address === undefined) throw new Error('the daemon did not serve HTTP');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  return {
    sim,
    admin,
    daemon,
    browser,
    address,
    prefix,
    async newPage() {
      const context = await browser.newContext();
      const page = await context.newPage();
      const requests: string[] = [];
      const errors: string[] = [];
      page.on('request', (request) => requests.push(request.url()));
      page.on('pageerror', (error) => errors.push(error.message));
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      return { context, page, requests, errors };
    },
    async logIn(page, token = OPERATE_TOKEN) {
      await page.goto(`${address}/`);
      await page.getByLabel('API token').fill(token);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('navigation', { name: 'Sections' }).waitFor();
    },
    async close() {
      await browser.close();
      await daemon.stop();
      await sim.close();
      await deletePrefixKeys(admin, prefix);
      await closeQuietly(admin);
    },
  };
}
