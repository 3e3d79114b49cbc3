import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DisabledReceivers } from '../../src/notifiers/delivery/disabled-receivers.js';
import { testConfig } from '../pollers/harness.js';
import { type AppHarness, appHarness, bearer, captureLogs, TOKEN } from './helpers.js';

/**
 * `POST /api/receivers/{name}/enable`: what `fleetwatch receiver enable` does, through the API
 * (write token, audited): the disabled flag is cleared and the answer names the disabling it ended.
 */

const RECEIVER = 'ops-console';
const READ_TOKEN = `${TOKEN}-read`;
let a: AppHarness;
let disabled: DisabledReceivers;
const logs = captureLogs();

beforeAll(async () => {
  a = await appHarness({
    token: TOKEN,
    tokens: [{ name: 'viewer', token: READ_TOKEN, role: 'read' }],
    logger: logs.logger,
    harness: { simulator: { vehicles: 1, robots: 0 }, prefix: `tre-${randomBytes(5).toString('hex')}` },
    config: (config) => ({
      ...config,
      receivers: testConfig(config.upstream.base_url, config.redis.prefix, {
        receivers: [{ kind: 'console', name: RECEIVER }],
      }).receivers,
    }),
  });
  disabled = new DisabledReceivers({ redis: a.h.redis, prefix: a.h.config.redis.prefix });
});

afterAll(async () => {
  await a?.close();
});

describe('POST /api/receivers/{name}/enable', () => {
  it('clears a disabling (write access, audited); a second call says it was not disabled', async () => {
    const { disabled: stored } = await disabled.disable(RECEIVER, {
      kind: 'console',
      reason: 'HTTP 410: gone',
      status: 410,
    });
    const listed = await a.app.inject({ url: '/api/receivers', headers: bearer() });
    expect(listed.json().items[0].disabled).toEqual(stored);

    const url = `/api/receivers/${RECEIVER}/enable`;
    expect((await a.app.inject({ method: 'POST', url })).statusCode).toBe(401);
    expect((await a.app.inject({ method: 'POST', url, headers: bearer(READ_TOKEN) })).statusCode).toBe(403);
    const unknown = await a.app.inject({
      method: 'POST',
      url: '/api/receivers/nobody/enable',
      headers: bearer(),
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.message).toBe(
      'no receiver "nobody" in the config (GET /api/receivers lists them)',
    );
    // Refused requests changed nothing.
    expect(await disabled.status(RECEIVER)).toEqual(stored);

    const enabled = await a.app.inject({ method: 'POST', url, headers: bearer() });
    expect(enabled.statusCode, enabled.body).toBe(200);
    expect(enabled.json()).toEqual({ receiver: RECEIVER, enabled: stored });
    expect(await disabled.status(RECEIVER)).toBeUndefined();
    const audit = logs.lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === 'receiver enabled through the API');
    expect(audit).toEqual([
      expect.objectContaining({ receiver: RECEIVER, wasDisabledSince: stored.at, reason: 'HTTP 410: gone' }),
    ]);

    const again = await a.app.inject({ method: 'POST', url, headers: bearer() });
    expect(again.json()).toEqual({ receiver: RECEIVER, enabled: null });
  });
});
