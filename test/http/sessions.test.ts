import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventDraft } from '../../src/events/types.js';
import { FailedLogins } from '../../src/http/login-limit.js';
import { sessionViewSchema } from '../../src/http/routes/session.js';
import { buildHttpApp, HttpServer } from '../../src/http/server.js';
import { MAX_SESSIONS_PER_TOKEN, SESSION_COOKIE, SessionStore } from '../../src/http/sessions.js';
import { TokenTable } from '../../src/http/tokens.js';
import { createHarness, type Harness } from '../pollers/harness.js';
import { type AppOptions, bearer, captureLogs, serverOptions, TOKEN } from './helpers.js';

/**
 * Browser sessions over a real socket: login, the cookie and its attributes, the session record in
 * Redis, the cookie on reads, the SSE stream and the queue UI, the CSRF checks on changes, logout,
 * expiry, a token changed under a session, and the failed-login limit.
 */

const READ = `${TOKEN}-read`;
const OPERATE = `${TOKEN}-operate`;
const TOKENS: AppOptions['tokens'] = [
  { name: 'grafana', token: READ, role: 'read' },
  { name: 'ops-console', token: OPERATE, role: 'operate' },
];

let h: Harness;
let server: HttpServer;
let base: string;
const logs = captureLogs();

beforeAll(async () => {
  h = await createHarness();
  server = new HttpServer(
    serverOptions(h, { token: TOKEN, tokens: TOKENS, logger: logs.logger, sessionTtlMs: 3_600_000 }),
  );
  base = await server.start();
});

afterAll(async () => {
  await server?.close();
  await h?.close();
});

interface Login {
  cookie: string;
  setCookie: string;
  id: string;
  body: { actor: string; role: string; via: string; expiresAt: string; csrfToken: string };
}

