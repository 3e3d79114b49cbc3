import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { draft, EVENT } from '../../src/events/catalogue.js';
import type { FleetEvent } from '../../src/events/types.js';
import { closeQuietly, createProducerConnection, waitForReady } from '../../src/lib/redis-connection.js';
import { CountingSnapshotStore } from '../../src/metrics/index.js';
import { deletePrefixKeys, redisUrl, uniquePrefix } from '../support/redis.js';

/** fleetwatch_events_total counts where a commit is won: each event once, conflicts never. */

const prefix = uniquePrefix();
let redis: Redis;
let store: CountingSnapshotStore;
const counted: FleetEvent[] = [];

beforeAll(async () => {
  redis = createProducerConnection(redisUrl(), { name: 'test-metrics-store' });
  await waitForReady(redis, { timeoutMs: 5_000 });
  store = new CountingSnapshotStore({
    redis,
    prefix,
    installation: 'test',
    onCommitted: (events) => counted.push(...events),
  });
});

afterAll(async () => {
  await deletePrefixKeys(redis, prefix);
  await closeQuietly(redis);
});

describe('CountingSnapshotStore', () => {
  it('reports the events of won commits only', async () => {
    const ref = { kind: 'vehicle' as const, id: 'V-1', facet: 'link' };
    const next = (at: string) => ({ state: { n: at }, observedAt: at });
    const lost = draft(EVENT.vpnDisconnected, {
      previous: 'connected',
      current: 'disconnected',
      since: '2026-01-01T00:00:00.000Z',
      consecutive: 1,
    });

    const first = await store.commit(ref, 0, next('2026-01-01T00:00:00.000Z'), [lost]);
    expect(first.committed).toBe(true);
    // Same expected version again: a conflict, nothing counted.
    const conflict = await store.commit(ref, 0, next('2026-01-01T00:00:01.000Z'), [lost]);
    expect(conflict.committed).toBe(false);
    expect(counted.map((event) => event.type)).toEqual(['vehicle.vpn.disconnected']);

    const results = await store.commitMany([
      { ref, expectedVersion: 1, next: next('2026-01-01T00:00:02.000Z'), drafts: [lost, lost] },
      {
        ref: { ...ref, id: 'V-2' },
        expectedVersion: 5,
        next: next('2026-01-01T00:00:02.000Z'),
        drafts: [lost],
      },
    ]);
    expect(results.map((result) => result.committed)).toEqual([true, false]);
    expect(counted).toHaveLength(3);
    expect(new Set(counted.map((event) => event.id)).size).toBe(3);
  });
});
