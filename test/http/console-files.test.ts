import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerConsoleRoutes } from '../../src/http/routes/console.js';
import { type AppHarness, appHarness } from './helpers.js';

/**
 * The console's files under `/console/`: a name that is not one of them is a 404 saying so, and
 * only a server without a built console tells to build it (the global setup builds it).
 */
describe('GET /console/{file}', () => {
  let t: AppHarness;

  beforeAll(async () => {
    t = await appHarness();
  });

  afterAll(async () => {
    await t.close();
  });

  it('serves a file of the built console', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/console/app.js' });
    expect(res.statusCode).toBe(200);
  });

  it('answers a name that is not one of its files as such, not as an unbuilt console', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/console/nope.js' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: { message: 'no console file nope.js' } });
  });

  it('tells to build the console when it is not built', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'fw-console-'));
    const app = Fastify();
    try {
      registerConsoleRoutes(app, {} as never, `${empty}${sep}`);
      const res = await app.inject({ method: 'GET', url: '/console/app.js' });
      expect(res.statusCode).toBe(404);
      expect(res.json().message).toBe('the console is not built: no app.js (run npm run build)');
    } finally {
      await app.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
