import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapLimit } from '../../src/pollers/observe.js';
import { createHarness, type Harness } from './harness.js';

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

describe('a power job of many vehicles', () => {
  let h: Harness;
  const COUNT = 101;
  const unsupported = new Set([3, 33, 71, COUNT - 1]);

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

  it('polls each vehicle once and leaves out the ones not due', async () => {
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
