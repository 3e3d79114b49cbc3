import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntityKind } from '../../src/events/types.js';
import { ENTITY_FACETS, POLLER_NAMES } from '../../src/pollers/registry.js';
import { createHarness, type Harness } from './harness.js';

let h: Harness;

/** The snapshot facets stored for one entity, sorted. */
async function storedSignals(kind: EntityKind, id: string): Promise<string[]> {
  const key = h.store.keyOf({ kind, id, facet: 'x' });
  const pattern = `${key.slice(0, -1)}*`;
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, page] = await h.admin.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    keys.push(...page);
  } while (cursor !== '0');
  return keys.map((k) => k.slice(pattern.length - 1)).sort();
}

beforeAll(async () => {
  h = await createHarness({ empty: true });
  const fresh = new Date().toISOString();
  for (const id of ['V-1', 'V-2']) h.sim.control.addVehicle({ id, vpnConnected: true, updatedAt: fresh });
  for (const deviceId of ['R-1', 'R-2']) h.sim.control.addRobot({ deviceId });
  await h.tick('vehicles', 'robots');
  await h.tick(...POLLER_NAMES);
});

afterAll(async () => {
  await h?.close();
});

describe('removed entities', () => {
  it('have one snapshot per facet of their kind while they are in the fleet', async () => {
    expect(await storedSignals('vehicle', 'V-2')).toEqual([...ENTITY_FACETS.vehicle].sort());
    expect(await storedSignals('robot', 'R-2')).toEqual([...ENTITY_FACETS.robot].sort());
  });

  it('leave no snapshots behind once removed; the others keep theirs', async () => {
    h.sim.control.removeVehicle('V-2');
    h.sim.control.removeRobot('R-2');
    await h.tick('vehicles', 'robots');
    expect(await storedSignals('vehicle', 'V-2')).not.toEqual([]);
    await h.tick('vehicles', 'robots');
    expect(await h.newEvents()).toEqual(['robot.removed robot/R-2', 'vehicle.removed vehicle/V-2']);
    expect(await storedSignals('vehicle', 'V-2')).toEqual([]);
    expect(await storedSignals('robot', 'R-2')).toEqual([]);
    expect(await storedSignals('vehicle', 'V-1')).toEqual([...ENTITY_FACETS.vehicle].sort());
    expect(await storedSignals('robot', 'R-1')).toEqual([...ENTITY_FACETS.robot].sort());
  });
});
