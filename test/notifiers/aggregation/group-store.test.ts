import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { closeQuietly, createProducerConnection, waitForReady } from '../../../src/lib/redis-connection.js';
import { type GroupRecord, newRecord, reschedule } from '../../../src/notifiers/aggregation/group-record.js';
import { GroupStore } from '../../../src/notifiers/aggregation/group-store.js';
import { addEvent, closeSubject, openGroup } from '../../../src/notifiers/aggregation/groups.js';
import { groupFor } from '../../../src/notifiers/routing/labels.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../../support/redis.js';
import { routeMatch, vpnLost } from '../routing/helpers.js';

const prefix = uniquePrefix();
const policy = { handOffRetryMs: 1_000, idleGraceMinMs: 0 };
const match = routeMatch({ groupWait: 1_000, groupInterval: 2_000 });
let admin: Redis;
let connections: Redis[];
let stores: GroupStore[];

beforeAll(async () => {
  admin = connect();
  connections = [0, 1].map(() => createProducerConnection(redisUrl(), { name: 'test-group-store' }));
  await Promise.all(connections.map((redis) => waitForReady(redis, { timeoutMs: 5_000 })));
  stores = connections.map((redis) => new GroupStore({ redis, prefix }));
});

afterAll(async () => {
  await deletePrefixKeys(admin, prefix);
  await closeQuietly([...connections, admin]);
});

function emptyGroup(key: string, now: number): GroupRecord {
  return reschedule(newRecord(openGroup({ key, labels: {} }, match, now)), now, policy);
}

/** Counts in `sequence`: a stand-in for any read-modify-write. */
function increment(now: number) {
  return (current: GroupRecord | undefined) => {
    const record = current ?? emptyGroup('counter', now);
    return {
      result: record.state.sequence + 1,
      next: { ...record, state: { ...record.state, sequence: record.state.sequence + 1 } },
    };
  };
}

describe('GroupStore', () => {
  it('applies concurrent read-modify-writes from two replicas exactly once each', async () => {
    const now = Date.now();
    const [one, two] = stores as [GroupStore, GroupStore];
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, index) =>
        (index % 2 === 0 ? one : two).update('counter', increment(now)),
      ),
    );
    expect(new Set(results).size).toBe(60);
    const record = await one.get('counter');
    expect(record?.state.sequence).toBe(60);
    // The wake set holds the record's wake time (an idle group: the end of its grace).
    expect(await one.wakeScore('counter')).toBe(record?.wakeAt);
  });

  it('keeps the wake set and the subject sets in step with the record, and deletes cleanly', async () => {
    const now = Date.now();
    const [store] = stores as [GroupStore];
    const event = vpnLost('veh-0001');
    const group = groupFor(event, {}, match);
    await store.update(group.key, (current) => {
      const state = addEvent(current?.state ?? openGroup(group, match, now), event, now, match);
      return { result: undefined, next: reschedule(newRecord(state), now, policy) };
    });
    expect(await store.groupsOfSubject('vehicle/veh-0001')).toEqual([group.key]);
    expect(await store.wakeScore(group.key)).toBe(now + 1_000);

    await store.update(group.key, (current) => ({
      result: undefined,
      next: current && { ...current, state: closeSubject(current.state, 'vehicle/veh-0001') },
    }));
    expect(await store.groupsOfSubject('vehicle/veh-0001')).toEqual([]);

    await store.update(group.key, () => ({ result: undefined, next: null }));
    expect(await store.get(group.key)).toBeUndefined();
    expect(await store.wakeScore(group.key)).toBeUndefined();
  });

  it('leases due groups to one flusher at a time; a lease that runs out makes them due again', async () => {
    const now = Date.now();
    const [one, two] = stores as [GroupStore, GroupStore];
    await one.update('lease', () => ({
      result: undefined,
      next: { ...emptyGroup('lease', now), wakeAt: now },
    }));
    expect(await one.claimDue(now, now + 500, 10)).toContain('lease');
    expect(await two.claimDue(now + 100, now + 600, 10)).not.toContain('lease');
    expect(await two.claimDue(now + 500, now + 1_000, 10)).toContain('lease');
    // A wake entry whose group is gone is dropped by `forget`, not by a live group.
    await one.forget('lease');
    expect(await one.wakeScore('lease')).toBe(now + 1_000);
    await admin.del(one.keys.group('lease'));
    await one.forget('lease');
    expect(await one.wakeScore('lease')).toBeUndefined();
  });

  it('applies queued changes to one group in call order; a throwing change fails alone', async () => {
    const now = Date.now();
    const [store] = stores as [GroupStore];
    const failing = store.update('batch', () => {
      throw new Error('a bug in one mutator');
    });
    const results = await Promise.all([
      ...Array.from({ length: 20 }, () => store.update('batch', increment(now))),
      failing.catch((error: Error) => error.message),
    ]);
    expect(results.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
    expect(results[20]).toBe('a bug in one mutator');
    expect((await store.get('batch'))?.state.sequence).toBe(20);
  });

  it('changes a group it just read or wrote without reading it again, never on a stale version', async () => {
    const now = Date.now();
    const [one, two] = stores as [GroupStore, GroupStore];
    const reads = vi.spyOn(connections[0] as Redis, 'hmget');
    try {
      expect(await one.update('known', increment(now))).toBe(1);
      expect(await one.update('known', increment(now))).toBe(2);
      expect(reads).toHaveBeenCalledTimes(1);
      // Another replica replaced the version `one` remembers: its compare-and-set fails, it reads
      // and applies its change on top.
      expect(await two.update('known', increment(now))).toBe(3);
      expect(await one.update('known', increment(now))).toBe(4);
      expect(reads).toHaveBeenCalledTimes(2);
      // A change that changes nothing is answered from a fresh read, not from memory.
      expect(await two.update('known', increment(now))).toBe(5);
      expect(await one.update('known', (current) => ({ result: current?.state.sequence }))).toBe(5);
      expect((await one.get('known'))?.state.sequence).toBe(5);
    } finally {
      reads.mockRestore();
    }
  });
});
