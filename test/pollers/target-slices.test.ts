import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EntityTarget, TARGET_SLICE, TargetSlices } from '../../src/pollers/entity-poller.js';
import { mapLimit } from '../../src/pollers/observe.js';
import { createHarness, type Harness } from './harness.js';

function target(id: string): EntityTarget {
  return { ref: { kind: 'vehicle', id, facet: 'power' }, record: { version: 1, state: { id } } };
}

/** Slices over `count` entities whose reads are recorded as `[from, to]` and answered at once. */
function slicesOver(count: number) {
  const reads: Array<[number, number]> = [];
  const slices = new TargetSlices(count, async (from, to) => {
    reads.push([from, to]);
    return Array.from({ length: to - from }, (_, i) => target(`V-${from + i}`));
  });
  return { reads, slices };
}

describe("a job's stored records, read a slice at a time", () => {
  it('reads a slice when the job reaches it, the next one halfway through', async () => {
    const { reads, slices } = slicesOver(200);
    await slices.at(0);
    expect(reads).toEqual([[0, TARGET_SLICE]]);
    for (let position = 0; position < TARGET_SLICE / 2; position += 1) {
      expect((await slices.take(position))?.ref.id).toBe(`V-${position}`);
    }
    expect(reads).toHaveLength(1);
    await slices.take(TARGET_SLICE / 2);
    expect(reads).toEqual([
      [0, TARGET_SLICE],
      [TARGET_SLICE, 2 * TARGET_SLICE],
    ]);
    const taken: string[] = [];
    for (let position = TARGET_SLICE / 2 + 1; position < 200; position += 1) {
      taken.push((await slices.take(position))?.ref.id ?? '');
    }
    expect(taken).toEqual(Array.from({ length: 200 - TARGET_SLICE / 2 - 1 }, (_, i) => `V-${i + 17}`));
    // Every entity read once, the last slice cut at the job's end.
    expect(reads.map(([from]) => from)).toEqual([0, 32, 64, 96, 128, 160, 192]);
    expect(reads.at(-1)).toEqual([192, 200]);
  });

  it('lets each target go once taken', async () => {
    const { slices } = slicesOver(10);
    const slice = await slices.at(0);
    await slices.take(3);
    expect(slice[3]).toBeUndefined();
    expect(slice[4]?.ref.id).toBe('V-4');
  });

  it('fails the positions whose slice could not be read, and those only', async () => {
    let calls = 0;
    const slices = new TargetSlices(100, async (from, to) => {
      calls += 1;
      if (from === TARGET_SLICE) throw new Error('store unavailable');
      return Array.from({ length: to - from }, (_, i) => target(`V-${from + i}`));
    });
    for (let position = 0; position < TARGET_SLICE; position += 1) await slices.take(position);
    await expect(slices.take(TARGET_SLICE)).rejects.toThrow('store unavailable');
    expect(calls).toBe(2);
  });
});

describe('mapLimit', () => {
  it('stops at the first failure and waits for the calls under way before throwing it', async () => {
    const started: number[] = [];
    let underWay = 0;
    let finishedAfterFailure = 0;
    let failed = false;
    const run = mapLimit(
      Array.from({ length: 50 }, (_, i) => i),
      4,
      async (item) => {
        started.push(item);
        underWay += 1;
        await new Promise((resolve) => setImmediate(resolve));
        underWay -= 1;
        if (item === 5) {
          failed = true;
          throw new Error('item 5 failed');
        }
        if (failed) finishedAfterFailure += 1;
        return item;
      },
    );
    await expect(run).rejects.toThrow('item 5 failed');
    expect(underWay).toBe(0);
    expect(finishedAfterFailure).toBeGreaterThan(0);
    expect(started.length).toBeLessThan(12);
  });

  it('returns every result in order', async () => {
    const results = await mapLimit([3, 1, 2], 2, async (n) => {
      await new Promise((resolve) => setTimeout(resolve, n));
      return n * 10;
    });
    expect(results).toEqual([30, 10, 20]);
  });
});

describe('a power job over several slices', () => {
  let h: Harness;
  const COUNT = 3 * TARGET_SLICE + 5;
  const unsupported = new Set([3, TARGET_SLICE + 1, 2 * TARGET_SLICE + 7, COUNT - 1]);

  beforeAll(async () => {
    h = await createHarness({
      empty: true,
      config: { pollers: { power: { batch_size: COUNT } } },
    });
    const fresh = new Date().toISOString();
    for (let i = 0; i < COUNT; i += 1) {
      h.sim.control.addVehicle({
        id: `S-${String(i).padStart(3, '0')}`,
        vpnConnected: true,
        updatedAt: fresh,
        powerCapable: !unsupported.has(i),
      });
    }
    await h.tick('vehicles');
  });

  afterAll(async () => {
    await h?.close();
  });

  it('polls each vehicle once and leaves out the ones not due in every slice', async () => {
    const reads = () =>
      Object.values(h.sim.control.stats().requests.get_vehicle_power_status ?? {}).reduce((a, b) => a + b, 0);
    const [first] = await h.tick('power');
    expect(first).toMatchObject({ targets: COUNT, observed: COUNT, notDue: 0 });
    expect(reads()).toBe(COUNT);
    // Two 404s judge a vehicle not power-capable; a list poll in between confirms it is listed.
    h.advance(1_000);
    await h.tick('vehicles');
    await h.tick('power');
    h.advance(1_000);
    const before = reads();
    const [third] = await h.tick('power');
    expect(third).toMatchObject({
      targets: COUNT,
      notDue: unsupported.size,
      observed: COUNT - unsupported.size,
    });
    expect(reads() - before).toBe(COUNT - unsupported.size);
  });
});
