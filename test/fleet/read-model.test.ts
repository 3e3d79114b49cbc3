import { describe, expect, it } from 'vitest';
import { FleetReadModel, type FleetStore } from '../../src/fleet/index.js';
import type { SnapshotRecord, SnapshotRef } from '../../src/store/snapshot-store.js';

/** The gauges' reading keeps the views it decoded between readings, and only those of the fleet now. */

const LINK = { v: 1, vpn: { alerting: false, streak: 0, streakSince: null, incidentSince: null }, ip: null };

/** Vehicles `listed` (`list` changes them), every vehicle snapshot at version 1; counts the snapshots read in full. */
function fleet(listed: string[]) {
  const store = {
    listed,
    listVersion: 1,
    list(ids: string[]) {
      store.listed = ids;
      store.listVersion += 1;
    },
    fullReads: [] as string[],
    /** The change feed: the entities committed, in order; a cursor is how many were seen. */
    feed: [] as SnapshotRef[],
    async read(refs: readonly SnapshotRef[]): Promise<SnapshotRecord[]> {
      return refs.map((ref): SnapshotRecord => {
        if (ref.kind === 'fleet')
          return {
            version: 1,
            state: { v: 1, known: ref.id === 'vehicle' ? store.listed : [], missing: [] },
          };
        store.fullReads.push(`${ref.id}/${ref.facet}`);
        return { version: 1, state: ref.facet === 'link' ? LINK : undefined };
      });
    },
    async readStamps(refs: readonly SnapshotRef[]): Promise<SnapshotRecord[]> {
      return refs.map((ref) => ({ version: ref.kind === 'fleet' ? store.listVersion : 1, state: undefined }));
    },
    async changeCursors(): Promise<string[]> {
      return [String(store.feed.length)];
    },
    async changesSince(cursors: readonly string[]) {
      return { refs: store.feed.slice(Number(cursors[0])), cursors: [String(store.feed.length)] };
    },
  };
  return store satisfies FleetStore;
}

describe('the fleet reading for the gauges', () => {
  it('decodes an unchanged entity once, again when the feed names it, and forgets one that left', async () => {
    const store = fleet(['V-1', 'V-2', 'V-3']);
    const model = new FleetReadModel(store, { reuse: true, batchSize: 2 });
    expect((await model.readFleet()).vehicles.map((vehicle) => vehicle.id)).toEqual(['V-1', 'V-2', 'V-3']);
    const first = store.fullReads.length;
    expect(first).toBeGreaterThan(0);
    // Nothing changed: nothing read in full.
    await model.readFleet();
    expect(store.fullReads).toHaveLength(first);
    // V-3 committed: only V-3 is read again.
    store.feed.push({ kind: 'vehicle', id: 'V-3', facet: 'link' });
    await model.readFleet();
    expect(store.fullReads.slice(first).every((read) => read.startsWith('V-3/'))).toBe(true);
    expect(store.fullReads.length).toBeGreaterThan(first);
    store.fullReads.length = first;
    // V-2 leaves: it is gone from the reading, and from what the model keeps…
    store.list(['V-1', 'V-3']);
    expect((await model.readFleet()).vehicles.map((vehicle) => vehicle.id)).toEqual(['V-1', 'V-3']);
    expect(store.fullReads).toHaveLength(first);
    // …so when it comes back, it is decoded again (its snapshots are the same versions as before).
    store.list(['V-1', 'V-2', 'V-3']);
    await model.readFleet();
    const again = store.fullReads.slice(first);
    expect(again.length).toBeGreaterThan(0);
    expect(again.every((read) => read.startsWith('V-2/'))).toBe(true);
  });

  it('follows on from the last reading when the list changed but its vehicles did not', async () => {
    const store = fleet(['V-1', 'V-2', 'V-3']);
    const model = new FleetReadModel(store, { reuse: true });
    const first = await model.readFleet();
    const reads = store.fullReads.length;
    // The list snapshot committed again (a VPN link, an address), the same vehicles in it.
    store.list(['V-1', 'V-2', 'V-3']);
    const next = await model.readFleet();
    expect(store.fullReads).toHaveLength(reads);
    // The same views, not the same ones copied: the gauges' totals count only what changed.
    expect(next.vehicles).toBe(first.vehicles);
  });
});
