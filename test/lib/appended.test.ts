import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appended, extendingInPlace, frozenLength, noteFrozen, startsWith } from '../../src/lib/appended.js';

type Step =
  | { kind: 'append'; count: number }
  | { kind: 'filter'; drop: number }
  | { kind: 'back'; to: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('append' as const), count: fc.integer({ min: 0, max: 3 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('filter' as const), drop: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('back' as const), to: fc.nat() }) },
);

function naive(list: readonly unknown[], prefix: readonly unknown[]): boolean {
  return prefix.length <= list.length && prefix.every((item, index) => list[index] === item);
}

describe('appended', () => {
  it('tells whether one version begins with another as comparing every item would', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 120 }), fc.nat(), fc.nat(), (steps, i, j) => {
        let made = 0;
        const versions: object[][] = [[]];
        let current: object[] = [];
        for (const action of steps) {
          if (action.kind === 'append') {
            current = appended(current, ...Array.from({ length: action.count }, () => ({ n: made++ })));
          } else if (action.kind === 'filter' && current.length > 0) {
            const drop = action.drop % current.length;
            current = current.filter((_, index) => index !== drop);
          } else if (action.kind === 'back') {
            // Appending again to an older version: two lines of versions from one base.
            current = versions[action.to % versions.length]!;
          }
          versions.push(current);
        }
        const a = versions[i % versions.length]!;
        const b = versions[j % versions.length]!;
        expect(startsWith(a, b)).toBe(naive(a, b));
        expect(startsWith(b, a)).toBe(naive(b, a));
      }),
      { numRuns: 400 },
    );
  });

  it('tells two lines appended to one array apart', () => {
    const [a, b, c, d] = [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }];
    const one = appended([], a);
    const two = appended(one, b);
    const other = appended(one, c);
    const longer = appended(other, d);
    expect(startsWith(other, two)).toBe(false);
    expect(startsWith(longer, two)).toBe(false);
    expect(startsWith(longer, one)).toBe(true);
    expect(startsWith(longer, other)).toBe(true);
    expect(startsWith(two, one)).toBe(true);
    expect(startsWith(appended(two, c), two)).toBe(true);
  });

  it('remembers what it appended to, invisibly, and how much of it is frozen', () => {
    const base = [{ n: 1 }];
    const next = appended(base, { n: 2 });
    expect(next).toStrictEqual([{ n: 1 }, { n: 2 }]);
    expect(JSON.stringify(next)).toBe('[{"n":1},{"n":2}]');
    expect(frozenLength(next)).toBe(0);
    noteFrozen(next);
    const after = appended(next, { n: 3 });
    expect(frozenLength(after)).toBe(2);
    // A line left from an older array shares only what the older one had.
    expect(frozenLength(appended(appended(base, { n: 4 }), { n: 5 }))).toBe(0);
    expect(startsWith(next, base)).toBe(true);
    expect(startsWith(base, next)).toBe(false);
    expect(startsWith(next, [{ n: 1 }])).toBe(false);
  });

  describe('extendingInPlace', () => {
    it('extends in place only what it appended inside the run', () => {
      const before = appended([1], 2);
      const frozen = Object.freeze(appended([1], 2));
      const { first, second, third, fork, fromFrozen } = extendingInPlace(() => {
        const first = appended(before, 3);
        const second = appended(first, 4, 5);
        const third = appended(second, 6);
        // An array it did not make itself (a copy): a new array, as outside.
        const copy = third.slice();
        const fork = [copy, appended(copy, 9)] as const;
        return { first, second, third, fork, fromFrozen: appended(frozen, 3) };
      });
      // What the run was given is left alone; what it made grew in place.
      expect(before).toEqual([1, 2]);
      expect(first).not.toBe(before);
      expect(second).toBe(first);
      expect(third).toBe(first);
      expect(third).toEqual([1, 2, 3, 4, 5, 6]);
      expect(startsWith(third, before)).toBe(true);
      expect(fork[1]).not.toBe(fork[0]);
      expect(fork[0]).toHaveLength(6);
      expect(fromFrozen).not.toBe(frozen);
      expect(frozen).toEqual([1, 2]);
      // Outside a run every append is a new array again.
      const after = appended(third, 7);
      expect(after).not.toBe(third);
      expect(third).toHaveLength(6);
    });

    it('keeps versions of the line apart once one was extended past the run', () => {
      const base = appended([], 'a');
      const grown = extendingInPlace(() => {
        const one = appended(base, 'b');
        return appended(one, 'c');
      });
      const older = appended(base, 'x');
      expect(grown).toEqual(['a', 'b', 'c']);
      expect(older).toEqual(['a', 'x']);
      expect(startsWith(grown, base)).toBe(true);
      expect(startsWith(older, base)).toBe(true);
      expect(startsWith(older, grown)).toBe(false);
    });
  });
});
