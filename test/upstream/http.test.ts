import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { splitUrl } from '../../src/upstream/http.js';
import {
  createUpstream,
  InvalidPayloadError,
  NetworkError,
  type RequestInfo,
  type Upstream,
  type UpstreamError,
  UpstreamTimeoutError,
} from '../../src/upstream/index.js';
import { VERSION } from '../../src/version.js';
import { CLIENT_ID, CLIENT_SECRET, deferred, FakeUpstream, send, testConfig } from './fake-upstream.js';

let fake: FakeUpstream;
let upstream: Upstream | undefined;

beforeEach(async () => {
  fake = await FakeUpstream.start();
});

afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
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

const HEALTH = '/api/platform/d/v2/health';

describe('requests', () => {
  it('send User-Agent fleetwatch/<version> and accept JSON, to the token issuer and the API', async () => {
    upstream = createUpstream({ config: testConfig(fake.url) });
    fake.sequence('GET', HEALTH, [[200, { status: 'ok' }]]);
    await upstream.robots.health('d');
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+/);
    for (const request of fake.requests) {
      expect(request.headers['user-agent']).toBe(`fleetwatch/${VERSION}`);
      expect(request.headers.accept).toBe('application/json');
    }
    expect(fake.requests).toHaveLength(2);
  });

  it('read whole bodies and reuse one keep-alive connection', async () => {
    upstream = createUpstream({ config: testConfig(fake.url) });
    fake.sequence('GET', HEALTH, [[200, { status: 'ok', padding: 'x'.repeat(100_000) }]]);
    await upstream.robots.health('d');
    const warm = fake.connections;
    for (let i = 0; i < 5; i++) await upstream.robots.health('d');
    expect(fake.connections).toBe(warm);
  });

  it('error bodies are consumed too (connection reused after 503s)', async () => {
    upstream = createUpstream({ config: testConfig(fake.url, { http: { retries: 3 } }) });
    fake.sequence('GET', HEALTH, [
      [200, {}],
      [503, { message: 'busy', padding: 'y'.repeat(50_000) }],
      [503],
      [200, {}],
    ]);
    await upstream.robots.health('d');
    const warm = fake.connections;
    await upstream.robots.health('d');
    expect(fake.count('GET', HEALTH)).toBe(4);
    expect(fake.connections).toBe(warm);
  });

  it('refuse bodies over 16MiB by default, naming the setting', async () => {
    upstream = createUpstream({ config: testConfig(fake.url) });
    fake.sequence('GET', HEALTH, [[200, { status: 'ok', padding: 'x'.repeat(17 * 1024 * 1024) }]]);
    const error = await failure(upstream.robots.health('d'));
    expect(error).toBeInstanceOf(InvalidPayloadError);
    expect(error.message).toContain('response body larger than 16MiB (upstream.http.max_response_size)');
  });

  it('refuse bodies over upstream.http.max_response_size as the config file sets it', async () => {
    const config = parseConfig(
      `upstream:
  base_url: ${fake.url}
  robot_base_url: ${fake.url}
  auth_url: ${fake.url}
  client_id: ${CLIENT_ID}
  client_secret: ${CLIENT_SECRET}
  http: { max_response_size: 4KiB, retries: 0 }
`,
      'fleetwatch.yaml',
      {},
    );
    expect(config.upstream.http.max_response_size).toBe(4_096);
    upstream = createUpstream({ config: config.upstream });
    fake.sequence('GET', HEALTH, [
      [200, { status: 'ok', padding: 'x'.repeat(3_000) }],
      [200, { status: 'ok', padding: 'x'.repeat(5_000) }],
    ]);
    await upstream.robots.health('d');
    const error = await failure(upstream.robots.health('d'));
    expect(error).toBeInstanceOf(InvalidPayloadError);
    expect(error.code).toBe('invalid_payload');
    expect(error.message).toContain('response body larger than 4KiB (upstream.http.max_response_size)');
  });
});

