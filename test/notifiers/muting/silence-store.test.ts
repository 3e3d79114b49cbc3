import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeQuietly } from '../../../src/lib/redis-connection.js';
import { SilenceStore } from '../../../src/notifiers/muting/silence-store.js';
import { connect, deletePrefixKeys, uniquePrefix } from '../../support/redis.js';

const prefix = uniquePrefix();
let redis: Redis;
let store: SilenceStore;
const T = Date.parse('2026-11-21T08:00:00.000Z');
const HOUR = 3_600_000;

beforeAll(() => {
  redis = connect();
  store = new SilenceStore({ redis, prefix, retentionMs: 24 * HOUR });
});

afterAll(async () => {
  await deletePrefixKeys(redis, prefix);
  await closeQuietly(redis);
});

describe('SilenceStore', () => {
  it('adds validated silences with sil_ ids, the author filling in a missing creator', async () => {
    const added = await store.add(
      {
        matchers: { type: 'vehicle.vpn.*', subject: 'vehicle/veh-0003' },
        duration: '2h',
        comment: 'VPN work',
      },
      T,
      'alice',
    );
    expect(added.ok).toBe(true);
    if (!added.ok) return;
    expect(added.silence).toMatchObject({
      id: expect.stringMatching(/^sil_[0-9a-f]{12}$/),
      createdBy: 'alice',
      startsAt: new Date(T).toISOString(),
      endsAt: new Date(T + 2 * HOUR).toISOString(),
    });
    expect(await store.get(added.silence.id)).toEqual(added.silence);
    expect((await store.active(T + HOUR)).map((silence) => silence.id)).toContain(added.silence.id);
    expect((await store.active(T + 2 * HOUR)).map((silence) => silence.id)).not.toContain(added.silence.id);
  });

  it('says what is wrong with bad input, one line per field, and stores nothing', async () => {
    const before = (await store.list({ all: true, now: T })).length;
    const added = await store.add({ matchers: { type: 'vehicle.vnp.*' }, comment: ' ' }, T, 'bob');
    expect(added.ok).toBe(false);
    if (added.ok) return;
    expect(added.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^matchers\.type: "vehicle\.vnp\.\*" matches no event type/),
        'comment: must say why (a ticket, the work going on)',
        'endsAt: give endsAt or duration',
      ]),
    );
    expect((await store.list({ all: true, now: T })).length).toBe(before);
  });

  it('expires a silence now, lists expired ones only with all, and prunes them after the retention', async () => {
    const added = await store.add(
      { matchers: { tags: { site: 'north' } }, duration: '1h', createdBy: 'carol', comment: 'site visit' },
      T,
    );
    if (!added.ok) throw new Error(added.problems.join('; '));
    const id = added.silence.id;
    const expired = await store.expire(id, T + 60_000);
    expect(expired).toMatchObject({ found: true, alreadyExpired: false });
    expect((await store.get(id))?.endsAt).toBe(new Date(T + 60_000).toISOString());
    expect(await store.expire(id, T + 120_000)).toMatchObject({ found: true, alreadyExpired: true });
    expect(await store.expire('sil_nope', T)).toEqual({ found: false });

    expect((await store.list({ now: T + 120_000 })).map((silence) => silence.id)).not.toContain(id);
    expect((await store.list({ all: true, now: T + 120_000 })).map((silence) => silence.id)).toContain(id);
    expect(await store.prune(T + 60_000 + 24 * HOUR)).toBeGreaterThanOrEqual(1);
    expect(await store.get(id)).toBeUndefined();
  });
});
