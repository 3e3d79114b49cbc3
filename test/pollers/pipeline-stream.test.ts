import { describe, expect, it } from 'vitest';
import type { Detector } from '../../src/events/types.js';
import { ObservationPipeline } from '../../src/pollers/observation-pipeline.js';
import {
  type CommitItem,
  type CommitResult,
  SnapshotStore,
  type TouchItem,
} from '../../src/store/snapshot-store.js';
import { suiteConnection, uniquePrefix } from '../support/redis.js';

const prefix = uniquePrefix();
const redis = suiteConnection(prefix);

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

  it('records unchanged polls in batches of chunkSize, and the rest when done', async () => {
    class TouchCountingStore extends SnapshotStore {
      readonly touches: number[] = [];
      override async touch(items: readonly TouchItem[]): Promise<void> {
        if (items.length > 0) this.touches.push(items.length);
        return super.touch(items);
      }
    }
    const store = new TouchCountingStore({ redis, prefix, installation: 'test' });
    const ids = ['t1', 't2', 't3', 't4', 't5'];
    await new ObservationPipeline({ store }).run(
      { poller: 'test', detector: keepValue, options: undefined },
      ids.map((id) => input(id, 7)),
    );
    const later = '2026-01-01T00:01:00.000Z';
    const stream = new ObservationPipeline({ store, chunkSize: 2 }).stream({
      poller: 'test',
      detector: keepValue,
      options: undefined,
    });
    store.touches.length = 0;
    for (const id of ids) stream.add({ ...input(id, 7), observation: { ok: true, at: later, value: 7 } });
    const result = await stream.done();

    expect(result).toMatchObject({ observed: 5, unchanged: 5, committed: 0 });
    // Never one write per poll: at least two at a time until the last one, written by done.
    expect(store.touches.reduce((sum, n) => sum + n, 0)).toBe(5);
    expect(store.touches.slice(0, -1).every((n) => n >= 2)).toBe(true);
    const records = await store.read(ids.map((id) => input(id, 0).ref));
    expect(records.map((record) => record.lastPolledAt)).toEqual(ids.map(() => later));
    expect(records.map((record) => record.version)).toEqual(ids.map(() => 1));
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

  it('an unchanged poll clears a stored error, and writes no clearing where there is none', async () => {
    class TouchRecordingStore extends SnapshotStore {
      readonly touched: TouchItem[] = [];
      override async touch(items: readonly TouchItem[]): Promise<void> {
        this.touched.push(...items);
        return super.touch(items);
      }
    }
    const store = new TouchRecordingStore({ redis, prefix, installation: 'test' });
    const pipeline = new ObservationPipeline({ store });
    const spec = { poller: 'test', detector: keepValue, options: undefined };
    const poll = (id: string, minute: number, ok: boolean) => ({
      ref: input(id, 0).ref,
      observation: ok
        ? { ok: true as const, at: `2026-01-01T00:0${minute}:00.000Z`, value: 4 }
        : {
            ok: false as const,
            at: `2026-01-01T00:0${minute}:00.000Z`,
            error: { code: 'timeout', message: 'timed out' },
          },
    });
    await pipeline.run(spec, [poll('clean', 0, true), poll('flaky', 0, true)]);
    await pipeline.run(spec, [poll('flaky', 1, false)]);
    expect((await store.read([poll('flaky', 0, true).ref]))[0]?.lastError?.code).toBe('timeout');

    store.touched.length = 0;
    await pipeline.run(spec, [poll('clean', 2, true), poll('flaky', 2, true)]);
    const byId = new Map(store.touched.map((item) => [item.ref.id, item]));
    expect(byId.get('clean')?.lastError).toBeUndefined();
    expect(byId.get('flaky')?.lastError).toBeNull();
    const records = await store.read([poll('clean', 0, true).ref, poll('flaky', 0, true).ref]);
    expect(records.map((record) => record.lastError)).toEqual([undefined, undefined]);
    expect(records.map((record) => record.lastSeenAt)).toEqual(records.map(() => '2026-01-01T00:02:00.000Z'));
  });
});
