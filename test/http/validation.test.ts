import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppHarness, appHarness, bearer, TOKEN } from './helpers.js';

let a: AppHarness;

beforeAll(async () => {
  a = await appHarness({ token: TOKEN });
});

afterAll(async () => {
  await a?.close();
});

async function problem(request: InjectOptions & { headers?: Record<string, string> }) {
  const response = await a.app.inject({ ...request, headers: { ...bearer(), ...request.headers } });
  const body = response.json() as {
    error: { code: string; message: string; details?: { problems: string[] } };
  };
  return { status: response.statusCode, ...body.error };
}

describe('bad requests', () => {
  it('answer 400 with a message naming the query field', async () => {
    expect(await problem({ url: '/api/events?limit=0' })).toMatchObject({
      status: 400,
      code: 'bad_request',
      message: 'query.limit: must be at least 1',
    });
    expect((await problem({ url: '/api/events?limit=lots' })).message).toBe(
      'query.limit: must be a whole number',
    );
    expect((await problem({ url: '/api/events?since=yesterday' })).message).toMatch(
      /^query\.since: must be a stream id/,
    );
    expect((await problem({ url: '/api/events?type=vehicle%20vpn' })).message).toMatch(/^query\.type: /);
    expect((await problem({ url: '/api/vehicles?limit=5000' })).message).toBe(
      'query.limit: must be at most 1000',
    );
    expect((await problem({ url: '/api/vehicles?cursor=%21%21' })).message).toMatch(/^query\.cursor: /);
    expect((await problem({ url: '/api/vehicles?limt=5' })).message).toBe('query: unknown field "limt"');
    expect((await problem({ url: '/api/silences?all=maybe' })).message).toBe(
      'query.all: must be true or false (got "maybe")',
    );
    expect((await problem({ url: '/api/events/stream?lastEventId=abc' })).message).toMatch(
      /^query\.lastEventId: must be a stream id/,
    );
    expect(
      (await problem({ url: '/api/events/stream', headers: { 'last-event-id': 'evt_123' } })).message,
    ).toMatch(/^headers\.last-event-id: must be a stream id/);
  });

  it('name the path parameter and the power options', async () => {
    expect(await problem({ method: 'POST', url: '/api/vehicles/veh-0001/power/sideways' })).toMatchObject({
      status: 400,
      message: 'params.target: must be on or off',
    });
    expect(
      (await problem({ method: 'POST', url: '/api/vehicles/veh-0001/power/on?wait=true&timeout=forever' }))
        .message,
    ).toBe('query.timeout: must be a duration such as 30s, 2m or 1500ms (got "forever")');
    expect(
      (await problem({ method: 'POST', url: '/api/vehicles/veh-0001/power/on?wait=true&timeout=2h' }))
        .message,
    ).toBe('query.timeout: must be between 1000 ms and 600 s');
    // Nothing reached the upstream.
    expect(a.h.sim.control.getVehicle('veh-0001')?.pendingCommand).toBeNull();
  });

  it('name every body field that is wrong, and reject a body that is not JSON', async () => {
    const empty = await problem({ method: 'POST', url: '/api/silences', payload: {} });
    expect(empty.status).toBe(400);
    expect(empty.details?.problems).toEqual(
      expect.arrayContaining([
        'body.matchers: is required',
        'body.createdBy: is required',
        'body.comment: is required',
      ]),
    );
    expect(empty.message).toContain('body.matchers: is required');

    const wrong = await problem({
      method: 'POST',
      url: '/api/silences',
      payload: { matchers: { severity: 'loud' }, duration: 'a while', createdBy: 'ops', comment: 'x' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.message).toMatch(/body\.matchers\.severity: /);
    expect(wrong.message).toMatch(/body\.duration: /);

    const notJson = await problem({
      method: 'POST',
      url: '/api/silences',
      headers: { 'content-type': 'application/json' },
      payload: '{"matchers": ',
    });
    expect(notJson).toMatchObject({ status: 400, code: 'bad_request' });
    expect(notJson.message).toMatch(/^body: is not valid JSON/);
  });
});
