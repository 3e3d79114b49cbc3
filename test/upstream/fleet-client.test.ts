import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BadGatewayError,
  createUpstream,
  ForbiddenError,
  GatewayTimeoutError,
  InternalServerError,
  InvalidPayloadError,
  NotFoundError,
  ServiceUnavailableError,
  UnauthorizedError,
  type Upstream,
  type UpstreamError,
  UpstreamTimeoutError,
} from '../../src/upstream/index.js';
import { deferred, FakeUpstream, send, testConfig } from './fake-upstream.js';

let fake: FakeUpstream;
let upstream: Upstream;

const RETRIES = 2;
const ATTEMPTS = RETRIES + 1;
const STATUS_PATH = '/v1/vehicles/v-9/power/status';

const powerStatus = (data: unknown) => ({ status: 'success', data });
const OFF = powerStatus({ state: 'off', pendingCommand: null, updatedAt: '2026-01-01T10:00:00Z' });
const PENDING_ON = powerStatus({
  state: 'off',
  pendingCommand: { state: 'on' },
  updatedAt: '2026-01-01T10:00:00Z',
});

beforeEach(async () => {
  fake = await FakeUpstream.start();
  upstream = createUpstream({ config: testConfig(fake.url, { http: { retries: RETRIES } }) });
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

describe('list_vehicles', () => {
  it('200: returns the vehicles, ipAddress optional', async () => {
    fake.sequence('GET', '/v1/vehicles', [
      [
        200,
        {
          status: 'success',
          data: [
            { id: 'v-1', ipAddress: '10.8.0.2', vpnConnected: true },
            { id: 'v-2', vpnConnected: false },
          ],
        },
      ],
    ]);
    await expect(upstream.fleet.listVehicles()).resolves.toEqual({
      items: [
        { id: 'v-1', ipAddress: '10.8.0.2', vpnConnected: true },
        { id: 'v-2', vpnConnected: false },
      ],
      rejected: [],
    });
    const [request] = fake.apiRequests();
    expect(request?.token).toBe(fake.issued[0]);
  });

  it.each([
    [403, ForbiddenError, 1],
    [500, InternalServerError, 1],
  ])('%i → %o, not retried', async (status, type, requests) => {
    fake.sequence('GET', '/v1/vehicles', [[status, { message: 'nope' }]]);
    const error = await failure(upstream.fleet.listVehicles());
    expect(error).toBeInstanceOf(type);
    expect(error.status).toBe(status);
    expect(error.operation).toBe('list_vehicles');
    expect(fake.count('GET', '/v1/vehicles')).toBe(requests);
  });

  it('401 twice → one re-auth, then UnauthorizedError', async () => {
    fake.sequence('GET', '/v1/vehicles', [[401]]);
    const error = await failure(upstream.fleet.listVehicles());
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error.code).toBe('unauthorized');
    expect(fake.count('GET', '/v1/vehicles')).toBe(2);
    expect(fake.tokenRequests).toHaveLength(2);
    expect(fake.apiRequests().map((r) => r.token)).toEqual(fake.issued);
  });

  it('a vehicle with a bad ipv4 is rejected by itself, with its id; not retried, value not quoted', async () => {
    fake.sequence('GET', '/v1/vehicles', [
      [
        200,
        {
          status: 'success',
          data: [
            { id: 'v-1', ipAddress: '10.8.0.256', vpnConnected: true },
            { id: 'v-2', vpnConnected: true },
          ],
        },
      ],
    ]);
    const { items, rejected } = await upstream.fleet.listVehicles();
    expect(items).toEqual([{ id: 'v-2', vpnConnected: true }]);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toMatchObject({ index: 0, id: 'v-1' });
    const error = rejected[0]!.error;
    expect(error).toBeInstanceOf(InvalidPayloadError);
    expect(error).toMatchObject({ code: 'invalid_payload', operation: 'list_vehicles', target: 'v-1' });
    expect(error.message).toContain('vehicle "v-1"');
    expect(error.message).toContain('ipAddress');
    expect(error.message).not.toContain('10.8.0.256');
    expect(fake.count('GET', '/v1/vehicles')).toBe(1);
  });

  it.each([
    ['ipAddress null', { id: 'v-9', ipAddress: null, vpnConnected: true }, 'v-9', 'ipAddress'],
    ['missing vpnConnected', { id: 'v-9' }, 'v-9', 'vpnConnected'],
    ['vpnConnected as string', { id: 'v-9', vpnConnected: 'yes' }, 'v-9', 'vpnConnected'],
    ['no id', { vpnConnected: true }, undefined, 'id'],
    ['an id that is a number', { id: 9, vpnConnected: true }, undefined, 'id'],
    ['not an object', 'v-9', undefined, 'expected object'],
  ])('an element with %s is rejected by itself, the others kept', async (_name, element, id, path) => {
    const good = { id: 'v-1', vpnConnected: true };
    fake.sequence('GET', '/v1/vehicles', [[200, { status: 'success', data: [good, element, good] }]]);
    const { items, rejected } = await upstream.fleet.listVehicles();
    expect(items).toEqual([good, good]);
    expect(rejected.map(({ index, id }) => ({ index, id }))).toEqual([{ index: 1, id }]);
    expect(rejected[0]?.error.message).toContain(path);
    expect(rejected[0]?.error.message).toContain(
      id === undefined ? 'vehicle list element 1' : `vehicle "${id}"`,
    );
  });

  it.each([
    ['status "ok"', { status: 'ok', data: [] }, 'status'],
    ['no data', { status: 'success' }, 'data'],
    ['data that is not a list', { status: 'success', data: { id: 'v-1', vpnConnected: true } }, 'data'],
    ['a bare list', [{ id: 'v-1', vpnConnected: true }], 'expected object'],
  ])('%s: the envelope is wrong, so the whole list → InvalidPayloadError', async (_name, body, path) => {
    fake.sequence('GET', '/v1/vehicles', [[200, body]]);
    const error = await failure(upstream.fleet.listVehicles());
    expect(error).toBeInstanceOf(InvalidPayloadError);
    expect(error.message).toContain(path);
  });

  it('non-JSON body → InvalidPayloadError', async () => {
    fake.sequence('GET', '/v1/vehicles', [[200, '<html>oops</html>']]);
    const error = await failure(upstream.fleet.listVehicles());
    expect(error).toBeInstanceOf(InvalidPayloadError);
    expect(error.message).toContain('not valid JSON');
  });
});

describe('get_vehicle_power_status', () => {
  it('200: returns state, pendingCommand and updatedAt', async () => {
    fake.sequence('GET', STATUS_PATH, [[200, PENDING_ON]]);
    await expect(upstream.fleet.getPowerStatus('v-9')).resolves.toEqual({
      state: 'off',
      pendingCommand: { state: 'on' },
      updatedAt: '2026-01-01T10:00:00Z',
    });
  });

  it('accepts null pendingCommand, null updatedAt and an offset date-time', async () => {
    fake.sequence('GET', STATUS_PATH, [
      [200, powerStatus({ state: 'unknown', pendingCommand: null, updatedAt: null })],
      [200, powerStatus({ state: 'on', pendingCommand: null, updatedAt: '2026-01-01T10:00:00.123+02:00' })],
    ]);
    await expect(upstream.fleet.getPowerStatus('v-9')).resolves.toEqual({
      state: 'unknown',
      pendingCommand: null,
      updatedAt: null,
    });
    await expect(upstream.fleet.getPowerStatus('v-9')).resolves.toMatchObject({ state: 'on' });
  });

  it.each([
    ['missing pendingCommand', { state: 'on', updatedAt: null }, 'pendingCommand'],
    ['missing updatedAt', { state: 'on', pendingCommand: null }, 'updatedAt'],
    ['state "booting"', { state: 'booting', pendingCommand: null, updatedAt: null }, 'state'],
    [
      'pending "unknown"',
      { state: 'on', pendingCommand: { state: 'unknown' }, updatedAt: null },
      'pendingCommand',
    ],
    [
      'updatedAt without offset',
      { state: 'on', pendingCommand: null, updatedAt: '2026-01-01T10:00:00' },
      'updatedAt',
    ],
  ])('%s → InvalidPayloadError', async (_name, data, path) => {
    fake.sequence('GET', STATUS_PATH, [[200, powerStatus(data)]]);
    const error = await failure(upstream.fleet.getPowerStatus('v-9'));
    expect(error).toBeInstanceOf(InvalidPayloadError);
    expect(error.message).toContain(path);
    expect(fake.count('GET', STATUS_PATH)).toBe(1);
  });

  it('status "ok" in the envelope → InvalidPayloadError', async () => {
    fake.sequence('GET', STATUS_PATH, [
      [200, { status: 'ok', data: { state: 'on', pendingCommand: null, updatedAt: null } }],
    ]);
    expect(await failure(upstream.fleet.getPowerStatus('v-9'))).toBeInstanceOf(InvalidPayloadError);
  });

  it('URL-encodes the vehicle id', async () => {
    fake.sequence('GET', '/v1/vehicles/v%2F1%20x%3F/power/status', [[200, OFF]]);
    await expect(upstream.fleet.getPowerStatus('v/1 x?')).resolves.toMatchObject({ state: 'off' });
  });

  it('404 → NotFoundError with a human one-line message', async () => {
    fake.sequence('GET', STATUS_PATH, [[404]]);
    const error = await failure(upstream.fleet.getPowerStatus('v-9'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.message).toBe(
      'vehicle "v-9" not found, not available to this client, or not power-capable (get_vehicle_power_status: 404)',
    );
    expect(error.target).toBe('v-9');
    expect(error.retryable).toBe(false);
    expect(fake.count('GET', STATUS_PATH)).toBe(1);
  });

  it.each([
    [403, ForbiddenError, 1],
    [500, InternalServerError, 1],
    [502, BadGatewayError, ATTEMPTS],
    [503, ServiceUnavailableError, ATTEMPTS],
    [504, GatewayTimeoutError, ATTEMPTS],
  ])('%i → %o after %i request(s)', async (status, type, requests) => {
    fake.sequence('GET', STATUS_PATH, [[status]]);
    const error = await failure(upstream.fleet.getPowerStatus('v-9'));
    expect(error).toBeInstanceOf(type);
    expect(error.status).toBe(status);
    expect(error.message).toMatch(new RegExp(`\\(get_vehicle_power_status: ${status}\\)`));
    expect(fake.count('GET', STATUS_PATH)).toBe(requests);
  });

  it('401 twice → UnauthorizedError after exactly one re-auth', async () => {
    fake.sequence('GET', STATUS_PATH, [[401]]);
    expect(await failure(upstream.fleet.getPowerStatus('v-9'))).toBeInstanceOf(UnauthorizedError);
    expect(fake.count('GET', STATUS_PATH)).toBe(2);
    expect(fake.tokenRequests).toHaveLength(2);
  });

  it('recovers when a retry succeeds', async () => {
    fake.sequence('GET', STATUS_PATH, [[503], [502], [200, OFF]]);
    await expect(upstream.fleet.getPowerStatus('v-9')).resolves.toMatchObject({ state: 'off' });
    expect(fake.count('GET', STATUS_PATH)).toBe(3);
  });
});

describe.each(['on', 'off'] as const)('request_vehicle_power_%s', (target) => {
  const path = `/v1/vehicles/v-9/power/${target}`;
  const call = (id = 'v-9') =>
    target === 'on' ? upstream.fleet.requestPowerOn(id) : upstream.fleet.requestPowerOff(id);
  const reached = powerStatus({ state: 'unknown', pendingCommand: { state: target }, updatedAt: null });
  const notReached = powerStatus({
    state: target === 'on' ? 'off' : 'on',
    pendingCommand: null,
    updatedAt: null,
  });

  it('202: POST with no body and no content-type', async () => {
    fake.sequence('POST', path, [[202, { status: 'success' }]]);
    await expect(call()).resolves.toEqual({ status: 202 });
    const [request] = fake.apiRequests();
    expect(request?.body).toBe('');
    expect(request?.headers['content-type']).toBeUndefined();
    expect(request?.headers['content-length'] ?? '0').toBe('0');
    expect(request?.token).toBe(fake.issued[0]);
  });

  it('requestPower(id, target) is the same call', async () => {
    fake.sequence('POST', path, [[202, { status: 'success' }]]);
    await upstream.fleet.requestPower('v-9', target);
    expect(fake.count('POST', path)).toBe(1);
  });

  it.each([200, 201, 204])('%i in place of 202 → accepted with a warning, not sent again', async (status) => {
    fake.sequence('POST', path, [[status, status === 204 ? undefined : { status: 'success' }]]);
    const accepted = await call();
    expect(accepted.status).toBe(status);
    expect(accepted.warning).toBe(
      `the fleet service answered power ${target} for vehicle "v-9" with ${status}, not 202 as the spec says; taken as accepted (do not send it again; follow it with the power status)`,
    );
    expect(fake.count('POST', path)).toBe(1);
    expect(fake.count('GET', STATUS_PATH)).toBe(0);
  });

  it('202 with status "ok" → InvalidPayloadError', async () => {
    fake.sequence('POST', path, [[202, { status: 'ok' }]]);
    expect(await failure(call())).toBeInstanceOf(InvalidPayloadError);
    expect(fake.count('POST', path)).toBe(1);
  });

  it.each([
    [403, ForbiddenError],
    [404, NotFoundError],
    [500, InternalServerError],
  ])('%i → %o, not retried, no status read', async (status, type) => {
    fake.sequence('POST', path, [[status]]);
    const error = await failure(call());
    expect(error).toBeInstanceOf(type);
    expect(error.operation).toBe(`request_vehicle_power_${target}`);
    expect(fake.count('POST', path)).toBe(1);
    expect(fake.count('GET', STATUS_PATH)).toBe(0);
  });

  it('401 twice → UnauthorizedError after one re-auth', async () => {
    fake.sequence('POST', path, [[401]]);
    expect(await failure(call())).toBeInstanceOf(UnauthorizedError);
    expect(fake.count('POST', path)).toBe(2);
  });

  it.each([
    [502, BadGatewayError],
    [503, ServiceUnavailableError],
  ])('%i → retried like a read (not processed), no status read', async (status, type) => {
    fake.sequence('POST', path, [[status]]);
    expect(await failure(call())).toBeInstanceOf(type);
    expect(fake.count('POST', path)).toBe(ATTEMPTS);
    expect(fake.count('GET', STATUS_PATH)).toBe(0);
  });

  it('503 then 202 → resolves', async () => {
    fake.sequence('POST', path, [[503], [202, { status: 'success' }]]);
    await expect(call()).resolves.toEqual({ status: 202 });
    expect(fake.count('POST', path)).toBe(2);
  });

  it('504 → reads power status and stops when the command is already pending', async () => {
    fake.sequence('POST', path, [[504]]);
    fake.sequence('GET', STATUS_PATH, [[200, reached]]);
    await expect(call()).resolves.toEqual({});
    expect(fake.count('POST', path)).toBe(1);
    expect(fake.count('GET', STATUS_PATH)).toBe(1);
  });

  it('504 → stops when the reported state already equals the target', async () => {
    fake.sequence('POST', path, [[504]]);
    fake.sequence('GET', STATUS_PATH, [
      [200, powerStatus({ state: target, pendingCommand: null, updatedAt: null })],
    ]);
    await expect(call()).resolves.toEqual({});
    expect(fake.count('POST', path)).toBe(1);
  });

  it('504 while the status shows otherwise → retried, status read after each, then GatewayTimeoutError', async () => {
    fake.sequence('POST', path, [[504]]);
    fake.sequence('GET', STATUS_PATH, [[200, notReached]]);
    expect(await failure(call())).toBeInstanceOf(GatewayTimeoutError);
    expect(fake.count('POST', path)).toBe(ATTEMPTS);
    expect(fake.count('GET', STATUS_PATH)).toBe(ATTEMPTS);
  });

  it('504, status read fails, retry accepted → resolves', async () => {
    fake.sequence('POST', path, [[504], [202, { status: 'success' }]]);
    fake.sequence('GET', STATUS_PATH, [[503]]);
    await expect(call()).resolves.toEqual({ status: 202 });
    expect(fake.count('POST', path)).toBe(2);
    expect(fake.count('GET', STATUS_PATH)).toBe(1);
  });

  it('a pending command for the opposite state does not count as reached', async () => {
    const opposite = target === 'on' ? 'off' : 'on';
    fake.sequence('POST', path, [[504], [202, { status: 'success' }]]);
    fake.sequence('GET', STATUS_PATH, [
      [200, powerStatus({ state: target, pendingCommand: { state: opposite }, updatedAt: null })],
    ]);
    await expect(call()).resolves.toEqual({ status: 202 });
    expect(fake.count('POST', path)).toBe(2);
  });
});

describe('power request after a time-out', () => {
  it('reads the status and stops when the command was accepted', async () => {
    await upstream.close();
    upstream = createUpstream({
      config: testConfig(fake.url, { http: { retries: RETRIES, request_timeout: 150 } }),
    });
    const hold = deferred();
    fake.on('POST', '/v1/vehicles/v-9/power/on', async (_request, response) => {
      await hold.promise;
      send(response, 202, { status: 'success' });
    });
    fake.sequence('GET', STATUS_PATH, [[200, PENDING_ON]]);
    try {
      await expect(upstream.fleet.requestPowerOn('v-9')).resolves.toEqual({});
      expect(fake.count('POST', '/v1/vehicles/v-9/power/on')).toBe(1);
      expect(fake.count('GET', STATUS_PATH)).toBe(1);
    } finally {
      hold.resolve();
    }
  });

  it('a read that times out is retried, then UpstreamTimeoutError', async () => {
    await upstream.close();
    upstream = createUpstream({
      config: testConfig(fake.url, { http: { retries: 1, request_timeout: 100 } }),
    });
    const hold = deferred();
    fake.on('GET', STATUS_PATH, async (_request, response) => {
      await hold.promise;
      send(response, 200, OFF);
    });
    try {
      const error = await failure(upstream.fleet.getPowerStatus('v-9'));
      expect(error).toBeInstanceOf(UpstreamTimeoutError);
      expect(error.code).toBe('timeout');
      expect(error.message).toContain('vehicle "v-9"');
      expect(fake.count('GET', STATUS_PATH)).toBe(2);
    } finally {
      hold.resolve();
    }
  });
});
