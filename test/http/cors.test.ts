import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHttpApp, HttpServer } from '../../src/http/server.js';
import { createHarness, type Harness } from '../pollers/harness.js';
import { bearer, serverOptions, TOKEN } from './helpers.js';

/**
 * CORS: an allowed origin's preflights are answered with the API's methods and headers and
 * credentials allowed; its requests carry its origin back (the SSE stream's too). Any other origin
 * gets nothing: no CORS header, and its preflight is a 405 like any method a path does not take.
 */

const ALLOWED = 'https://ops.example.com';
const OTHER = 'https://evil.example';

let h: Harness;
let app: FastifyInstance;
let plain: FastifyInstance;

beforeAll(async () => {
  h = await createHarness();
  app = await buildHttpApp(
    serverOptions(h, { token: TOKEN, corsOrigins: [ALLOWED, 'http://localhost:3000'] }),
  );
  plain = await buildHttpApp(serverOptions(h, { token: TOKEN }));
});

afterAll(async () => {
  await app?.close();
  await plain?.close();
  await h?.close();
});

const preflight = (origin: string, method = 'POST', url = '/api/vehicles/veh-0001/power/on') => ({
  method: 'OPTIONS' as const,
  url,
  headers: {
    origin,
    'access-control-request-method': method,
    'access-control-request-headers': 'content-type, x-csrf-token',
  },
});

const corsHeaders = (headers: Record<string, unknown>) =>
  Object.keys(headers).filter((name) => name.startsWith('access-control-'));

describe('CORS', () => {
  it('answers an allowed origin’s preflight with the API’s methods and headers, credentials allowed', async () => {
    const response = await app.inject(preflight(ALLOWED));
    expect(response.statusCode).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(response.headers['access-control-allow-credentials']).toBe('true');
    expect(response.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, PUT, PATCH, DELETE');
    expect(response.headers['access-control-allow-headers']).toBe(
      'Authorization, Content-Type, X-CSRF-Token, Last-Event-ID',
    );
    expect(response.headers['access-control-max-age']).toBe('600');
    expect(response.headers.vary).toContain('Origin');
  });

  it('gives any other origin nothing: its preflight is a 405, its answers carry no CORS header', async () => {
    for (const origin of [OTHER, 'https://ops.example.com.evil.example', 'http://ops.example.com', 'null']) {
      const response = await app.inject(preflight(origin));
      expect(response.statusCode, origin).toBe(405);
      expect(corsHeaders(response.headers), origin).toEqual([]);
      expect(response.json().error.code).toBe('method_not_allowed');
      expect(response.headers.allow).toBe('POST');
    }
    const read = await app.inject({ url: '/api/vehicles', headers: { origin: OTHER, ...bearer() } });
    expect(read.statusCode).toBe(200);
    expect(corsHeaders(read.headers)).toEqual([]);
    // An unknown path stays a 404.
    expect((await app.inject(preflight(ALLOWED, 'GET', '/api/nothing-here'))).statusCode).toBe(204);
    expect((await app.inject(preflight(OTHER, 'GET', '/api/nothing-here'))).statusCode).toBe(404);
  });

  it('puts the allowed origin on answers, errors included, so its page can read them', async () => {
    const read = await app.inject({ url: '/api/vehicles', headers: { origin: ALLOWED, ...bearer() } });
    expect(read.statusCode).toBe(200);
    expect(read.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(read.headers['access-control-allow-credentials']).toBe('true');
    const refused = await app.inject({ url: '/api/vehicles', headers: { origin: ALLOWED } });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(refused.headers['access-control-expose-headers']).toBe('Retry-After, WWW-Authenticate');
  });

  it('lets an allowed origin’s page make changes with the session cookie and the CSRF token', async () => {
    const login = await app.inject({
      method: 'POST',
      url: '/api/session',
      headers: { origin: ALLOWED, 'sec-fetch-site': 'cross-site' },
      payload: { token: TOKEN },
    });
    expect(login.statusCode).toBe(201);
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const csrf = login.json().csrfToken as string;
    const change = await app.inject({
      method: 'POST',
      url: '/api/receivers/nobody/resume',
      headers: { origin: ALLOWED, 'sec-fetch-site': 'cross-site', cookie, 'x-csrf-token': csrf },
    });
    // Past the guard: the receiver is not configured.
    expect(change.statusCode).toBe(404);
    const other = await app.inject({
      method: 'POST',
      url: '/api/receivers/nobody/resume',
      headers: { origin: OTHER, cookie, 'x-csrf-token': csrf },
    });
    expect(other.statusCode).toBe(403);
    expect(other.json().error.code).toBe('cross_site_refused');
  });

  it('sends the allowed origin on the event stream too', async () => {
    const server = new HttpServer(serverOptions(h, { token: TOKEN, corsOrigins: [ALLOWED] }));
    const base = await server.start();
    const controller = new AbortController();
    try {
      const stream = await fetch(`${base}/api/events/stream`, {
        headers: { origin: ALLOWED, ...bearer() },
        signal: controller.signal,
      });
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(stream.headers.get('access-control-allow-origin')).toBe(ALLOWED);
      expect(stream.headers.get('access-control-allow-credentials')).toBe('true');
    } finally {
      controller.abort();
      await server.close();
    }
  });

  it('is off without http.cors.origins: no CORS header, preflights are 405', async () => {
    const response = await plain.inject(preflight(ALLOWED));
    expect(response.statusCode).toBe(405);
    expect(corsHeaders(response.headers)).toEqual([]);
    const read = await plain.inject({ url: '/api/vehicles', headers: { origin: ALLOWED, ...bearer() } });
    expect(corsHeaders(read.headers)).toEqual([]);
  });
});