describe('time-outs and network errors', () => {
  it('a response that never comes → UpstreamTimeoutError after request_timeout, retried for reads', async () => {
    upstream = createUpstream({
      config: testConfig(fake.url, { http: { retries: 1, request_timeout: 100 } }),
    });
    const hold = deferred();
    fake.on('GET', HEALTH, async (_request, response) => {
      await hold.promise;
      send(response, 200, {});
    });
    const started = performance.now();
    try {
      const error = await failure(upstream.robots.health('d'));
      expect(error).toBeInstanceOf(UpstreamTimeoutError);
      expect(error.retryable).toBe(true);
      expect(error.message).toBe('no response for robot "d" within 100 ms (robot.health: timeout)');
      expect(fake.count('GET', HEALTH)).toBe(2);
      expect(performance.now() - started).toBeLessThan(1_500);
    } finally {
      hold.resolve();
    }
  });

  it('a body that stalls half-way also times out', async () => {
    upstream = createUpstream({
      config: testConfig(fake.url, { http: { retries: 0, request_timeout: 100 } }),
    });
    const hold = deferred();
    fake.on('GET', HEALTH, async (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"status":');
      await hold.promise;
      response.end('"ok"}');
    });
    try {
      expect(await failure(upstream.robots.health('d'))).toBeInstanceOf(UpstreamTimeoutError);
    } finally {
      hold.resolve();
    }
  });

  it('a body that keeps dripping past request_timeout times out as a whole', async () => {
    upstream = createUpstream({
      config: testConfig(fake.url, { http: { retries: 0, request_timeout: 300 } }),
    });
    let dripping = true;
    fake.on('GET', HEALTH, async (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"status":"ok","padding":"');
      // Each byte well inside the time-out, the whole body far beyond it.
      while (dripping && !response.destroyed) {
        response.write('x');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      response.end('"}');
    });
    try {
      const error = await failure(upstream.robots.health('d'));
      expect(error).toBeInstanceOf(UpstreamTimeoutError);
      expect(error.message).toBe('no response for robot "d" within 300 ms (robot.health: timeout)');
    } finally {
      dripping = false;
    }
  });

  it('a refused connection → NetworkError, retried, reported to the observer', async () => {
    const seen: RequestInfo[] = [];
    const config = testConfig(fake.url, { http: { retries: 2 } });
    await fake.close();
    upstream = createUpstream({ config, observer: { request: (info) => seen.push(info) } });
    const error = await failure(upstream.tokens.getToken());
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.code).toBe('network');
    expect(error.message).toContain('ECONNREFUSED');
    expect(seen.map((info) => info.status)).toEqual(['network', 'network', 'network']);
    fake = await FakeUpstream.start(); // for afterEach
  });

  it('a connection closed mid-response → NetworkError', async () => {
    upstream = createUpstream({ config: testConfig(fake.url, { http: { retries: 0 } }) });
    fake.on('GET', HEALTH, (request, response) => {
      response.writeHead(200, { 'content-length': '100' });
      response.write('{"status"');
      response.socket?.destroy();
      void request;
    });
    expect(await failure(upstream.robots.health('d'))).toBeInstanceOf(NetworkError);
  });

  it("the caller's abort ends the call at once with its reason, no retries", async () => {
    upstream = createUpstream({ config: testConfig(fake.url, { http: { retries: 3 } }) });
    const hold = deferred();
    fake.on('GET', HEALTH, async (_request, response) => {
      await hold.promise;
      send(response, 200, {});
    });
    const controller = new AbortController();
    const call = upstream.robots.health('d', { signal: controller.signal });
    await fake.until(() => fake.count('GET', HEALTH) === 1);
    controller.abort(new Error('shutting down'));
    await expect(call).rejects.toThrow('shutting down');
    hold.resolve();
    expect(fake.count('GET', HEALTH)).toBe(1);
  });
});

