import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REDACTED, secrets } from '../../src/log/secrets.js';
import {
  AuthenticationError,
  createUpstream,
  ForbiddenError,
  InternalServerError,
  InvalidPayloadError,
  type RequestInfo,
  UnauthorizedError,
  type Upstream,
  type UpstreamError,
} from '../../src/upstream/index.js';
import { CLIENT_ID, CLIENT_SECRET, deferred, FakeUpstream, send, testConfig } from './fake-upstream.js';

let fake: FakeUpstream;
let upstream: Upstream;
let clock: number;
let logged: Array<Record<string, unknown>>;
let exchanges: RequestInfo[];

const LIST = { status: 'success', data: [] };

function start(overrides: Parameters<typeof testConfig>[1] = {}) {
  logged = [];
  exchanges = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) logged.push(JSON.parse(line));
      done();
    },
  });
  upstream = createUpstream({
    config: testConfig(fake.url, overrides),
    now: () => clock,
    logger: pino({ level: 'info' }, stream),
    observer: { request: (info) => exchanges.push(info) },
  });
}

beforeEach(async () => {
  clock = 1_000_000;
  fake = await FakeUpstream.start();
  fake.sequence('GET', '/v1/vehicles', [[200, LIST]]);
  start();
});

afterEach(async () => {
  await upstream.close();
  await fake.close();
});

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    return error as UpstreamError;
  }
  throw new Error('expected the call to fail');
}

describe('token request', () => {
  it('POSTs the exact client-credentials body as JSON', async () => {
    await upstream.fleet.listVehicles();
    expect(fake.tokenRequests).toHaveLength(1);
    const [request] = fake.tokenRequests;
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers.authorization).toBeUndefined();
    expect(JSON.parse(request?.body ?? '')).toStrictEqual({
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      audience: `${fake.url}/`,
      grant_type: 'client_credentials',
    });
  });

  it('sends the token as a bearer token', async () => {
    await upstream.fleet.listVehicles();
    expect(fake.apiRequests()[0]?.headers.authorization).toBe(`Bearer ${fake.issued[0]}`);
  });

  it('registers the client secret and every token with the secret registry', async () => {
    await upstream.fleet.listVehicles();
    expect(secrets.scrub(`x ${CLIENT_SECRET} y`)).toBe(`x ${REDACTED} y`);
    expect(secrets.scrub(`${fake.issued[0]}`)).toBe(REDACTED);
  });
});

describe('caching and refresh', () => {
  it('caches the token across calls', async () => {
    await upstream.fleet.listVehicles();
    await upstream.fleet.listVehicles();
    await upstream.tokens.getToken();
    expect(fake.tokenRequests).toHaveLength(1);
    expect(new Set(fake.apiRequests().map((r) => r.token))).toEqual(new Set([fake.issued[0]]));
  });

  it('refreshes refresh_before ahead of expires_in', async () => {
    await upstream.close();
    start({ token: { refresh_before: 10_000 } });
    fake.on('POST', '/oauth/token', (_r, response) => fake.issueToken(response, { expires_in: 60 }));
    const first = await upstream.tokens.getToken();
    clock += 49_000;
    expect(await upstream.tokens.getToken()).toBe(first);
    clock += 2_000; // 51 s: inside the 10 s refresh window
    const second = await upstream.tokens.getToken();
    expect(second).not.toBe(first);
    expect(fake.tokenRequests).toHaveLength(2);
    expect(second).toBe(fake.issued[1]);
  });

  it('refreshes after expiry with a short expires_in (refresh window at most half the lifetime)', async () => {
    fake.on('POST', '/oauth/token', (_r, response) => fake.issueToken(response, { expires_in: 2 }));
    await upstream.fleet.listVehicles();
    clock += 900; // default refresh_before is 60 s, but a 2 s token is used for its first second
    await upstream.fleet.listVehicles();
    expect(fake.tokenRequests).toHaveLength(1);
    clock += 1_200;
    await upstream.fleet.listVehicles();
    expect(fake.tokenRequests).toHaveLength(2);
    expect(fake.apiRequests().map((r) => r.token)).toEqual([fake.issued[0], fake.issued[0], fake.issued[1]]);
  });

  it('accepts expires_in as a numeric string', async () => {
    fake.on('POST', '/oauth/token', (_r, response) => fake.issueToken(response, { expires_in: '120' }));
    await upstream.tokens.getToken();
    clock += 50_000;
    await upstream.tokens.getToken();
    expect(fake.tokenRequests).toHaveLength(1);
    clock += 20_000;
    await upstream.tokens.getToken();
    expect(fake.tokenRequests).toHaveLength(2);
  });

  it('uses token.default_ttl when expires_in is absent', async () => {
    await upstream.close();
    start({ token: { default_ttl: 120_000, refresh_before: 10_000 } });
    fake.on('POST', '/oauth/token', (_r, response) => fake.issueToken(response, {}));
    await upstream.tokens.getToken();
    clock += 109_000;
    await upstream.tokens.getToken();
    expect(fake.tokenRequests).toHaveLength(1);
    clock += 2_000;
    await upstream.tokens.getToken();
    expect(fake.tokenRequests).toHaveLength(2);
  });

  it('single-flight: 50 concurrent callers share one token request', async () => {
    const release = deferred();
    fake.on('POST', '/oauth/token', async (_r, response) => {
      await release.promise;
      fake.issueToken(response);
    });
    const calls = Array.from({ length: 50 }, () => upstream.fleet.listVehicles());
    await fake.until(() => fake.tokenRequests.length >= 1);
    release.resolve();
    await Promise.all(calls);
    expect(fake.tokenRequests).toHaveLength(1);
    expect(fake.count('GET', '/v1/vehicles')).toBe(50);
  });

  it('serves the current token when a refresh fails before it expires; fails once it has expired', async () => {
    await upstream.close();
    start({ token: { refresh_before: 10_000 } });
    let issuerUp = true;
    fake.on('POST', '/oauth/token', (_r, response) =>
      issuerUp ? fake.issueToken(response, { expires_in: 60 }) : send(response, 500),
    );
    const first = await upstream.tokens.getToken();
    issuerUp = false;
    clock += 55_000;
    expect(await upstream.tokens.getToken()).toBe(first);
    clock += 6_000; // expired
    expect(await failure(upstream.tokens.getToken())).toBeInstanceOf(InternalServerError);
  });
});

