import { describe, expect, it } from 'vitest';
import { GC_KINDS, type GcKind, watchGcPauses } from '../../src/lib/gc-pauses.js';

describe('watchGcPauses', () => {
  it("tells each collection of this thread's heap, with its kind and pause in seconds, until stopped", async () => {
    const pauses: Array<[GcKind, number]> = [];
    const stop = watchGcPauses((kind, seconds) => pauses.push([kind, seconds]));
    let kept: unknown[] = [];
    // Garbage until the observer has told a scavenge: young objects, let go a turn later.
    while (!pauses.some(([kind]) => kind === 'minor')) {
      kept = Array.from({ length: 50_000 }, (_, i) => ({ i, text: `object ${i}` }));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(kept.length).toBe(50_000);
    for (const [kind, seconds] of pauses) {
      expect(GC_KINDS).toContain(kind);
      expect(seconds).toBeGreaterThanOrEqual(0);
      expect(seconds).toBeLessThan(5);
    }
    stop();
    const told = pauses.length;
    for (let round = 0; round < 20; round += 1) {
      kept = Array.from({ length: 50_000 }, (_, i) => ({ i }));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(pauses.length).toBe(told);
  });
});
