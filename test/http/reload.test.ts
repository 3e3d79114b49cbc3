import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfigFile } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { ConfigReloader } from '../../src/daemon/reload.js';
import { buildHttpApp } from '../../src/http/server.js';
import { createHarness, type Harness } from '../pollers/harness.js';
import { bearer, serverOptions, TOKEN } from './helpers.js';

/**
 * `POST /-/reload`: admin only (a bearer token or a session, never Basic), 200 with what changed,
 * 422 with the lines `config check` prints for a file that cannot be used — and then the config
 * in force is still what the API shows.
 */

const READER = 'reader-token-0123456789abcdef';

let h: Harness;
let app: FastifyInstance;
let noReload: FastifyInstance;
let dir: string;
let file: string;

/** The config file as an operator writes it: the harness config plus `maintenance`. */
function write(config: Config, maintenance: unknown[]): void {
  const document = {
    ...config,
    http: { ...config.http, api_token: TOKEN, tokens: [{ name: 'grafana', token: READER, role: 'read' }] },
    notifications: { ...config.notifications, maintenance },
  };
  writeFileSync(file, stringify(document));
}

const window = (name: string) => ({ name, schedule: '0 3 * * sun', duration: '2h', time_zone: 'UTC' });

beforeAll(async () => {
  h = await createHarness({ simulator: { vehicles: 1, robots: 0 } });
  dir = mkdtempSync(join(tmpdir(), 'fleetwatch-reload-'));
  file = join(dir, 'fleetwatch.yaml');
  write(h.config, [window('sunday')]);
  const started = loadConfigFile(file);
  const options = serverOptions(h, { config: () => started });
  // The reloader as the daemon has it, with no parts of its own: the API reads what it holds.
  const reloader = new ConfigReloader({
    config: options.config,
    load: () => loadConfigFile(file),
    parts: [],
    logger: pino({ enabled: false }),
  });
  app = await buildHttpApp({ ...options, live: () => reloader.config, reload: () => reloader.reload('api') });
  noReload = await buildHttpApp(options);
});

afterAll(async () => {
  await app?.close();
  await noReload?.close();
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

const reload = (headers: Record<string, string> = bearer()) =>
  app.inject({ method: 'POST', url: '/-/reload', headers });
const windows = async () =>
  (await app.inject({ url: '/api/maintenance', headers: bearer() }))
    .json()
    .items.map((item: { name: string }) => item.name);

describe('POST /-/reload', () => {
  it('is for admin tokens only', async () => {
    expect((await reload({})).statusCode).toBe(401);
    const reader = await reload(bearer(READER));
    expect(reader.statusCode).toBe(403);
    expect(reader.json().error.message).toBe(
      'this endpoint needs a token of role admin; grafana has role read',
    );
    const basic = await reload({ authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` });
    expect(basic.statusCode).toBe(401);
    expect(basic.json().error.message).toMatch(/Authorization: Bearer/);
  });

  it('answers 200 with nothing changed for the same file', async () => {
    const response = await reload();
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      status: 'unchanged',
      changed: [],
      receivers: { added: [], removed: [], changed: [] },
      needsRestart: [],
    });
  });

  it('applies a changed file and says what changed, and what needs a restart', async () => {
    write({ ...h.config, worker: { ...h.config.worker, concurrency: 2 } }, [
      window('sunday'),
      window('monday'),
    ]);
    const response = await reload();
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      status: 'reloaded',
      changed: ['notifications.maintenance'],
      receivers: { added: [], removed: [], changed: [] },
      needsRestart: ['worker.concurrency'],
    });
    expect(await windows()).toEqual(['sunday', 'monday']);
  });

  it('shows a receiver a reload adds in the queue UI, and drops one it removes', async () => {
    const queues = async () =>
      (await app.inject({ url: '/admin/queues/api/queues', headers: bearer() }))
        .json()
        .queues.map((queue: { name: string }) => queue.name)
        .sort();
    expect(await queues()).toEqual(['events', 'poll-fleet', 'poll-robots']);
    const ops = {
      kind: 'webhook',
      name: 'ops',
      url: 'http://127.0.0.1:9/hook',
      secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    };
    const withOps = { ...h.config, worker: { ...h.config.worker, concurrency: 2 }, receivers: [ops] };
    write(withOps as unknown as Config, [window('sunday'), window('monday')]);
    expect((await reload()).json().receivers.added).toEqual(['ops']);
    expect(await queues()).toEqual(['events', 'notify-ops', 'poll-fleet', 'poll-robots']);
    write({ ...h.config, worker: { ...h.config.worker, concurrency: 2 } }, [
      window('sunday'),
      window('monday'),
    ]);
    expect((await reload()).json().receivers.removed).toEqual(['ops']);
    expect(await queues()).toEqual(['events', 'poll-fleet', 'poll-robots']);
  });

  it('refuses an invalid file with 422 and its problems; the config in force stays', async () => {
    writeFileSync(file, 'upstream: {}\nworker: { concurrency: 0 }\n');
    const response = await reload();
    expect(response.statusCode).toBe(422);
    const { error } = response.json();
    expect(error.code).toBe('invalid_config');
    expect(error.message).toMatch(/^reload refused, the config in force is kept: /);
    expect(error.details.problems).toContain(
      `${file}: worker.concurrency: expected a whole number between 1 and 256; got 0`,
    );
    expect(error.details.problems.every((line: string) => line.startsWith(`${file}: `))).toBe(true);
    expect(await windows()).toEqual(['sunday', 'monday']);
  });

  it('refuses a file it cannot read with 422', async () => {
    rmSync(file);
    const response = await reload();
    expect(response.statusCode).toBe(422);
    expect(response.json().error.details.problems).toEqual([
      `${file}: cannot read the config file (no such file); pass --config or set FLEETWATCH_CONFIG`,
    ]);
    expect(await windows()).toEqual(['sunday', 'monday']);
  });

  it('answers 409 where the process was not started from a config file', async () => {
    const response = await noReload.inject({ method: 'POST', url: '/-/reload', headers: bearer() });
    expect(response.statusCode).toBe(409);
    expect(response.json().error.code).toBe('reload_unavailable');
  });
});
