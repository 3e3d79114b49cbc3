import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PersistentMap } from '../../src/lib/persistent-map.js';

// Pairs of keys with the same 32-bit hash (FNV-1a), so the collision buckets are exercised too.
const COLLIDING = ['k32728', 'k261234', 'k32729', 'k261235', 'k32724', 'k261238'];

const key = fc.oneof(
  fc.constantFrom(...COLLIDING),
  fc.integer({ min: 0, max: 400 }).map((n) => `robot/r${n}#health`),
);

type Op = { kind: 'set'; key: string; value: number } | { kind: 'delete'; key: string };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('set' as const), key, value: fc.integer({ min: 0, max: 3 }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), key }) },
);

interface Boxed {
  n: number;
}

/** Applies the ops to a PersistentMap and to a Map, keeping every version of both. */
function run(ops: readonly Op[]): Array<{ map: PersistentMap<Boxed>; model: Map<string, Boxed> }> {
  const boxes = new Map<number, Boxed>();
  const box = (n: number) => boxes.get(n) ?? boxes.set(n, { n }).get(n)!;
  let map = PersistentMap.empty<Boxed>();
  let model = new Map<string, Boxed>();
  const versions = [{ map, model }];
  for (const step of ops) {
    model = new Map(model);
    if (step.kind === 'set') {
      map = map.set(step.key, box(step.value));
      model.set(step.key, box(step.value));
    } else {
      map = map.delete(step.key);
      model.delete(step.key);
    }
    versions.push({ map, model });
  }
  return versions;
}

function naiveDiff(before: Map<string, Boxed>, after: Map<string, Boxed>): string[] {
  const changes: string[] = [];
  for (const [k, value] of after)
    if (before.get(k) !== value) changes.push(`${k}:${before.get(k)?.n}>${value.n}`);
  for (const [k, value] of before) if (!after.has(k)) changes.push(`${k}:${value.n}>undefined`);
  return changes.sort();
}

describe('PersistentMap', () => {
  it('holds what a Map holds after any sequence of sets and deletes, every version intact', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        for (const { map, model } of run(ops)) {
          expect(map.size).toBe(model.size);
          expect(new Map(map.entries())).toEqual(model);
          for (const k of COLLIDING) expect(map.get(k)).toBe(model.get(k));
          for (const [k, value] of model) expect(map.get(k)).toBe(value);
          expect(map.has('robot/r999#health')).toBe(false);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('diffs any two versions as a walk of both would', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), fc.nat(), fc.nat(), (ops, i, j) => {
        const versions = run(ops);
        const a = versions[i % versions.length]!;
        const b = versions[j % versions.length]!;
        const changes: string[] = [];
        PersistentMap.diff(a.map, b.map, (k, was, now) => changes.push(`${k}:${was?.n}>${now?.n}`));
        expect(changes.sort()).toEqual(naiveDiff(a.model, b.model));
      }),
      { numRuns: 300 },
    );
  });

  it('has one shape per set of keys, whatever order made it', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(key, { maxLength: 120 }),
        fc.array(key, { maxLength: 60 }),
        (keys, extra) => {
          const value = { n: 1 };
          let forward = PersistentMap.empty<Boxed>();
          for (const k of keys) forward = forward.set(k, value);
          // Built backwards with detours: extra keys added and deleted again.
          let backward = PersistentMap.empty<Boxed>();
          for (const k of [...extra, ...[...keys].reverse()]) backward = backward.set(k, value);
          for (const k of extra) if (!keys.includes(k)) backward = backward.delete(k);
          const order = (map: PersistentMap<Boxed>) => [...map.keys()].filter((k) => !COLLIDING.includes(k));
          expect(order(backward)).toEqual(order(forward));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('deletes a key beside one in the last slot of a level (the sign bit)', () => {
    // These two share their first 5 hash bits and sit in slots 29 and 31 of the second level.
    const value = { n: 1 };
    const map = PersistentMap.empty<Boxed>().set('robot/r266#health', value).set('robot/r161#health', value);
    const left = map.delete('robot/r266#health');
    expect([...left.keys()]).toEqual(['robot/r161#health']);
    expect(left.get('robot/r266#health')).toBeUndefined();
    expect(left.get('robot/r161#health')).toBe(value);
  });

  it('returns itself for a change that changes nothing, and shares the rest', () => {
    const value = { n: 1 };
    let map = PersistentMap.empty<Boxed>();
    for (let n = 0; n < 1_000; n += 1) map = map.set(`robot/r${n}#health`, value);
    expect(map.set('robot/r7#health', value)).toBe(map);
    expect(map.delete('robot/absent#health')).toBe(map);
    const next = map.set('robot/r7#health', { n: 2 });
    let visited = 0;
    PersistentMap.diff(map, next, () => {
      visited += 1;
    });
    expect(visited).toBe(1);
    expect(map.get('robot/r7#health')).toBe(value);
    expect(JSON.parse(JSON.stringify(next))['robot/r7#health']).toEqual({ n: 2 });
    expect(Object.keys(next.toJSON())).toHaveLength(1_000);
  });
});