describe('splitUrl', () => {
  it('gives the origin as URL normalises it and the path with its query', () => {
    expect(splitUrl('HTTP://Fleet.Example:80/v1/vehicles?vpn=true')).toEqual({
      origin: 'http://fleet.example',
      path: '/v1/vehicles?vpn=true',
    });
    expect(splitUrl('https://fleet.example')).toEqual({ origin: 'https://fleet.example', path: '/' });
    expect(splitUrl('http://127.0.0.1:8080/api/platform/r%2F1/v2/health')).toEqual({
      origin: 'http://127.0.0.1:8080',
      path: '/api/platform/r%2F1/v2/health',
    });
  });

  it('leaves a path with characters URL rewrites to URL', () => {
    for (const url of ['http://h/a b', 'http://h/a/../b', 'http://h/x#frag', 'http://h/ü']) {
      const parsed = new URL(url);
      expect(splitUrl(url)).toEqual({ origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` });
    }
  });
});

describe('aborting a request that waits for a connection', () => {
  it('ends the call at once, and the request is never sent', async () => {
    upstream = createUpstream({
      config: testConfig(fake.url, { http: { retries: 0, max_connections: 1 } }),
    });
    const hold = deferred();
    fake.on('GET', HEALTH, async (_request, response) => {
      await hold.promise;
      send(response, 200, {});
    });
    const first = upstream.robots.health('d');
    await fake.until(() => fake.count('GET', HEALTH) === 1);
    const controller = new AbortController();
    const second = upstream.robots.health('d', { signal: controller.signal });
    controller.abort(new Error('shutting down'));
    await expect(second).rejects.toThrow('shutting down');
    hold.resolve();
    await first;
    expect(fake.count('GET', HEALTH)).toBe(1);
  });
});

describe('in-flight cap', () => {
  it('gives each upstream max_in_flight slots of its own: a hanging one does not hold up the other', async () => {
    const other = await FakeUpstream.start();
    try {
      const config = { ...testConfig(fake.url, { http: { max_in_flight: 2 } }), robot_base_url: other.url };
      upstream = createUpstream({ config });
      await upstream.tokens.getToken();
      const held = { fleet: [] as Array<() => void>, robots: [] as Array<() => void> };
      const peak = { fleet: 0, robots: 0 };
      const holding = (lane: 'fleet' | 'robots') => {
        let active = 0;
        return async (_request: unknown, response: import('node:http').ServerResponse) => {
          active++;
          peak[lane] = Math.max(peak[lane], active);
          const gate = deferred();
          held[lane].push(gate.resolve);
          await gate.promise;
          active--;
          send(response, 200, { status: 'success', data: [] });
        };
      };
      fake.on('GET', '/v1/vehicles', holding('fleet'));
      other.on('GET', HEALTH, holding('robots'));
      // The fleet API hangs first and takes its 2 slots; the gateway's calls go all the same.
      const fleetCalls = Array.from({ length: 3 }, () => upstream!.fleet.listVehicles());
      await expect.poll(() => held.fleet.length).toBe(2);
      const robotCalls = Array.from({ length: 3 }, () => upstream!.robots.health('d'));
      await expect.poll(() => held.robots.length).toBe(2);
      // Give any request that would break a cap time to arrive before letting one go.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(fake.count('GET', '/v1/vehicles')).toBe(2);
      expect(other.count('GET', HEALTH)).toBe(2);
      for (const lane of ['robots', 'fleet'] as const) {
        // One slot freed: the third call takes it.
        held[lane].shift()?.();
        await expect.poll(() => held[lane].length).toBe(2);
        for (const release of held[lane].splice(0)) release();
      }
      await Promise.all([...fleetCalls, ...robotCalls]);
      expect(peak).toEqual({ fleet: 2, robots: 2 });
      expect(fake.count('GET', '/v1/vehicles') + other.count('GET', HEALTH)).toBe(6);
    } finally {
      await other.close();
    }
  });
});

describe('logging and observing', () => {
  it('logs each request at debug without headers or tokens, and reports it to the observer', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const seen: RequestInfo[] = [];
    upstream = createUpstream({
      config: testConfig(fake.url),
      logger: pino({ level: 'debug' }, sink),
      observer: { request: (info) => seen.push(info) },
    });
    fake.sequence('GET', '/v1/vehicles/v-1/power/status', [[404]]);
    await failure(upstream.fleet.getPowerStatus('v-1'));
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const request = entries.find(
      (entry) => entry.operation === 'get_vehicle_power_status' && entry.status === 404,
    );
    expect(request).toMatchObject({ method: 'GET', target: 'v-1', msg: 'upstream request' });
    expect(typeof request?.durationMs).toBe('number');
    const all = lines.join('\n');
    expect(all).not.toContain(fake.issued[0]);
    expect(all.toLowerCase()).not.toContain('authorization');
    expect(all).not.toContain('cs-very-secret');
    expect(seen.map((info) => [info.operation, info.status])).toEqual([
      ['oauth_token', 200],
      ['get_vehicle_power_status', 404],
    ]);
  });

  it('a throwing observer does not break requests', async () => {
    upstream = createUpstream({
      config: testConfig(fake.url),
      observer: {
        request: () => {
          throw new Error('metrics broke');
        },
      },
    });
    fake.sequence('GET', HEALTH, [[200, { status: 'ok' }]]);
    await expect(upstream.robots.health('d')).resolves.toEqual({ status: 'ok' });
  });

  it('close() can be called twice', async () => {
    upstream = createUpstream({ config: testConfig(fake.url) });
    await upstream.close();
    await upstream.close();
  });
});
