import { describe, expect, it } from 'vitest';
import { RecentMap } from '../../src/lib/recent-map.js';

function clocked(maxEntries: number, maxIdleMs: number) {
  let now = 1_000;
  const map = new RecentMap<string, number>({ maxEntries, maxIdleMs, now: () => now });
  return { map, advance: (ms: number) => (now += ms) };
}

describe('RecentMap', () => {
  it('keeps at most maxEntries, letting go of the least recently set', () => {
    const { map } = clocked(3, 60_000);
    for (const key of ['a', 'b', 'c']) map.set(key, 1);
    map.set('a', 2); // now the most recent
    map.set('d', 1);
    expect(map.size).toBe(3);
    expect(map.has('b')).toBe(false);
    expect(map.get('a')).toBe(2);
    expect(['c', 'd'].every((key) => map.has(key))).toBe(true);
  });

  it('lets go of entries not set for longer than maxIdleMs at the next set', () => {
    const { map, advance } = clocked(100, 10_000);
    map.set('a', 1);
    map.set('b', 1);
    advance(6_000);
    map.set('b', 2);
    map.set('c', 1);
    advance(5_000);
    // Nothing runs between two sets: 'a' is past its idle time but still here.
    expect(map.get('a')).toBe(1);
    map.set('d', 1);
    expect(map.has('a')).toBe(false);
    expect([map.get('b'), map.get('c'), map.get('d')]).toEqual([2, 1, 1]);
    advance(10_001);
    map.set('e', 1);
    expect(map.size).toBe(1);
  });

  it('agrees with a plain model under random sets, deletes and clock steps', () => {
    const { map, advance } = clocked(8, 1_000);
    let now = 1_000;
    // The model: key → [value, setAt], in order of the last set.
    const model = new Map<string, [number, number]>();
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    for (let step = 0; step < 5_000; step += 1) {
      const key = `k${random(20)}`;
      const action = random(10);
      if (action < 6) {
        map.set(key, step);
        model.delete(key);
        model.set(key, [step, now]);
        for (const [oldest, [, setAt]] of model) {
          if (model.size <= 8 && setAt >= now - 1_000) break;
          model.delete(oldest);
        }
      } else if (action < 8) {
        expect(map.delete(key)).toBe(model.delete(key));
      } else {
        const ms = random(400);
        advance(ms);
        now += ms;
      }
      expect(map.size).toBe(model.size);
      expect(map.get(key)).toBe(model.get(key)?.[0]);
    }
  });
});
