import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { call, getToken, tokenRequest, waitFor } from './helpers.js';

describe('simulator token issuer', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({
      clients: [
        { id: 'fleetwatch-demo', secret: 'demo-secret' },
        { id: 'other', secret: 'other-secret' },
      ],
    });
  });
  afterAll(() => sim.close());
  afterEach(() => sim.control.clearFaults());

  it('issues opaque bearer tokens for the right credentials', async () => {
    const a = await tokenRequest(sim);
    const b = await tokenRequest(sim);
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600 });
    expect((a.body as { access_token: string }).access_token).not.toBe(
      (b.body as { access_token: string }).access_token,
    );
    const list = await call(`${sim.url}/v1/vehicles`, {
      token: (a.body as { access_token: string }).access_token,
    });
    expect(list.status).toBe(200);
  });

  it('accepts the address the caller used (Host header) as audience', async () => {
    const port = new URL(sim.url).port;
    const body = JSON.stringify({
      client_id: 'fleetwatch-demo',
      client_secret: 'demo-secret',
      audience: `http://localhost:${port}/`,
      grant_type: 'client_credentials',
    });
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(`${sim.url}/oauth/token`, {
        method: 'POST',
        headers: { host: `localhost:${port}`, 'content-type': 'application/json' },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('error', reject);
      req.end(body);
    });
    expect(status).toBe(200);
  });

  it('rejects a wrong secret or unknown client with 401 invalid_client', async () => {
    for (const fields of [{ client_secret: 'nope' }, { client_id: 'nobody' }, { client_secret: undefined }]) {
      const res = await tokenRequest(sim, fields);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ error: 'invalid_client' });
    }
  });

  it('rejects a wrong audience with 403 access_denied (the trailing slash matters)', async () => {
    for (const audience of [sim.url, 'https://example.invalid/', `${sim.url}/v1/`]) {
      const res = await tokenRequest(sim, { audience });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ error: 'access_denied' });
    }
  });

  it('answers OAuth errors for bad grants and bodies', async () => {
    expect((await tokenRequest(sim, { grant_type: undefined })).body).toMatchObject({
      error: 'invalid_request',
    });
    const wrongGrant = await tokenRequest(sim, { grant_type: 'password' });
    expect(wrongGrant.status).toBe(400);
    expect(wrongGrant.body).toMatchObject({ error: 'unsupported_grant_type' });
    const noAudience = await tokenRequest(sim, { audience: undefined });
    expect(noAudience.status).toBe(400);
    const notJson = await call(`${sim.url}/oauth/token`, {
      method: 'POST',
      body: '{nope',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(400);
    expect((await call(`${sim.url}/oauth/token`)).status).toBe(405);
  });

  it('records a form-encoded token request as a contract violation', async () => {
    const before = sim.control.stats().contractViolations.total;
    const res = await call(`${sim.url}/oauth/token`, {
      method: 'POST',
      body: 'grant_type=client_credentials&client_id=fleetwatch-demo&client_secret=demo-secret',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(400);
    const stats = sim.control.stats();
    expect(stats.contractViolations.total).toBe(before + 1);
    expect(stats.contractViolations.recent.at(-1)).toMatchObject({ operation: 'token', side: 'client' });
  });

  it('revokes every token with expireTokens()', async () => {
    const token = await getToken(sim);
    expect((await call(`${sim.url}/v1/vehicles`, { token })).status).toBe(200);
    expect(sim.control.expireTokens()).toBeGreaterThan(0);
    expect((await call(`${sim.url}/v1/vehicles`, { token })).status).toBe(401);
    const fresh = await getToken(sim);
    expect((await call(`${sim.url}/v1/vehicles`, { token: fresh })).status).toBe(200);
  });

  it('revokes tokens through POST /_sim/tokens/expire', async () => {
    const token = await getToken(sim);
    const res = await call(`${sim.url}/_sim/tokens/expire`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect((res.body as { expired: number }).expired).toBeGreaterThan(0);
    expect((await call(`${sim.url}/v1/vehicles`, { token })).status).toBe(401);
  });

  it('counts token requests by status', async () => {
    sim.control.resetStats();
    await tokenRequest(sim);
    await tokenRequest(sim, { client_secret: 'bad' });
    expect(sim.control.stats().tokenRequests).toEqual({ total: 2, byStatus: { '200': 1, '401': 1 } });
  });

  it('injects token-endpoint faults only with scope token', async () => {
    sim.control.setFaults({ errorRates: { 503: 1 }, scope: 'token' });
    const res = await tokenRequest(sim);
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ error: 'temporarily_unavailable' });
    sim.control.setFaults({ errorRates: { 503: 1 }, scope: 'v1' });
    expect((await tokenRequest(sim)).status).toBe(200);
  });
});

describe('simulator token lifetime', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ tokenTtlSeconds: 1, vehicles: 2, robots: 0 });
  });
  afterAll(() => sim.close());

  it('reports expires_in and rejects the token once it expired', async () => {
    const res = await tokenRequest(sim);
    expect((res.body as { expires_in: number }).expires_in).toBe(1);
    const token = (res.body as { access_token: string }).access_token;
    expect((await call(`${sim.url}/v1/vehicles`, { token })).status).toBe(200);
    await waitFor(
      async () => ((await call(`${sim.url}/v1/vehicles`, { token })).status === 401 ? true : undefined),
      { timeoutMs: 3000, intervalMs: 100, what: 'token expiry' },
    );
  });
});

