import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AppHarness, appHarness } from './helpers.js';

let api: AppHarness;

beforeAll(async () => {
  api = await appHarness({ harness: { empty: true, prefix: `tc-${randomBytes(5).toString('hex')}` } });
});

afterAll(async () => {
  await api?.close();
});

interface Page {
  items: { streamId: string; event: { subject: string; data: { current: string } } }[];
}

describe('GET /api/events?before=: an entity timeline paged back from the newest', () => {
  it('answers the newest events before a position, oldest first, for one subject', async () => {
    const { h, app } = api;
    // Five health changes of r-1, interleaved with changes of r-2 that the subject filter leaves out.
    for (let version = 0; version < 5; version += 1) {
      for (const id of ['r-1', 'r-2']) {
        const result = await h.store.commit(
          { kind: 'robot', id, facet: 'health' },
          version,
          { state: version + 1, observedAt: new Date(Date.UTC(2026, 2, 1, 10, version)).toISOString() },
          [
            {
              type: 'robot.health.down',
              data: { severity: 'critical', previous: 'up', current: `step-${version}`, since: null },
            },
          ],
        );
        if (!result.committed) throw new Error('commit refused');
      }
    }
    const get = async (query: string) => {
      const response = await app.inject({ method: 'GET', url: `/api/events?subject=robot/r-1&${query}` });
      expect(response.statusCode, response.body).toBe(200);
      return (response.json() as Page).items;
    };
    const newest = await get('limit=2');
    expect(newest.map((item) => item.event.data.current)).toEqual(['step-3', 'step-4']);
    const older = await get(`limit=2&before=${newest[0]!.streamId}`);
    expect(older.map((item) => item.event.data.current)).toEqual(['step-1', 'step-2']);
    expect(older.every((item) => item.event.subject === 'robot/r-1')).toBe(true);
    const oldest = await get(`limit=2&before=${older[0]!.streamId}`);
    expect(oldest.map((item) => item.event.data.current)).toEqual(['step-0']);
    expect(await get(`before=${oldest[0]!.streamId}`)).toEqual([]);
  });

  it('refuses a position that is not a stream id, and before together with since', async () => {
    const { app } = api;
    const notId = await app.inject({ method: 'GET', url: '/api/events?before=yesterday' });
    expect(notId.statusCode).toBe(400);
    expect(notId.json().error.message).toMatch(/^query\.before: must be a stream id/);
    const both = await app.inject({ method: 'GET', url: '/api/events?before=1-0&since=1-0' });
    expect(both.statusCode).toBe(400);
    expect(both.json().error.message).toMatch(/^query\.before: .*cannot be combined with since/);
  });
});
