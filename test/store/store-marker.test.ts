import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeQuietly, createProducerConnection, waitForReady } from '../../src/lib/redis-connection.js';
import { StoreMarker } from '../../src/store/store-marker.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../support/redis.js';

/**
 * Laying out a sharded store: the control marker says when every shard has its copy, so replicas
 * starting together (or after the one that began died) finish the layout, and a copy missing from
 * a laid-out store is a shard's lost data.
 */

let admin: Redis;
let redis: Redis;
const prefixes: string[] = [];

beforeAll(async () => {
  admin = connect();
  redis = createProducerConnection(redisUrl(), { name: 'test-store-marker' });
  await waitForReady(redis, { timeoutMs: 5_000 });
});

afterAll(async () => {
  for (const prefix of prefixes) await deletePrefixKeys(admin, prefix);
  await closeQuietly([redis, admin]);
});

function marker(prefix: string): StoreMarker {
  return new StoreMarker({ redis, prefix, installation: 'test', shards: 4 });
}

async function fresh(): Promise<{ prefix: string; first: StoreMarker }> {
  const prefix = uniquePrefix('mk');
  prefixes.push(prefix);
  const first = marker(prefix);
  await first.establish(Date.now());
  return { prefix, first };
}

describe('a sharded store marker', () => {
  it('is laid out by the replica that creates it: a copy on every shard, then laidOut', async () => {
    const { first } = await fresh();
    expect(await admin.hget(first.keys.controlMarker, 'laidOut')).toBe('1');
    const epoch = await admin.hget(first.keys.controlMarker, 'epoch');
    for (const shard of first.keys.allShards)
      expect(await admin.hget(shard.storeMarker, 'epoch')).toBe(epoch);
    expect((await first.read())?.damaged).toBeFalsy();
  });

  it('is laid out by whoever starts next when its creator died half-way', async () => {
    const { prefix, first } = await fresh();
    // As the creator leaves it when it dies after the control marker and one copy.
    await admin.hset(first.keys.controlMarker, 'laidOut', '0');
    await admin.del(...first.keys.allShards.slice(1).map((shard) => shard.storeMarker));
    expect((await first.read())?.damaged).toBe(true);

    const next = marker(prefix);
    const established = await next.establish(Date.now() + 3_600_000);
    expect(established.epoch).toBe(await admin.hget(first.keys.controlMarker, 'epoch'));
    expect(await admin.hget(first.keys.controlMarker, 'laidOut')).toBe('1');
    expect((await next.read())?.damaged).toBeFalsy();
  });

  it('keeps a missing copy missing once laid out (that shard lost its data), also for older markers', async () => {
    const { prefix, first } = await fresh();
    const lost = first.keys.allShards[2]!.storeMarker;
    await admin.del(lost);
    await marker(prefix).establish(Date.now());
    expect(await admin.exists(lost)).toBe(0);
    expect((await first.read())?.damaged).toBe(true);

    // A marker written before `laidOut` existed has no such field: laid out.
    await admin.hdel(first.keys.controlMarker, 'laidOut');
    await marker(prefix).establish(Date.now());
    expect(await admin.exists(lost)).toBe(0);
  });
});
