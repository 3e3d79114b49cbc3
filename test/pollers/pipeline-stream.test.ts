import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Detector } from '../../src/events/types.js';
import { ObservationPipeline } from '../../src/pollers/observation-pipeline.js';
import { type CommitItem, type CommitResult, SnapshotStore } from '../../src/store/snapshot-store.js';
import { connect, deletePrefixKeys, uniquePrefix } from '../support/redis.js';

let redis: Redis;
const prefix = uniquePrefix();

/** Holds the first commit round trip until released, and records every batch's refs. */
class GatedStore extends SnapshotStore {
  readonly batches: string[][] = [];
  release!: () => void;
  readonly #gate = new Promise<void>((resolve) => {
    this.release = resolve;
  });

  override async commitMany(items: readonly CommitItem[]): Promise<CommitResult[]> {
    this.batches.push(items.map((item) => item.ref.id));
    if (this.batches.length === 1) await this.#gate;
    return super.commitMany(items);
  }
}

const keepValue: Detector<number, number> = (previous, observation) => ({
  state: observation.ok ? observation.value : (previous ?? 0),
  events: [],
});

const at = '2026-01-01T00:00:00.000Z';
const input = (id: string, value: number) => ({
  ref: { kind: 'robot' as const, id, facet: 'stream-test' },
  observation: { ok: true as const, at, value },
});

beforeAll(() => {
  redis = connect();
});

afterAll(async () => {
  await deletePrefixKeys(redis, prefix);
  redis.disconnect();
});

describe('ObservationPipeline.stream (group commit)', () => {
  it('commits the first observation at once and batches what arrives during that commit', async () => {
    const store = new GatedStore({ redis, prefix, installation: 'test' });
    const pipeline = new ObservationPipeline({ store });
    const stream = pipeline.stream({ poller: 'test', detector: keepValue, options: undefined });

    stream.add(input('a', 1));
    await expect.poll(() => store.batches.length).toBe(1);
    stream.add(input('b', 2));
    stream.add(input('c', 3));
    store.release();
    const result = await stream.done();

    expect(store.batches).toEqual([['a'], ['b', 'c']]);
    expect(result).toMatchObject({ observed: 3, failed: 0, committed: 3 });
    const records = await store.read(['a', 'b', 'c'].map((id) => input(id, 0).ref));
    expect(records.map((record) => record.state)).toEqual([1, 2, 3]);
  });

  it('counts failed observations once, when done', async () => {
    const store = new GatedStore({ redis, prefix, installation: 'test' });
    store.release();
    const pipeline = new ObservationPipeline({ store });
    const stream = pipeline.stream({ poller: 'test', detector: keepValue, options: undefined });
    stream.add({
      ref: { kind: 'robot', id: 'd', facet: 'stream-test' },
      observation: { ok: false, at, error: { code: 'timeout', message: 'timed out' } },
    });
    stream.add(input('e', 5));
    expect(await stream.done()).toMatchObject({ observed: 2, failed: 1 });
  });
});
