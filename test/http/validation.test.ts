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
      message: 'query.limit: expected a whole number between 1 and 10000; got 0',
    });
    expect((await problem({ url: '/api/events?limit=lots' })).message).toBe(
      'query.limit: expected a whole number between 1 and 10000; got lots',
    );
    expect((await problem({ url: '/api/events?since=yesterday' })).message).toMatch(
      /^query\.since: must be a stream id/,
    );
    expect((await problem({ url: '/api/events?type=vehicle%20vpn' })).message).toMatch(/^query\.type: /);
    expect((await problem({ url: '/api/vehicles?limit=5000' })).message).toBe(
      'query.limit: expected a whole number between 1 and 1000; got 5000',
    );
    expect((await problem({ url: '/api/vehicles?cursor=%21%21' })).message).toMatch(/^query\.cursor: /);
    expect((await problem({ url: '/api/vehicles?limt=5' })).message).toBe(
      'query: unknown field "limt"; did you mean "limit"?',
    );
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
    ).toBe('query.timeout: expected a duration between 1s and 10m, like 30s; got forever');
    expect(
      (await problem({ method: 'POST', url: '/api/vehicles/veh-0001/power/on?wait=true&timeout=2h' }))
        .message,
    ).toBe('query.timeout: expected a duration between 1s and 10m, like 30s; got 2h');
    // Nothing reached the upstream.
    expect(a.h.sim.control.getVehicle('veh-0001')?.pendingCommand).toBeNull();
  });

  it('refuse timeout and interval on a power request without wait, sending nothing', async () => {
    expect(
      await problem({ method: 'POST', url: '/api/vehicles/veh-0001/power/on?timeout=10s' }),
    ).toMatchObject({
      status: 400,
      message: 'query.timeout: only applies with wait=true; add wait=true, or leave it out',
    });
    expect(
      (
        await problem({
          method: 'POST',
          url: '/api/vehicles/veh-0001/power/on?wait=false&interval=1s&timeout=5s',
        })
      ).details?.problems,
    ).toEqual([
      'query.timeout: only applies with wait=true; add wait=true, or leave it out',
      'query.interval: only applies with wait=true; add wait=true, or leave it out',
    ]);
    expect(a.h.sim.control.getVehicle('veh-0001')?.pendingCommand).toBeNull();
  });

  it('refuse a body on a write that takes none, as the robot writes do', async () => {
    expect(
      await problem({ method: 'POST', url: '/api/vehicles/veh-0001/power/on', payload: { wait: true } }),
    ).toMatchObject({
      status: 400,
      message: 'body: POST /api/vehicles/:id/power/:target takes no body',
    });
    expect(a.h.sim.control.getVehicle('veh-0001')?.pendingCommand).toBeNull();
    expect(
      (await problem({ method: 'POST', url: '/api/receivers/anyone/resume', payload: { force: true } }))
        .message,
    ).toBe('body: POST /api/receivers/:name/resume takes no body');
    // An empty JSON body is no body.
    const empty = await a.app.inject({
      method: 'POST',
      url: '/api/vehicles/veh-0002/power/on',
      headers: { ...bearer(), 'content-type': 'application/json' },
      payload: '',
    });
    expect(empty.statusCode).toBe(202);
  });

  it('read every query flag alike: yes and no are taken, maybe is not', async () => {
    const all = await a.app.inject({ url: '/api/silences?all=yes', headers: bearer() });
    expect(all.statusCode).toBe(200);
    expect(
      (await problem({ method: 'POST', url: '/api/vehicles/veh-0001/power/on?wait=maybe' })).message,
    ).toBe('query.wait: must be true or false (got "maybe")');
  });

  it('name every body field that is wrong, and reject a body that is not JSON', async () => {
    const empty = await problem({ method: 'POST', url: '/api/silences', payload: {} });
    expect(empty.status).toBe(400);
    expect(empty.details?.problems).toEqual(
      expect.arrayContaining([
        'body.matchers: is required (an object)',
        'body.createdBy: is required: say who creates the silence',
        'body.comment: is required: say why (a ticket, the work going on)',
      ]),
    );
    expect(empty.message).toContain('body.matchers: is required (an object)');

    const wrong = await problem({
      method: 'POST',
      url: '/api/silences',
      payload: { matchers: { severity: 'loud' }, duration: 'a while', createdBy: 'ops', comment: 'x' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.message).toMatch(/body\.matchers\.severity: /);
    expect(wrong.message).toMatch(/body\.duration: /);

    // JSON's words, not the config file's YAML ones; a value of the wrong kind is said so.
    const kinds = await problem({
      method: 'POST',
      url: '/api/silences',
      payload: { matchers: ['type=x'], duration: '1h', createdBy: 'ops', comment: 3 },
    });
    expect(kinds.details?.problems).toEqual([
      'body.matchers: expected an object; got a list',
      'body.comment: expected text; got a number',
    ]);
    const ack = await problem({
      method: 'POST',
      url: '/api/incidents/inc_nope/ack',
      payload: { comment: { why: 'x' }, author: 'ops' },
    });
    expect(ack.details?.problems).toEqual(['body.comment: expected text; got an object']);

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
