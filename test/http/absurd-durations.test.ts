import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppHarness, appHarness, bearer, TOKEN } from './helpers.js';

/**
 * Durations, times and log positions nobody means are the caller's mistake: 400 with the documented
 * error shape naming the field and the limit, never a 500 (a silence of 99999999999d used to overflow
 * the date and answer 500 with its stack in the log).
 */

let a: AppHarness;

beforeAll(async () => {
  a = await appHarness({ token: TOKEN });
});

afterAll(async () => {
  await a?.close();
});

async function answer(method: 'GET' | 'POST', url: string, payload?: object) {
  const response = await a.app.inject({ method, url, headers: bearer(), ...(payload ? { payload } : {}) });
  return { status: response.statusCode, body: response.json() as unknown };
}

function refused(message: string) {
  return { status: 400, body: { error: { code: 'bad_request', message, details: { problems: [message] } } } };
}

const silence = (fields: object) => ({
  matchers: { type: 'robot.*' },
  createdBy: 'ops',
  comment: 'absurd',
  ...fields,
});

describe('absurd durations in the API', () => {
  it('a silence of 99999999999d is a 400 naming the longest one', async () => {
    expect(await answer('POST', '/api/silences', silence({ duration: '99999999999d' }))).toEqual(
      refused('body.duration: expected a duration between 1s and 365d, like 30s; got 99999999999d'),
    );
  });

  it('a silence ending in the year 9999, or starting in ten years, is a 400', async () => {
    expect(await answer('POST', '/api/silences', silence({ endsAt: '9999-12-31T00:00:00Z' }))).toEqual(
      refused(
        'body.endsAt: expected a time at most 365d after the start (a silence lasts at most 365d); got 9999-12-31T00:00:00Z',
      ),
    );
    const later = new Date(Date.now() + 10 * 365 * 86_400_000);
    const startsAt = later.toISOString();
    const endsAt = new Date(later.getTime() + 3_600_000).toISOString();
    expect(await answer('POST', '/api/silences', silence({ startsAt, endsAt }))).toEqual(
      refused(`body.startsAt: expected a time within 365d from now; got ${startsAt}`),
    );
    expect((await answer('GET', '/api/silences?all=true')).body).toEqual({ items: [] });
  });

  it('an acknowledgement or a power wait of 99999999999d is a 400', async () => {
    expect(
      await answer('POST', '/api/incidents/vpn-veh-0001-00000000/ack', {
        comment: 'on it',
        author: 'dana',
        for: '99999999999d',
      }),
    ).toEqual(refused('body.for: expected a duration between 1s and 7d, like 30s; got 99999999999d'));
    expect(await answer('POST', '/api/vehicles/veh-0001/power/on?wait=true&timeout=99999999999d')).toEqual(
      refused('query.timeout: expected a duration between 1s and 10m, like 30s; got 99999999999d'),
    );
  });

  it('an event log position beyond what Redis can hold is a 400', async () => {
    const id = '99999999999999999999999-0';
    expect(await answer('GET', `/api/events?since=${id}`)).toEqual(
      refused(
        'query.since: must be a stream id (such as 1767225600000-0) or an ISO 8601 time (such as 2026-11-21T08:00:00Z)',
      ),
    );
    expect(await answer('GET', `/api/events/stream?lastEventId=${id}`)).toEqual(
      refused(
        'query.lastEventId: must be a stream id such as 1767225600000-0 (an event id: line of /api/events/stream)',
      ),
    );
  });
});
