import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appended, frozenLength, noteFrozen, startsWith } from '../../src/lib/appended.js';

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
});
