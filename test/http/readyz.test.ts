import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHttpApp } from '../../src/http/server.js';
import { closeQuietly, createProducerConnection, waitForReady } from '../../src/lib/redis-connection.js';
import { startSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/types.js';
import { SnapshotStore } from '../../src/store/snapshot-store.js';
import { createUpstream, type Upstream } from '../../src/upstream/index.js';
import { testConfig } from '../pollers/harness.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';

let sim: Simulator;
const opened: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  sim = await startSimulator({ vehicles: 1, robots: 0, seed: 1, behaviours: false });
});

afterAll(async () => {
  for (const item of opened.reverse()) await item.close();
  await sim?.close();
});

/** An app whose upstream client uses `secret` against the simulator (which knows `demo-secret`). */
async function appWith(secret: string, readyCacheMs: number) {
  const prefix = uniquePrefix();
  const config = testConfig(sim.url, prefix, { upstream: { client_secret: secret } });
  const redis = createProducerConnection(redisUrl(), { name: 'test-readyz' });
  await waitForReady(redis, { timeoutMs: 5_000 });
  const upstream: Upstream = createUpstream({ config: config.upstream });
  const app = await buildHttpApp({
    config,
    logger: pino({ enabled: false }),
    redis,
    store: new SnapshotStore({ redis, prefix, installation: 'test' }),
    upstream,
    tuning: { readyCacheMs },
  });
  opened.push({
    close: async () => {
      await app.close();
      await upstream.close();
      await closeQuietly(redis);
    },
  });
  return app;
}

describe('GET /readyz', () => {
  it('is 200 when Redis answers and a token can be had', async () => {
    const app = await appWith('demo-secret', 0);
    const response = await app.inject({ url: '/readyz' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      status: 'ready',
      checks: { redis: { ok: true, state: 'ok' }, upstream: { ok: true, state: 'ok' } },
    });
  });

  it('is 503 naming the upstream check when the issuer refuses the credentials, and spares the issuer', async () => {
    const app = await appWith('wrong-secret-value', 60_000);
    sim.control.resetStats();
    const response = await app.inject({ url: '/readyz' });
    expect(response.statusCode).toBe(503);
    const body = response.json();
    expect(body.status).toBe('not_ready');
    expect(body.checks.redis).toMatchObject({ ok: true, state: 'ok' });
    expect(body.checks.upstream).toMatchObject({ ok: false, state: 'authentication' });
    expect(body.checks.upstream.error).toMatch(/authentication failed: the token issuer rejected client/);
    expect(body.error).toMatchObject({ code: 'not_ready' });
    expect(body.error.message).toMatch(/^not ready: upstream: authentication failed/);
    expect(response.body).not.toContain('wrong-secret-value');

    // Probes within the cache window reuse the answer: the issuer was asked once.
    const again = await Promise.all([app.inject({ url: '/readyz' }), app.inject({ url: '/readyz' })]);
    expect(again.map((r) => r.statusCode)).toEqual([503, 503]);
    expect(sim.control.stats().tokenRequests.total).toBe(1);

    // Liveness does not depend on the upstream.
    expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
  });
});
