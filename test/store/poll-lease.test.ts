import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeQuietly, createProducerConnection, waitForReady } from '../../src/lib/redis-connection.js';
import { type LeaseRef, PollLeases } from '../../src/store/poll-lease.js';
import { connect, deletePrefixKeys, eventually, redisUrl, uniquePrefix } from '../support/redis.js';

// One shard is the layout of every store so far; four spread the leases over four hash tags.
describe.each([1, 4])('PollLeases with %i shard(s)', (shards) => {
  const prefix = uniquePrefix('hs');
  let admin: Redis;
  let redis: Redis;
  let leases: PollLeases;

  const ref = (id: string): LeaseRef => ({ kind: 'vehicle', id, scope: 'power' });

  beforeAll(async () => {
    admin = connect();
    redis = createProducerConnection(redisUrl(), { name: 'test-leases' });
    await waitForReady(redis, { timeoutMs: 5_000 });
    leases = new PollLeases({ redis, prefix, shards });
  });

  afterAll(async () => {
    await deletePrefixKeys(admin, prefix);
    await closeQuietly([redis, admin]);
  });

  describe('leases', () => {
    it('grants a held lease to nobody else', async () => {
      const refs = [ref('A'), ref('B'), ref('C')];
      expect(await leases.acquire(refs, 10_000, 'worker-1')).toEqual(refs);
      expect(await leases.acquire([ref('B'), ref('D')], 10_000, 'worker-2')).toEqual([ref('D')]);
      // Not re-entrant either: a second poll by the same owner does not overlap the first.
      expect(await leases.acquire([ref('A')], 10_000, 'worker-1')).toEqual([]);
      const ttl = await admin.pttl(leases.keyOf(ref('A')));
      expect(ttl).toBeGreaterThan(9_000);
      expect(await admin.get(leases.keyOf(ref('A')))).toBe('worker-1');
    });

    it('lets only the owner release', async () => {
      const refs = [ref('R1'), ref('R2')];
      await leases.acquire(refs, 10_000, 'owner');
      expect(await leases.release(refs, 'intruder')).toBe(0);
      expect(await leases.acquire(refs, 10_000, 'intruder')).toEqual([]);
      expect(await leases.release([ref('R1')], 'owner')).toBe(1);
      expect(await leases.acquire(refs, 10_000, 'intruder')).toEqual([ref('R1')]);
      expect(await leases.release([...refs, ref('never')], 'owner')).toBe(1);
    });

    it('frees a lease when its ttl expires, and extends only owned leases', async () => {
      await leases.acquire([ref('T')], 100, 'slow-poller');
      expect(await leases.extend([ref('T')], 150, 'other')).toEqual([]);
      expect(await leases.extend([ref('T')], 150, 'slow-poller')).toEqual([ref('T')]);
      await eventually(
        () => admin.exists(leases.keyOf(ref('T'))),
        (n) => n === 0,
        { timeoutMs: 2_000 },
      );
      expect(await leases.acquire([ref('T')], 10_000, 'next-tick')).toEqual([ref('T')]);
      expect(await leases.release([ref('T')], 'slow-poller')).toBe(0);
    });

    it('takes, extends and releases a batch spread over every shard, in batch order', async () => {
      const refs = Array.from({ length: 24 }, (_, i) => ref(`S-${i}`));
      const shardOf = (lease: LeaseRef) => leases.keys.shardOf(`vehicle/${lease.id}`);
      expect(new Set(refs.map(shardOf)).size).toBe(shards);
      for (const lease of refs)
        expect(leases.keyOf(lease).startsWith(leases.keys.shardKeys(shardOf(lease)).tag)).toBe(true);
      await leases.acquire(
        refs.filter((_, i) => i % 3 === 0),
        10_000,
        'first',
      );
      const mine = refs.filter((_, i) => i % 3 !== 0);
      expect(await leases.acquire(refs, 10_000, 'second')).toEqual(mine);
      expect(await leases.extend(refs, 20_000, 'second')).toEqual(mine);
      expect(await admin.pttl(leases.keyOf(refs[1]!))).toBeGreaterThan(15_000);
      expect(await leases.release(refs, 'second')).toBe(mine.length);
      expect(await leases.release(refs, 'first')).toBe(refs.length - mine.length);
    });

    it('handles empty batches and bad input', async () => {
      expect(await leases.acquire([], 1_000, 'x')).toEqual([]);
      expect(await leases.release([], 'x')).toBe(0);
      await expect(leases.acquire([ref('Z')], 0, 'x')).rejects.toThrow(RangeError);
      await expect(leases.acquire([ref('Z')], 1_000, '')).rejects.toThrow(TypeError);
    });
  });
});
