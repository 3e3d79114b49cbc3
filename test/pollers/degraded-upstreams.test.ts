import { describe, expect, it } from 'vitest';
import { DegradedUpstreams } from '../../src/pollers/degraded-upstreams.js';
import type { SnapshotRecord, SnapshotStore } from '../../src/store/snapshot-store.js';
import { UPSTREAM_NAMES } from '../../src/upstream/names.js';

/** A store whose upstream records say the robot gateway is degraded; counts its reads. */
function storeWithRobotsDegraded(): { store: SnapshotStore; reads: () => number } {
  let reads = 0;
  const store = {
    read: async (): Promise<SnapshotRecord[]> => {
      reads += 1;
      return UPSTREAM_NAMES.map((name) => ({
        version: 1,
        state: { health: { alerting: name === 'robots' } },
      }));
    },
  } as unknown as SnapshotStore;
  return { store, reads: () => reads };
}

describe('DegradedUpstreams', () => {
  it('answers at once while its last reading is fresh, and reads again once it is not', async () => {
    let now = 1_000_000;
    const { store, reads } = storeWithRobotsDegraded();
    const degraded = new DegradedUpstreams({ store, now: () => now, ttlMs: 1_000 });
    expect(degraded.known('robot')).toBeUndefined();
    expect(await degraded.of('robot')).toEqual(['robots']);
    expect(degraded.known('robot')).toEqual(['robots']);
    expect(degraded.known('vehicle')).toEqual([]);
    expect(await degraded.of('vehicle')).toEqual([]);
    expect(reads()).toBe(1);
    now += 1_000;
    expect(degraded.known('robot')).toBeUndefined();
    expect(await degraded.of('robot')).toEqual(['robots']);
    expect(reads()).toBe(2);
  });
});