describe('401 from the API', () => {
  it('invalidates, re-authenticates once and retries with the fresh token', async () => {
    fake.on('GET', '/v1/vehicles', (request, response) =>
      request.token === fake.issued[0] ? send(response, 401) : send(response, 200, LIST),
    );
    await expect(upstream.fleet.listVehicles()).resolves.toEqual({ items: [], rejected: [] });
    expect(fake.tokenRequests).toHaveLength(2);
    expect(fake.apiRequests().map((r) => r.token)).toEqual([fake.issued[0], fake.issued[1]]);
  });

  it('concurrent 401s with the same token cause one re-auth', async () => {
    const gate = deferred();
    fake.on('GET', '/v1/vehicles', async (request, response) => {
      if (request.token === fake.issued[0]) {
        await gate.promise;
        send(response, 401);
      } else send(response, 200, LIST);
    });
    const calls = Array.from({ length: 10 }, () => upstream.fleet.listVehicles());
    await fake.until(() => fake.count('GET', '/v1/vehicles') === 10);
    gate.resolve();
    await Promise.all(calls);
    expect(fake.tokenRequests).toHaveLength(2);
    expect(fake.count('GET', '/v1/vehicles')).toBe(20);
  });

  it('a second 401 → UnauthorizedError without the token in the message', async () => {
    fake.on('GET', '/v1/vehicles', (request, response) =>
      send(response, 401, { message: `token ${request.token} is not valid` }),
    );
    const error = await failure(upstream.fleet.listVehicles());
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(fake.tokenRequests).toHaveLength(2);
    for (const token of fake.issued) expect(error.message).not.toContain(token);
    expect(error.message).not.toMatch(/Bearer tok-/);
    expect(error.message).toContain(REDACTED);
  });

  it('403 is not retried and does not re-authenticate', async () => {
    fake.sequence('GET', '/v1/vehicles', [[403]]);
    expect(await failure(upstream.fleet.listVehicles())).toBeInstanceOf(ForbiddenError);
    expect(fake.tokenRequests).toHaveLength(1);
    expect(fake.count('GET', '/v1/vehicles')).toBe(1);
  });
});