async function login(token: string): Promise<Login> {
  const response = await fetch(`${base}/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  expect(response.status).toBe(201);
  const setCookie = response.headers.get('set-cookie') ?? '';
  const id = /^fleetwatch_session=([^;]+);/.exec(setCookie)?.[1] ?? '';
  return { cookie: `${SESSION_COOKIE}=${id}`, setCookie, id, body: (await response.json()) as Login['body'] };
}

const sessionKey = (id: string) => `{${h.prefix}}:session:${createHash('sha256').update(id).digest('hex')}`;

async function call(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<{
  status: number;
  json: { error?: { code: string; message: string } } & Record<string, unknown>;
  headers: Headers;
}> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : {}, headers: response.headers };
}

describe('logging in', () => {
  it('trades a configured token for a session cookie: HttpOnly, SameSite=Strict, Path=/', async () => {
    const session = await login(OPERATE);
    expect(session.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(session.setCookie.split('; ').slice(1).sort()).toEqual(
      // Plain http to a loopback address: no Secure (see sessions.ts), so the cookie comes back.
      ['HttpOnly', 'Max-Age=3600', 'Path=/', 'SameSite=Strict'],
    );
    expect(session.body).toMatchObject({ actor: 'ops-console', role: 'operate', via: 'session' });
    expect(session.body.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const expiresIn = Date.parse(session.body.expiresAt) - Date.now();
    expect(expiresIn).toBeGreaterThan(3_500_000);
    expect(expiresIn).toBeLessThanOrEqual(3_600_000);

    // Redis keeps it under the SHA-256 of the id, for the session's lifetime, without the id or token.
    const key = sessionKey(session.id);
    const ttl = await h.admin.pttl(key);
    expect(ttl).toBeGreaterThan(3_500_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
    const stored = (await h.admin.get(key)) ?? '';
    expect(JSON.parse(stored)).toMatchObject({ actor: 'ops-console', role: 'operate' });
    expect(stored).not.toContain(session.id);
    expect(stored).not.toContain(OPERATE);

    const me = await call('GET', '/api/session', { cookie: session.cookie });
    expect(me.status).toBe(200);
    expect(me.json).toEqual(session.body);
    // The answer's published shape.
    expect(sessionViewSchema.strict().parse(me.json)).toEqual(me.json);
    // A bearer token is someone too, without a session.
    expect((await call('GET', '/api/session', bearer(READ))).json).toEqual({
      actor: 'grafana',
      role: 'read',
      via: 'bearer',
      expiresAt: null,
      csrfToken: null,
    });
  });

  it('refuses any other token with 401 and the same message, and a body without one with 400', async () => {
    for (const token of ['not-a-token-at-all-0000', TOKEN.slice(0, -1), `${OPERATE} `]) {
      const refused = await call('POST', '/api/session', {}, { token });
      expect(refused.status).toBe(401);
      expect(refused.json.error).toEqual({ code: 'unauthorized', message: 'the token is not valid' });
      expect(refused.headers.get('set-cookie')).toBeNull();
    }
    const empty = await call('POST', '/api/session', {}, {});
    expect(empty.status).toBe(400);
    expect(empty.json.error?.message).toBe('body.token: is required (the API token as text)');
    for (const line of logs.lines) expect(line).not.toContain('not-a-token-at-all-0000');
  });

  it('refuses a login from a page of another origin', async () => {
    const refused = await call(
      'POST',
      '/api/session',
      { origin: 'https://evil.example' },
      { token: OPERATE },
    );
    expect(refused.status).toBe(403);
    expect(refused.json.error?.code).toBe('cross_site_refused');
  });
});

describe('the session cookie', () => {
  it('is accepted by reads, the event stream and, for an admin, the queue UI', async () => {
    const reader = await login(READ);
    expect((await call('GET', '/api/vehicles', { cookie: reader.cookie })).status).toBe(200);
    // The queue UI is for admins.
    expect((await call('GET', '/admin/queues', { cookie: reader.cookie })).status).toBe(403);
    const admin = await login(TOKEN);
    const page = await fetch(`${base}/admin/queues`, { headers: { cookie: admin.cookie } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');

    // The stream, as an EventSource sends it: the cookie and nothing else.
    const controller = new AbortController();
    const stream = await fetch(`${base}/api/events/stream`, {
      headers: { cookie: reader.cookie, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    const reader$ = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const drafts: EventDraft[] = [{ type: 'vehicle.ip.changed', data: { severity: 'info' } }];
    const committed = await h.store.commit(
      { kind: 'vehicle', id: 'veh-session-1', facet: 'test' },
      0,
      { state: 1, observedAt: new Date().toISOString() },
      drafts,
    );
    expect(committed.committed).toBe(true);
    while (!text.includes('vehicle.ip.changed')) {
      const { value, done } = await reader$.read();
      if (done) throw new Error(`the stream ended before the event: ${text}`);
      text += value;
    }
    controller.abort();
    expect(text).toContain('"subject":"vehicle/veh-session-1"');

    // Without the cookie the stream is refused.
    expect((await call('GET', '/api/events/stream')).status).toBe(401);
  });

  it('makes changes only with the CSRF token and from this origin or an allowed one', async () => {
    const session = await login(OPERATE);
    const url = '/api/vehicles/veh-0002/power/on';
    const missing = await call('POST', url, { cookie: session.cookie });
    expect(missing.status).toBe(403);
    expect(missing.json.error?.code).toBe('csrf_token_missing');
    expect(missing.json.error?.message).toContain('X-CSRF-Token');
    const wrong = await call('POST', url, { cookie: session.cookie, 'x-csrf-token': 'A'.repeat(43) });
    expect(wrong.status).toBe(403);
    expect(wrong.json.error?.code).toBe('csrf_token_invalid');
    const csrf = { cookie: session.cookie, 'x-csrf-token': session.body.csrfToken };
    const crossOrigin = await call('POST', url, { ...csrf, origin: 'https://evil.example' });
    expect(crossOrigin.status).toBe(403);
    expect(crossOrigin.json.error).toEqual({
      code: 'cross_site_refused',
      message:
        'requests from pages of https://evil.example are refused: add the origin to http.cors.origins to allow it',
    });
    const crossSite = await call('POST', url, { ...csrf, 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    expect(crossSite.json.error?.code).toBe('cross_site_refused');
    // Nothing was asked of the fleet service so far.
    expect(h.sim.control.getVehicle('veh-0002')?.pendingCommand).toBeNull();

    // The page's own origin, with the token: accepted, and audited under the token's name.
    const accepted = await call('POST', url, { ...csrf, origin: base, 'sec-fetch-site': 'same-origin' });
    expect(accepted.status).toBe(202);
    const audit = logs.lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.audit === true && line.via === 'session');
    expect(audit).toContainEqual(expect.objectContaining({ actor: 'ops-console', via: 'session' }));

    // A bearer token needs no CSRF token: a browser never sends one by itself.
    expect((await call('POST', '/api/vehicles/veh-0003/power/on', bearer(OPERATE))).status).toBe(202);
  });

  it('keeps a session of role read out of changes, CSRF token or not', async () => {
    const session = await login(READ);
    const refused = await call('POST', '/api/vehicles/veh-0004/power/on', {
      cookie: session.cookie,
      'x-csrf-token': session.body.csrfToken,
    });
    expect(refused.status).toBe(403);
    expect(refused.json.error).toEqual({
      code: 'forbidden',
      message: 'this endpoint needs a token of role operate or admin; grafana has role read',
    });
  });

  it('ends with logout (which needs the CSRF token too) and is refused afterwards', async () => {
    const session = await login(OPERATE);
    const withoutCsrf = await call('DELETE', '/api/session', { cookie: session.cookie });
    expect(withoutCsrf.status).toBe(403);
    expect((await call('GET', '/api/vehicles', { cookie: session.cookie })).status).toBe(200);

    const out = await call('DELETE', '/api/session', {
      cookie: session.cookie,
      'x-csrf-token': session.body.csrfToken,
    });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toBe(
      `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`,
    );
    expect(await h.admin.exists(sessionKey(session.id))).toBe(0);
    const after = await call('GET', '/api/vehicles', { cookie: session.cookie });
    expect(after.status).toBe(401);
    expect(after.json.error?.message).toContain('the session has ended');
    // The browser is told to drop the cookie that leads nowhere.
    expect(after.headers.get('set-cookie')).toBe(
      `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`,
    );
    expect(
      await h.admin.zscore(`{${h.prefix}}:sessions:ops-console`, sessionKey(session.id).split(':').at(-1)!),
    ).toBeNull();
    // Logging out again, or without a session, is no error.
    expect((await call('DELETE', '/api/session', { cookie: session.cookie })).status).toBe(204);
  });

  it('is refused once expired, and once it lapses from Redis', async () => {
    const session = await login(READ);
    const key = sessionKey(session.id);
    const stored = JSON.parse((await h.admin.get(key)) ?? '{}') as { expiresAt: number };
    await h.admin.set(key, JSON.stringify({ ...stored, expiresAt: Date.now() - 1 }), 'KEEPTTL');
    expect((await call('GET', '/api/vehicles', { cookie: session.cookie })).status).toBe(401);

    const other = await login(READ);
    await h.admin.del(sessionKey(other.id));
    expect((await call('GET', '/api/session', { cookie: other.cookie })).status).toBe(401);
    // Not the shape of an id at all: not looked up, refused the same way.
    expect((await call('GET', '/api/vehicles', { cookie: `${SESSION_COOKIE}=x` })).status).toBe(401);
  });

  it('ends when its token is changed in the config (every replica checks)', async () => {
    const session = await login(OPERATE);
    const rotated = await buildHttpApp(
      serverOptions(h, {
        token: TOKEN,
        tokens: [{ name: 'ops-console', token: `${OPERATE}-rotated`, role: 'operate' }],
      }),
    );
    try {
      const refused = await rotated.inject({ url: '/api/vehicles', headers: { cookie: session.cookie } });
      expect(refused.statusCode).toBe(401);
      expect(await h.admin.exists(sessionKey(session.id))).toBe(0);
    } finally {
      await rotated.close();
    }
  });

  it('is missing on the queue UI: 401 with Bearer and Basic challenges on two header lines', async () => {
    const { port } = new URL(base);
    const raw = await new Promise<string[]>((resolve, reject) => {
      const request = httpRequest({ host: '127.0.0.1', port, path: '/admin/queues' }, (response) => {
        response.resume();
        expect(response.statusCode).toBe(401);
        resolve(response.rawHeaders);
      });
      request.on('error', reject);
      request.end();
    });
    const challenges = raw.filter((_, i) => i % 2 === 1 && raw[i - 1]!.toLowerCase() === 'www-authenticate');
    expect(challenges).toEqual(['Bearer realm="fleetwatch"', 'Basic realm="fleetwatch", charset="UTF-8"']);
  });

  it('is Secure unless the request came over plain http to a loopback address', async () => {
    const { port } = new URL(base);
    // node:http, as fetch does not let a caller name the Host.
    const cookieOf = (headers: Record<string, string>) =>
      new Promise<string>((resolve, reject) => {
        const body = JSON.stringify({ token: READ });
        const request = httpRequest(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/api/session',
            headers: {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
              ...headers,
            },
          },
          (response) => {
            response.resume();
            resolve(String(response.headers['set-cookie'] ?? ''));
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    expect(await cookieOf({ host: `127.0.0.1:${port}` })).not.toContain('Secure');
    expect(await cookieOf({ host: `localhost:${port}` })).not.toContain('Secure');
    expect(await cookieOf({ host: 'fleetwatch.example.com' })).toMatch(/; Secure$/);
    expect(await cookieOf({ host: `127.0.0.1:${port}`, 'x-forwarded-proto': 'https' })).toMatch(/; Secure$/);
  });
});

describe('sessions per token', () => {
  it('are at most the limit: a login beyond it ends the oldest', async () => {
    const tokens = new TokenTable({
      api_token: undefined,
      tokens: [{ name: 'kiosk', token: READ, role: 'read' }],
    });
    // A clock that moves 1 ms a call: logins in one millisecond would expire together, and which of
    // them is the oldest would be a toss-up.
    let clock = Date.now();
    const store = new SessionStore({
      redis: h.redis,
      prefix: h.prefix,
      ttlMs: 60_000,
      tokens,
      maxPerToken: 2,
      now: () => {
        clock += 1;
        return clock;
      },
    });
    const principal = tokens.find(READ)!;
    const first = await store.open(principal);
    const second = await store.open(principal);
    const third = await store.open(principal);
    expect(await store.read(first.id)).toBeUndefined();
    expect(await h.admin.exists(store.keyOf(first.id))).toBe(0);
    expect((await store.read(second.id))?.actor).toBe('kiosk');
    expect((await store.read(third.id))?.actor).toBe('kiosk');
    expect(await h.admin.zcard(`{${h.prefix}}:sessions:kiosk`)).toBe(2);
    expect(MAX_SESSIONS_PER_TOKEN).toBe(100);
  });
});

describe('failed logins', () => {
  it('are limited per address: after 10, even the right token waits (429 with Retry-After)', async () => {
    const app = await buildHttpApp(serverOptions(h, { token: TOKEN }));
    try {
      const attempt = (token: string) =>
        app.inject({ method: 'POST', url: '/api/session', payload: { token } });
      for (let i = 0; i < 10; i += 1) expect((await attempt(`wrong-token-${i}-000000`)).statusCode).toBe(401);
      const limited = await attempt(TOKEN);
      expect(limited.statusCode).toBe(429);
      expect(limited.json().error.code).toBe('too_many_failed_logins');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(300);
      // Bearer requests are not logins: they go on.
      expect((await app.inject({ url: '/api/vehicles', headers: bearer() })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('are counted in a window and for a bounded number of addresses', () => {
    let now = 0;
    const failed = new FailedLogins({ failures: 2, windowMs: 1_000, addresses: 3, now: () => now });
    failed.fail('a');
    expect(failed.blockedFor('a')).toBe(0);
    failed.fail('a');
    expect(failed.blockedFor('a')).toBe(1_000);
    now = 400;
    expect(failed.blockedFor('a')).toBe(600);
    now = 1_000;
    expect(failed.blockedFor('a')).toBe(0);
    for (const address of ['b', 'c', 'd', 'e']) {
      failed.fail(address);
      failed.fail(address);
    }
    expect(failed.tracked).toBe(3);
    // The oldest went first.
    expect(failed.blockedFor('b')).toBe(0);
    expect(failed.blockedFor('e')).toBe(1_000);
  });
});

describe('without any token configured', () => {
  it('has no sessions: 403 naming what to set', async () => {
    const app = await buildHttpApp(serverOptions(h));
    try {
      const response = await app.inject({ method: 'POST', url: '/api/session', payload: { token: TOKEN } });
      expect(response.statusCode).toBe(403);
      expect(response.json().error).toEqual({
        code: 'api_token_not_configured',
        message:
          'sessions are disabled: set http.api_token (or http.tokens) in the fleetwatch config (for example api_token: ${FLEETWATCH_API_TOKEN}) and restart fleetwatch',
      });
    } finally {
      await app.close();
    }
  });
});
