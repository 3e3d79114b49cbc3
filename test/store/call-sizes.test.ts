import { describe, expect, it } from 'vitest';
import { renderTable } from '../../src/cli/io.js';
import { ITEMS_PER_CALL, slices } from '../../src/lib/slices.js';
import { runScript } from '../../src/store/scripts.js';
import { type SnapshotRef, SnapshotStore } from '../../src/store/snapshot-store.js';
import { suiteConnection, uniquePrefix } from '../support/redis.js';

// A call's arguments live on the stack: spread, a few hundred thousand throw RangeError. A fleet of
// 100,000 (and a storm through one group of it) reaches such counts; nothing may be spread that long.
const MANY = 300_000;

describe('slices', () => {
  it('cuts a list into consecutive slices of at most the size', () => {
    expect(slices([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(slices([], 2)).toEqual([]);
    expect(slices(Array.from({ length: 2_500 }, (_, i) => i)).map((slice) => slice.length)).toEqual([
      ITEMS_PER_CALL,
      ITEMS_PER_CALL,
      500,
    ]);
    expect(() => slices([1], 0)).toThrow(RangeError);
  });
});

describe('calls as long as a large fleet makes them', () => {
  const prefix = uniquePrefix('calls');
  const redis = suiteConnection(prefix);

  it('runs a Lua script with hundreds of thousands of arguments', async () => {
    const script = { name: 'fleetwatchTestCountArgs', lua: 'return #ARGV' };
    const args = Array.from({ length: MANY }, (_, i) => i);
    expect(await runScript(redis, script, [`${prefix}:k`], args)).toBe(MANY);
  });

  it('forgets hundreds of thousands of snapshots', async () => {
    const store = new SnapshotStore({ redis, prefix, installation: 'calls', shards: 2 });
    const refs: SnapshotRef[] = Array.from({ length: MANY }, (_, i) => ({
      kind: 'vehicle',
      id: `V-${i}`,
      facet: 'power',
    }));
    const kept: SnapshotRef = { kind: 'vehicle', id: 'kept', facet: 'power' };
    for (const ref of [refs[0]!, refs[MANY - 1]!, kept]) {
      await store.commit(ref, 0, { state: 1, observedAt: '2026-03-01T10:00:00.000Z' }, []);
    }
    const exists = (ref: SnapshotRef) => redis.exists(store.keyOf(ref));
    expect(await exists(refs[MANY - 1]!)).toBe(1);
    await store.forget(refs);
    expect(await exists(refs[0]!)).toBe(0);
    expect(await exists(refs[MANY - 1]!)).toBe(0);
    expect(await exists(kept)).toBe(1);
  });

  it('renders a table of hundreds of thousands of rows', () => {
    const rows = Array.from({ length: MANY }, (_, i) => [`V-${i}`, i % 2 === 0 ? 'yes' : 'no']);
    const lines = renderTable(['VEHICLE', 'VPN'], rows).split('\n');
    expect(lines).toHaveLength(MANY + 1);
    expect(lines[0]).toBe(`VEHICLE${' '.repeat('V-299999'.length - 'VEHICLE'.length)}  VPN`);
  });
});