describe('simulator issuer options', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ vehicles: 1, robots: 0 });
  });
  afterAll(() => sim.close());
  const issuer = (json?: unknown) =>
    call(`${sim.url}/_sim/issuer`, json === undefined ? {} : { method: 'PATCH', json });

  it('reads and changes the issuer over the control API; bad options are a 400 naming the field', async () => {
    expect((await issuer()).body).toEqual({ tokenTtlSeconds: 3600, sendExpiresIn: true, jwt: false });
    const changed = await issuer({ tokenTtlSeconds: 4, sendExpiresIn: false });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ tokenTtlSeconds: 4, sendExpiresIn: false, jwt: false });
    expect(sim.control.state().issuer).toEqual({ tokenTtlSeconds: 4, sendExpiresIn: false, jwt: false });
    for (const [body, field] of [
      [{ tokenTtlSeconds: 0 }, 'tokenTtlSeconds'],
      [{ jwt: 'yes' }, 'jwt'],
      [{ lifetime: 4 }, 'lifetime'],
    ] as const) {
      const res = await issuer(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((res.body as { error: string }).error).toContain(field);
    }
  });

  it('leaves expires_in out when told to; the token still expires after its lifetime', async () => {
    sim.control.updateIssuer({ tokenTtlSeconds: 0.5, sendExpiresIn: false, jwt: false });
    const res = await tokenRequest(sim);
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer' });
    const token = (res.body as { access_token: string }).access_token;
    expect((await call(`${sim.url}/v1/vehicles`, { token })).status).toBe(200);
    await waitFor(
      async () => ((await call(`${sim.url}/v1/vehicles`, { token })).status === 401 ? true : undefined),
      { timeoutMs: 3000, intervalMs: 50, what: 'token expiry' },
    );
  });

  it('issues JWTs whose exp is when the simulator stops accepting them', async () => {
    sim.control.updateIssuer({ tokenTtlSeconds: 2, sendExpiresIn: false, jwt: true });
    const before = Date.now();
    const res = await tokenRequest(sim);
    const token = (res.body as { access_token: string }).access_token;
    const parts = token.split('.');
    expect(parts).toHaveLength(3);
    const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as {
      iat: number;
      exp: number;
      sub: string;
    };
    expect(claims.sub).toBe('fleetwatch-demo');
    expect(Number.isInteger(claims.iat) && Number.isInteger(claims.exp)).toBe(true);
    expect(claims.exp * 1000).toBeGreaterThan(before);
    expect(claims.exp * 1000).toBeLessThanOrEqual(Date.now() + 2000);
    await waitFor(
      async () => ((await call(`${sim.url}/v1/vehicles`, { token })).status === 401 ? true : undefined),
      { timeoutMs: 4000, intervalMs: 50, what: 'token expiry' },
    );
    expect(Date.now()).toBeGreaterThanOrEqual(claims.exp * 1000);
  });
});
