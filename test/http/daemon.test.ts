import { once } from 'node:events';
import { createServer } from 'node:net';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon } from '../../src/daemon/index.js';
import { closeQuietly } from '../../src/lib/redis-connection.js';
import { startSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/types.js';
import { testConfig } from '../pollers/harness.js';
import { connect, deletePrefixKeys, eventually, uniquePrefix } from '../support/redis.js';
import { bearer, captureLogs, TOKEN } from './helpers.js';

let sim: Simulator;
let admin: Redis;
const prefixes: string[] = [];

function config(http: Record<string, unknown>) {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  return testConfig(sim.url, prefix, {
    pollers: { robot_config: { enabled: false }, upstream: { interval: '2s' } },
    http,
  });
}

beforeAll(async () => {
  sim = await startSimulator({ vehicles: 3, robots: 1, seed: 11, behaviours: false });
  admin = connect();
});

afterAll(async () => {
  await sim?.close();
  for (const prefix of prefixes) await deletePrefixKeys(admin, prefix);
  await closeQuietly(admin);
});

describe('the daemon', () => {
  it('serves the HTTP API on http.port while it runs, and closes it first when it stops', async () => {
    const daemon = startDaemon(config({ port: 0, api_token: TOKEN }), { logger: pino({ enabled: false }) });
    try {
      const address = await daemon.http!.listening;
      expect(address).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(daemon.http!.address).toBe(address);

      const health = await fetch(`${address}/healthz`);
      expect(health.status).toBe(200);
      const ready = await eventually(
        async () => (await fetch(`${address}/readyz`)).status,
        (status) => status === 200,
      );
      expect(ready).toBe(200);

      // The daemon's own registry, fed by its pollers.
      const metrics = await fetch(`${address}/metrics`);
      expect(metrics.status).toBe(200);
      expect(metrics.headers.get('content-type')).toContain('text/plain');
      expect(await metrics.text()).toMatch(/^# HELP /m);

      const vehicles = await eventually(
        async () =>
          (await (await fetch(`${address}/api/vehicles`, { headers: bearer() })).json()) as { total: number },
        (page) => page.total === 3,
      );
      expect(vehicles.total).toBe(3);
    } finally {
      await daemon.stop();
    }
    expect(daemon.http!.address).toBeUndefined();
  });

  it('logs a port it cannot have and runs on without HTTP', async () => {
    const squatter = createServer();
    squatter.listen(0, '127.0.0.1');
    await once(squatter, 'listening');
    const port = (squatter.address() as { port: number }).port;
    const logs = captureLogs();
    const daemon = startDaemon(config({ port }), { logger: logs.logger });
    try {
      expect(await daemon.http!.listening).toBeUndefined();
      expect(daemon.http!.address).toBeUndefined();
      const line = logs.lines.map((text) => JSON.parse(text)).find((entry) => entry.level === 50);
      expect(line).toMatchObject({ port, msg: expect.stringMatching(/^the HTTP server could not listen/) });
      expect(line.err).toContain('EADDRINUSE');
      // Polling goes on.
      await eventually(
        () => admin.exists(`{${prefixes.at(-1)}}:snap:fleet:vehicle:membership`),
        (n) => n === 1,
      );
    } finally {
      await daemon.stop();
      squatter.close();
    }
  });

  it('runs without it when http.enabled is false', async () => {
    const daemon = startDaemon(config({ enabled: false }), { logger: pino({ enabled: false }) });
    try {
      expect(daemon.http).toBeUndefined();
    } finally {
      await daemon.stop();
    }
  });
});