describe('token issuer errors', () => {
  it.each([400, 401, 403])(
    '%i → AuthenticationError, not retried, no secret in the message',
    async (status) => {
      fake.sequence('POST', '/oauth/token', [
        [status, { error: 'invalid_client', error_description: `bad secret ${CLIENT_SECRET}` }],
      ]);
      const error = await failure(upstream.fleet.listVehicles());
      expect(error).toBeInstanceOf(AuthenticationError);
      // A 403 is the issuer refusing the audience (base_url + "/"): the message names it.
      const audience = status === 403 ? ` for audience "${fake.url}/"` : '';
      expect(error.message).toBe(
        `authentication failed: the token issuer rejected client "${CLIENT_ID}"${audience} (${status} invalid_client)`,
      );
      expect(error.code).toBe('authentication_failed');
      expect(error.retryable).toBe(false);
      expect(fake.tokenRequests).toHaveLength(1);
      expect(fake.count('GET', '/v1/vehicles')).toBe(0);
    },
  );

  it('no OAuth error code → status only', async () => {
    fake.sequence('POST', '/oauth/token', [[401, 'denied']]);
    const error = await failure(upstream.tokens.getToken());
    expect(error.message).toBe(
      `authentication failed: the token issuer rejected client "${CLIENT_ID}" (401)`,
    );
  });

  it('503 is retried', async () => {
    let calls = 0;
    fake.on('POST', '/oauth/token', (_r, response) =>
      calls++ < 2 ? send(response, 503) : fake.issueToken(response),
    );
    await expect(upstream.fleet.listVehicles()).resolves.toEqual({ items: [], rejected: [] });
    expect(fake.tokenRequests).toHaveLength(3);
  });

  it('500 → InternalServerError, not retried', async () => {
    fake.sequence('POST', '/oauth/token', [[500]]);
    const error = await failure(upstream.tokens.getToken());
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.operation).toBe('oauth_token');
    expect(fake.tokenRequests).toHaveLength(1);
  });

  it('a response without access_token → InvalidPayloadError', async () => {
    fake.sequence('POST', '/oauth/token', [[200, { token_type: 'Bearer' }]]);
    const error = await failure(upstream.tokens.getToken());
    expect(error).toBeInstanceOf(InvalidPayloadError);
    expect(error.message).toContain('access_token');
  });

  it('a failed token request is not cached: the next call asks again', async () => {
    let calls = 0;
    fake.on('POST', '/oauth/token', (_r, response) =>
      calls++ === 0 ? send(response, 500) : fake.issueToken(response),
    );
    await failure(upstream.tokens.getToken());
    const token = await upstream.tokens.getToken();
    expect(token).toBe(fake.issued[0]);
    expect(fake.tokenRequests).toHaveLength(2);
  });

  it("a caller's abort stops its wait but not the shared request", async () => {
    const release = deferred();
    fake.on('POST', '/oauth/token', async (_r, response) => {
      await release.promise;
      fake.issueToken(response);
    });
    const controller = new AbortController();
    const aborted = upstream.tokens.getToken({ signal: controller.signal });
    const patient = upstream.tokens.getToken();
    await fake.until(() => fake.tokenRequests.length === 1);
    controller.abort(new Error('caller gave up'));
    await expect(aborted).rejects.toThrow('caller gave up');
    release.resolve();
    const token = await patient;
    expect(token).toBe(fake.issued[0]);
    expect(fake.tokenRequests).toHaveLength(1);
  });
});

