import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Tally } from '../../src/metrics/tally.js';

interface View {
  id: number;
  state?: string;
}

/** What counting every view from scratch gives. */
function counted(labels: readonly string[], views: readonly View[]): Map<string, number> {
  const out = new Map(labels.map((label) => [label, 0]));
  for (const view of views) if (view.state) out.set(view.state, (out.get(view.state) ?? 0) + 1);
  return out;
}

describe('Tally', () => {
  it('counts a label over the views, the known labels at 0', () => {
    const tally = new Tally<View>(['on', 'off'], (view) => view.state);
    tally.update([{ id: 1, state: 'on' }, { id: 2 }, { id: 3, state: 'odd' }]);
    expect([...tally.counts]).toEqual([
      ['on', 1],
      ['off', 0],
      ['odd', 1],
    ]);
  });

  it('brought up to date reading by reading, counts as one counting the reading alone', () => {
    const labels = ['on', 'off'];
    // A pool of views (the same object when unchanged, as the read model hands them out); a
    // reading is some of them in some order: entities changed, gone, come, moved.
    const pool: View[] = Array.from({ length: 12 }, (_, id) => ({
      id,
      ...(id % 4 === 3 ? {} : { state: ['on', 'off', 'unknown'][id % 3] }),
    }));
    const reading = fc.shuffledSubarray(pool);
    fc.assert(
      fc.property(fc.array(reading, { minLength: 1, maxLength: 8 }), (readings) => {
        const tally = new Tally<View>(labels, (view) => view.state);
        for (const views of readings) {
          tally.update(views);
          const expected = counted(labels, views);
          for (const label of new Set([...expected.keys(), ...tally.counts.keys()]))
            expect(tally.counts.get(label) ?? 0).toBe(expected.get(label) ?? 0);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('looks at only the positions whose view is another object', () => {
    const looked: number[] = [];
    const views: View[] = Array.from({ length: 1_000 }, (_, id) => ({ id, state: 'on' }));
    const tally = new Tally<View>(['on', 'off'], (view) => {
      looked.push(view.id);
      return view.state;
    });
    tally.update(views);
    looked.length = 0;
    const next = views.slice();
    next[500] = { id: 500, state: 'off' };
    tally.update(next);
    // The old view out, the new one in.
    expect(looked).toEqual([500, 500]);
    expect(tally.counts.get('off')).toBe(1);
    expect(tally.counts.get('on')).toBe(999);
  });
});
