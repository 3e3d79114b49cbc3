import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rolesFor } from '../../src/http/tokens.js';
import { type AppHarness, appHarness, bearer, captureLogs, TOKEN } from './helpers.js';

/**
 * Named tokens and their roles against the three kinds of route: every role × access pair, the
 * actor each one leaves in the audit trail, and the 403 that names the role a route needs.
 */

const READ = `${TOKEN}-read`;
const OPERATE = `${TOKEN}-operate`;
const ADMIN = `${TOKEN}-admin`;

const basic = (token: string) => ({
  authorization: `Basic ${Buffer.from(`anyone:${token}`).toString('base64')}`,
});

let a: AppHarness;
const logs = captureLogs();

beforeAll(async () => {
  a = await appHarness({
    token: TOKEN,
    tokens: [
      { name: 'grafana', token: READ, role: 'read' },
      { name: 'ops-console', token: OPERATE, role: 'operate' },
      { name: 'platform', token: ADMIN, role: 'admin' },
    ],
    logger: logs.logger,
  });
});

afterAll(async () => {
  await a?.close();
});

/** One route of each access; the status each answers once the guard lets it through. */
const ROUTES = {
  read: { method: 'GET' as const, url: '/api/vehicles', through: 200 },
  // A receiver that is not configured: 404 from the route itself, past the guard.
  write: { method: 'POST' as const, url: '/api/receivers/nobody/resume', through: 404 },
  admin: { method: 'GET' as const, url: '/admin/queues/api/queues', through: 200 },
};

const MATRIX: Array<{ who: string; token: string; allowed: Array<keyof typeof ROUTES> }> = [
  { who: 'grafana', token: READ, allowed: ['read'] },
  { who: 'ops-console', token: OPERATE, allowed: ['read', 'write'] },
  { who: 'platform', token: ADMIN, allowed: ['read', 'write', 'admin'] },
  { who: 'api_token', token: TOKEN, allowed: ['read', 'write', 'admin'] },
];

describe('roles', () => {
  it('says which roles a kind of route needs', () => {
    expect(rolesFor('read')).toBe('read, operate or admin');
    expect(rolesFor('write')).toBe('operate or admin');
    expect(rolesFor('admin')).toBe('admin');
  });

  it.each(MATRIX)('$who may use exactly its role’s routes', async ({ who, token, allowed }) => {
    for (const [access, route] of Object.entries(ROUTES) as Array<
      [keyof typeof ROUTES, (typeof ROUTES)[keyof typeof ROUTES]]
    >) {
      const response = await a.app.inject({ method: route.method, url: route.url, headers: bearer(token) });
      if (allowed.includes(access)) {
        expect(response.statusCode, `${who} on ${access}`).toBe(route.through);
      } else {
        expect(response.statusCode, `${who} on ${access}`).toBe(403);
        const role = MATRIX.find((row) => row.who === who)!.allowed.includes('write') ? 'operate' : 'read';
        expect(response.json().error).toEqual({
          code: 'forbidden',
          message: `this endpoint needs a token of role ${rolesFor(access)}; ${who} has role ${role}`,
        });
      }
    }
  });

  it('lets the queue UI take Basic with an admin token only', async () => {
    expect((await a.app.inject({ url: '/admin/queues', headers: basic(ADMIN) })).statusCode).toBe(200);
    expect((await a.app.inject({ url: '/admin/queues', headers: basic(OPERATE) })).statusCode).toBe(403);
    // Basic is still not taken by the API itself, whatever the role.
    expect((await a.app.inject({ url: '/api/vehicles', headers: basic(ADMIN) })).statusCode).toBe(401);
  });

  it('puts the token’s name in the audit trail, never the token', async () => {
    const power = await a.app.inject({
      method: 'POST',
      url: '/api/vehicles/veh-0001/power/on',
      headers: bearer(OPERATE),
    });
    expect(power.statusCode).toBe(202);
    const audit = logs.lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.audit === true);
    expect(audit).toContainEqual(expect.objectContaining({ actor: 'ops-console', via: 'bearer' }));
    for (const line of logs.lines) {
      for (const secret of [READ, OPERATE, ADMIN, TOKEN]) expect(line).not.toContain(secret);
    }
  });
});