describe('token lifetime without expires_in', () => {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  /** Issues a JWT with these claims (and no expires_in), recorded like the fake's own tokens. */
  const issueJwt = (response: ServerResponse, claims: Record<string, unknown>, extra = {}) => {
    const token = `${part({ alg: 'HS256' })}.${part({ ...claims, n: fake.issued.length })}.c2ln`;
    fake.issued.push(token);
    send(response, 200, { access_token: token, token_type: 'Bearer', ...extra });
  };
  const learnt = () => logged.filter((line) => String(line.msg).includes('seem to last'));
  /** The fake API refuses a token once it is `lifetimeMs` old on the test clock. */
  function expiringTokens(lifetimeMs: number, extra: Record<string, unknown> = {}) {
    const born = new Map<string, number>();
    fake.on('POST', '/oauth/token', (_r, response) => {
      born.set(fake.issueToken(response, extra), clock);
    });
    fake.on('GET', '/v1/vehicles', (request, response) =>
      clock - (born.get(request.token ?? '') ?? Number.NEGATIVE_INFINITY) >= lifetimeMs
        ? send(response, 401)
        : send(response, 200, LIST),
    );
  }

  it('uses the JWT exp claim', async () => {
    fake.on('POST', '/oauth/token', (_r, response) => issueJwt(response, { exp: clock / 1000 + 120 }));
    const first = await upstream.tokens.getToken();
    clock += 59_000; // refresh_before 60 s, but at most half of the 120 s lifetime early
    expect(await upstream.tokens.getToken()).toBe(first);
    clock += 2_000;
    expect(await upstream.tokens.getToken()).not.toBe(first);
    expect(fake.tokenRequests).toHaveLength(2);
  });

  it('prefers expires_in to exp, and ignores an exp in the past', async () => {
    let calls = 0;
    fake.on('POST', '/oauth/token', (_r, response) =>
      calls++ === 0
        ? issueJwt(response, { exp: clock / 1000 + 10 }, { expires_in: 600 })
        : issueJwt(response, { exp: clock / 1000 - 10 }),
    );
    const first = await upstream.tokens.getToken();
    clock += 200_000; // past exp, well inside expires_in
    expect(await upstream.tokens.getToken()).toBe(first);
    clock += 400_000;
    const second = await upstream.tokens.getToken();
    expect(second).not.toBe(first);
    // Its exp is in the past: default_ttl (1 h) applies.
    clock += 3_000_000;
    expect(await upstream.tokens.getToken()).toBe(second);
  });

  it('learns a shorter lifetime from a 401 that a fresh token recovered, says so once, and renews ahead of it', async () => {
    expiringTokens(4_000);
    await upstream.fleet.listVehicles();
    clock += 4_500;
    await upstream.fleet.listVehicles(); // refused, renewed, accepted
    expect(fake.tokenRequests).toHaveLength(2);
    expect(learnt()).toHaveLength(1);
    expect(learnt()[0]).toMatchObject({
      level: 30,
      lifetimeMs: 4_500,
      renewAfterMs: 2_250,
      msg: "the token issuer's tokens seem to last about 4.5s; fleetwatch now renews them after 2.3s",
    });
    // The token that replaced the refused one is renewed on the new rule too: 2.25 s after it came.
    clock += 2_000;
    await upstream.fleet.listVehicles();
    expect(fake.tokenRequests).toHaveLength(2);
    clock += 500;
    await upstream.fleet.listVehicles();
    expect(fake.tokenRequests).toHaveLength(3);
    for (let i = 0; i < 20; i += 1) {
      clock += 700;
      await upstream.fleet.listVehicles();
    }
    const statuses = exchanges.filter((e) => e.operation === 'list_vehicles');
    expect(statuses.filter((e) => e.status === 401)).toHaveLength(1);
    expect(learnt()).toHaveLength(1);
  });

  it('tells the observer which sending a 401 answered: the first is not final, the renewed one is', async () => {
    expiringTokens(4_000);
    await upstream.fleet.listVehicles();
    clock += 5_000;
    await upstream.fleet.listVehicles();
    const list = exchanges.filter((e) => e.operation === 'list_vehicles');
    expect(list.map((e) => [e.status, e.auth])).toEqual([
      [200, 'first'],
      [401, 'first'],
      [200, 'renewed'],
    ]);
    expect(exchanges.filter((e) => e.operation === 'oauth_token').every((e) => e.auth === undefined)).toBe(
      true,
    );
  });

  it('a 401 that the fresh token does not recover teaches nothing', async () => {
    fake.on('POST', '/oauth/token', (_r, response) => fake.issueToken(response, {}));
    fake.on('GET', '/v1/vehicles', (_r, response) => send(response, 401));
    await upstream.tokens.getToken();
    clock += 4_000;
    expect(await failure(upstream.fleet.listVehicles())).toBeInstanceOf(UnauthorizedError);
    expect(learnt()).toHaveLength(0);
    const current = await upstream.tokens.getToken();
    clock += 30 * 60_000; // still inside the default hour
    expect(await upstream.tokens.getToken()).toBe(current);
  });

  it('does not second-guess a lifetime the issuer stated', async () => {
    expiringTokens(4_000, { expires_in: 3_600 });
    await upstream.fleet.listVehicles();
    clock += 4_500;
    await upstream.fleet.listVehicles();
    expect(learnt()).toHaveLength(0);
    const current = await upstream.tokens.getToken();
    clock += 30 * 60_000;
    expect(await upstream.tokens.getToken()).toBe(current);
  });

  it('never assumes less than a second', async () => {
    expiringTokens(200);
    await upstream.fleet.listVehicles();
    clock += 300;
    await upstream.fleet.listVehicles();
    expect(learnt()[0]).toMatchObject({ lifetimeMs: 1_000, renewAfterMs: 500 });
  });
});
