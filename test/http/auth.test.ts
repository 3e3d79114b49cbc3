import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sameToken } from '../../src/http/auth.js';
import { buildHttpApp } from '../../src/http/server.js';
import { type AppHarness, appHarness, bearer, captureLogs, serverOptions, TOKEN } from './helpers.js';

const basic = (user: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});

describe('sameToken', () => {
  it('compares any lengths without throwing', () => {
    expect(sameToken(TOKEN, TOKEN)).toBe(true);
    expect(sameToken('short', TOKEN)).toBe(false);
    expect(sameToken('', TOKEN)).toBe(false);
    expect(sameToken(`${TOKEN}x`, TOKEN)).toBe(false);
  });
});

describe('without http.api_token', () => {
  let a: AppHarness;
  beforeAll(async () => {
    a = await appHarness();
  });
  afterAll(async () => {
    await a?.close();
  });

  it('serves reads and the probes openly', async () => {
    expect((await a.app.inject({ url: '/api/vehicles' })).statusCode).toBe(200);
    expect((await a.app.inject({ url: '/api/silences' })).statusCode).toBe(200);
    const health = await a.app.inject({ url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });
  });

  it('refuses every change and the queue UI with 403, saying to set http.api_token', async () => {
    const changes = [
      { method: 'POST' as const, url: '/api/silences', payload: {} },
      { method: 'DELETE' as const, url: '/api/silences/sil_000000000000' },
      { method: 'POST' as const, url: '/api/dead-letters/ntf-1/replay' },
      { method: 'DELETE' as const, url: '/api/dead-letters/ntf-1' },
      { method: 'POST' as const, url: '/api/vehicles/veh-0001/power/on' },
      { method: 'GET' as const, url: '/admin/queues' },
    ];
    for (const request of changes) {
      // Even a token is no use while none is configured.
      const response = await a.app.inject({ ...request, headers: bearer() });
      expect(response.statusCode, request.url).toBe(403);
      const body = response.json();
      expect(body.error.code).toBe('api_token_not_configured');
      expect(body.error.message).toContain('http.api_token');
    }
    // Nothing was asked of the upstream.
    expect(a.h.sim.control.getVehicle('veh-0001')?.pendingCommand).toBeNull();
  });

  it('answers unknown paths with a JSON 404', async () => {
    const response = await a.app.inject({ url: '/api/nothing-here' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({
      error: { code: 'not_found', message: 'no such endpoint: GET /api/nothing-here' },
    });
  });
});

describe('with http.api_token', () => {
  let a: AppHarness;
  const logs = captureLogs();
  beforeAll(async () => {
    a = await appHarness({
      token: TOKEN,
      logger: logs.logger,
      harness: {
        config: {
          receivers: [
            {
              kind: 'webhook',
              name: 'ops-bridge',
              url: 'http://127.0.0.1:9/hook',
              secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
            },
          ],
        },
      },
    });
  });
  afterAll(async () => {
    await a?.close();
  });

  it('wants the bearer token for reads and changes: 401 with WWW-Authenticate when missing or wrong', async () => {
    for (const request of [
      { method: 'GET' as const, url: '/api/vehicles' },
      { method: 'GET' as const, url: '/api/events' },
      { method: 'GET' as const, url: '/api/events/stream' },
      { method: 'POST' as const, url: '/api/silences', payload: {} },
      { method: 'POST' as const, url: '/api/vehicles/veh-0001/power/off' },
    ]) {
      const missing = await a.app.inject(request);
      expect(missing.statusCode, request.url).toBe(401);
      expect(missing.headers['www-authenticate']).toBe('Bearer realm="fleetwatch"');
      expect(missing.json().error.code).toBe('unauthorized');

      const wrong = await a.app.inject({ ...request, headers: bearer('not-the-token-at-all-000') });
      expect(wrong.statusCode).toBe(401);
      expect(wrong.headers['www-authenticate']).toBe('Bearer realm="fleetwatch", error="invalid_token"');
      expect(wrong.json().error.message).toBe('the API token is not valid');

      // Basic is for the queue UI only.
      const viaBasic = await a.app.inject({ ...request, headers: basic('ops', TOKEN) });
      expect(viaBasic.statusCode).toBe(401);
    }
    expect(a.h.sim.control.getVehicle('veh-0001')?.pendingCommand).toBeNull();

    const ok = await a.app.inject({ url: '/api/vehicles', headers: bearer() });
    expect(ok.statusCode).toBe(200);
    const lowercaseScheme = await a.app.inject({
      url: '/api/vehicles',
      headers: { authorization: `bearer ${TOKEN}` },
    });
    expect(lowercaseScheme.statusCode).toBe(200);
  });

  it('keeps the probes open', async () => {
    expect((await a.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    expect((await a.app.inject({ url: '/readyz' })).statusCode).toBe(200);
    // No metrics registry given: 404, not 401.
    expect((await a.app.inject({ url: '/metrics' })).statusCode).toBe(404);
  });

  it('serves Bull Board with every queue to the token (bearer, or Basic for browsers)', async () => {
    const anonymous = await a.app.inject({ url: '/admin/queues' });
    expect(anonymous.statusCode).toBe(401);
    // A browser shows its login prompt on the Basic challenge, which Chromium finds only on a line
    // of its own: two WWW-Authenticate lines, not one with both challenges.
    expect(anonymous.headers['www-authenticate']).toEqual([
      'Bearer realm="fleetwatch"',
      'Basic realm="fleetwatch", charset="UTF-8"',
    ]);
    expect(
      (await a.app.inject({ url: '/admin/queues', headers: basic('ops', 'wrong-password-0000') })).statusCode,
    ).toBe(401);
    expect((await a.app.inject({ url: '/admin/queues/api/queues' })).statusCode).toBe(401);

    const page = await a.app.inject({ url: '/admin/queues', headers: basic('anyone', TOKEN) });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');

    const api = await a.app.inject({ url: '/admin/queues/api/queues', headers: bearer() });
    expect(api.statusCode).toBe(200);
    const queues = (api.json() as { queues: Array<{ name: string; readOnlyMode: boolean }> }).queues;
    expect(queues.map((queue) => queue.name).sort()).toEqual([
      'events',
      'notify-ops-bridge',
      'poll-fleet',
      'poll-robots',
    ]);
    expect(queues.every((queue) => queue.readOnlyMode)).toBe(true);
  });

  it('never writes the token into an answer or a log line', async () => {
    const answers = await Promise.all([
      a.app.inject({ url: '/api/vehicles', headers: bearer('not-the-token-at-all-000') }),
      a.app.inject({ url: '/api/vehicles', headers: bearer() }),
      a.app.inject({ method: 'POST', url: '/api/silences', headers: bearer(), payload: { comment: TOKEN } }),
    ]);
    for (const answer of answers) expect(answer.body).not.toContain(TOKEN);
    expect(logs.lines.length).toBeGreaterThan(0);
    for (const line of logs.lines) expect(line).not.toContain(TOKEN);
  });
});

describe('/metrics', () => {
  it('serves the registry with its content type', async () => {
    const { createHarness } = await import('../pollers/harness.js');
    const h = await createHarness();
    const app = await buildHttpApp(
      serverOptions(h, {
        metrics: {
          contentType: 'text/plain; version=0.0.4; charset=utf-8',
          text: async () => '# HELP fleetwatch_up 1 when up\n# TYPE fleetwatch_up gauge\nfleetwatch_up 1\n',
        },
      }),
    );
    try {
      const response = await app.inject({ url: '/metrics' });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(response.body).toContain('fleetwatch_up 1');
    } finally {
      await app.close();
      await h.close();
    }
  });
});
