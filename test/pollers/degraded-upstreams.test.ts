import { describe, expect, it } from 'vitest';
import { DegradedUpstreams } from '../../src/pollers/degraded-upstreams.js';
import type { SnapshotRecord, SnapshotStore } from '../../src/store/snapshot-store.js';
import { UPSTREAM_NAMES } from '../../src/upstream/names.js';

const settled = { alerting: false, streak: 0, streakSince: null, incidentSince: null };
const firing = { alerting: true, streak: 0, streakSince: null, incidentSince: 900_000 };
const badStreak = { alerting: false, streak: 1, streakSince: 950_000, incidentSince: null };

/**
 * A store whose upstream records say the robot gateway is degraded (the fleet API has a bad
 * streak under way, `unsettled`); counts its reads.
 */
function storeWithRobotsDegraded(): { store: SnapshotStore; reads: () => number } {
  let reads = 0;
  const health = { token: settled, fleet: badStreak, robots: firing } as const;
  const store = {
    read: async (): Promise<SnapshotRecord[]> => {
      reads += 1;
      return UPSTREAM_NAMES.map((name) => ({ version: 1, state: { v: 1, health: health[name] } }));
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

  it('also names the upstreams not settled either way, for what their trouble may explain', async () => {
    const { store } = storeWithRobotsDegraded();
    const degraded = new DegradedUpstreams({ store, now: () => 1_000_000 });
    expect(await degraded.of('vehicle')).toEqual([]);
    expect(await degraded.unsettled('vehicle')).toEqual(['fleet']);
    expect(await degraded.unsettled('robot')).toEqual(['robots']);
  });
});
