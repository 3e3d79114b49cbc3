import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventDraft } from '../../src/events/types.js';
import { MuteMarks } from '../../src/notifiers/muting/mute-marks.js';
import { type AppHarness, appHarness } from './helpers.js';

let api: AppHarness;

beforeAll(async () => {
  api = await appHarness({ harness: { empty: true, prefix: `tc-${randomBytes(5).toString('hex')}` } });
});

afterAll(async () => {
  await api?.close();
});

describe('GET /api/events: what was kept out of notifications', () => {
  it('says which events were inhibited, and by what', async () => {
    const { h, app } = api;
    const drafts: EventDraft[] = [
      {
        type: 'robot.health.down',
        data: {
          severity: 'critical',
          previous: 'up',
          current: 'down',
          since: '2026-03-01T10:00:00.000Z',
          consecutiveFailures: 3,
          lastError: { code: 'service_unavailable', status: 503 },
        },
      },
    ];
    const observedAt = '2026-03-01T10:01:00.000Z';
    const down = await h.store.commit(
      { kind: 'robot', id: 'r-1', facet: 'health' },
      0,
      { state: 1, observedAt },
      drafts,
    );
    const other = await h.store.commit(
      { kind: 'robot', id: 'r-2', facet: 'health' },
      0,
      { state: 1, observedAt },
      drafts,
    );
    if (!down.committed || !other.committed) throw new Error('commit refused');
    const inhibited = {
      reason: 'inhibited' as const,
      by: 'upstream-robots',
      source: { type: 'monitor.upstream.degraded', subject: 'upstream/robots' },
    };
    await new MuteMarks({ redis: h.redis, prefix: h.prefix }).mark(
      down.events[0]?.id ?? '',
      inhibited,
      1_000,
    );

    const response = await app.inject({ method: 'GET', url: '/api/events?type=robot.health.*' });
    expect(response.statusCode).toBe(200);
    const items = (response.json() as { items: { event: { subject: string }; muted?: unknown }[] }).items;
    expect(items.map((item) => [item.event.subject, item.muted])).toEqual([
      ['robot/r-1', { ...inhibited, at: 1_000 }],
      ['robot/r-2', undefined],
    ]);
  });
});
