import { describe, expect, it } from 'vitest';
import { EVENT } from '../../src/events/catalogue.js';
import { DEFAULT_DETECTOR_OPTIONS } from '../../src/events/detector-options.js';
import { MAX_KEPT_REJECTED } from '../../src/events/detectors/membership.js';
import { robotMembershipDetector } from '../../src/events/detectors/robot-membership.js';
import { vehicleMembershipDetector } from '../../src/events/detectors/vehicle-membership.js';
import { at, Script, typesOf } from './helpers.js';

const vehicles = (removeAfter = 2) =>
  new Script(vehicleMembershipDetector, { ...DEFAULT_DETECTOR_OPTIONS.vehicleMembership, removeAfter });

describe('vehicle membership', () => {
  it('takes {listed, rejected}: a rejected element that names its entity keeps it listed; the rejected are kept, bounded', () => {
    const script = vehicles(1);
    const bad = (index: number, id: string | null) => ({
      index,
      id,
      code: 'invalid_payload',
      message: `element ${index}`,
    });
    expect(script.ok(0, { listed: ['v-1', 'v-2'], rejected: [] })).toEqual([]);
    // v-2's element is malformed but names it: still listed, nothing removed.
    expect(script.ok(10, { listed: ['v-1', 'v-2'], rejected: [bad(1, 'v-2')] })).toEqual([]);
    expect(script.state).toMatchObject({
      known: ['v-1', 'v-2'],
      rejected: [bad(1, 'v-2')],
      rejectedCount: 1,
    });
    const many = Array.from({ length: MAX_KEPT_REJECTED + 5 }, (_, i) => bad(i + 2, null));
    expect(script.ok(20, { listed: ['v-1', 'v-2'], rejected: many })).toEqual([]);
    expect(script.state?.rejected).toHaveLength(MAX_KEPT_REJECTED);
    expect(script.state?.rejectedCount).toBe(MAX_KEPT_REJECTED + 5);
    // A plain list says nothing of rejected elements.
    expect(typesOf(script.ok(30, ['v-1']))).toEqual([EVENT.vehicleRemoved]);
    expect(script.state).not.toHaveProperty('rejected');
  });

  it('takes the first list as the baseline, silently', () => {
    const script = vehicles();
    expect(script.ok(0, ['v-1', 'v-2'])).toEqual([]);
    expect(script.ok(10, ['v-2', 'v-1'])).toEqual([]);
  });

  it('reports a new vehicle once, naming it in data.vehicleId', () => {
    const script = vehicles();
    script.ok(0, ['v-1']);
    expect(script.ok(10, ['v-1', 'v-2'])).toEqual([
      { type: EVENT.vehicleDiscovered, data: { severity: 'info', vehicleId: 'v-2' } },
    ]);
    script.ok(20, ['v-1', 'v-2']);
    expect(script.count(EVENT.vehicleDiscovered)).toBe(1);
  });

  it('does not churn on one odd list', () => {
    const script = vehicles(2);
    script.ok(0, ['v-1', 'v-2']);
    expect(script.ok(10, ['v-1'])).toEqual([]);
    expect(script.ok(20, ['v-1', 'v-2'])).toEqual([]);
    expect(script.ok(30, ['v-1'])).toEqual([]);
    expect(script.ok(40, ['v-1', 'v-2'])).toEqual([]);
    expect(script.all).toEqual([]);
  });

  it('removes a vehicle exactly at remove_after consecutive missing lists', () => {
    const script = vehicles(3);
    script.ok(0, ['v-1', 'v-2']);
    expect(script.ok(10, ['v-1'])).toEqual([]);
    expect(script.ok(20, ['v-1'])).toEqual([]);
    expect(script.ok(30, ['v-1'])).toEqual([
      {
        type: EVENT.vehicleRemoved,
        data: { severity: 'warning', vehicleId: 'v-2', missingSince: at(10), missedLists: 3 },
      },
    ]);
    expect(script.ok(40, ['v-1'])).toEqual([]);
    expect(script.count(EVENT.vehicleRemoved)).toBe(1);
  });

  it('discovers a removed vehicle again when it comes back', () => {
    const script = vehicles(1);
    script.ok(0, ['v-1', 'v-2']);
    expect(typesOf(script.ok(10, ['v-1']))).toEqual([EVENT.vehicleRemoved]);
    expect(typesOf(script.ok(20, ['v-1', 'v-2']))).toEqual([EVENT.vehicleDiscovered]);
  });

  it('reports several changes in one list, discovered first, each sorted by id', () => {
    const script = vehicles(1);
    script.ok(0, ['a', 'b']);
    const events = script.ok(10, ['d', 'c']);
    expect(events.map((event) => [event.type, event.data.vehicleId])).toEqual([
      [EVENT.vehicleDiscovered, 'c'],
      [EVENT.vehicleDiscovered, 'd'],
      [EVENT.vehicleRemoved, 'a'],
      [EVENT.vehicleRemoved, 'b'],
    ]);
  });

  it('ignores failed lists: no events, counters untouched', () => {
    const script = vehicles(2);
    script.ok(0, ['v-1', 'v-2']);
    script.ok(10, ['v-1']);
    const before = script.state;
    for (let i = 0; i < 5; i += 1) expect(script.fail(20 + i, 'internal_server_error', 500)).toEqual([]);
    expect(script.state).toEqual(before);
    expect(typesOf(script.ok(30, ['v-1']))).toEqual([EVENT.vehicleRemoved]);
  });

  it('accepts VehicleSummary objects and skips unusable entries', () => {
    const script = vehicles();
    script.ok(0, [{ id: 'v-1' }]);
    const value = [{ id: 'v-1' }, { id: 'v-2', vpnConnected: true }, 42, null, '', { id: 7 }, 'v-3', 'v-3'];
    const events = script.ok(10, value as never);
    expect(events.map((event) => event.data.vehicleId)).toEqual(['v-2', 'v-3']);
  });

  it('ignores a value that is not a list', () => {
    const script = vehicles();
    script.ok(0, ['v-1']);
    expect(script.ok(10, { data: [] } as never)).toEqual([]);
    expect(script.ok(20, ['v-1'])).toEqual([]);
  });

  it('handles ids that are prototype keys', () => {
    const script = vehicles(1);
    script.ok(0, ['__proto__', 'constructor']);
    expect(script.ok(10, ['constructor', 'toString']).map((event) => event.data.vehicleId)).toEqual([
      'toString',
      '__proto__',
    ]);
  });
});

describe('robot membership', () => {
  it('removes nobody while the list holds an element that names no robot: it may be the missing one', () => {
    const script = new Script(robotMembershipDetector, { removeAfter: 2 });
    const unnamed = { index: 1, id: null, code: 'invalid_payload', message: 'robot entry has no device_id' };
    script.ok(0, ['dev-1', 'dev-2', 'dev-3']);
    // dev-3 went for one list before dev-2's entry lost its id.
    expect(script.ok(5, ['dev-1', 'dev-2'])).toEqual([]);
    for (const t of [10, 20, 30])
      expect(script.ok(t, { listed: ['dev-1'], rejected: [unnamed], unnamed: 1 })).toEqual([]);
    expect(script.state).toMatchObject({ known: ['dev-1', 'dev-2', 'dev-3'] });
    // The entry is whole again: dev-2 is back silently, dev-3's count goes on where it stopped.
    expect(script.ok(40, ['dev-1', 'dev-2'])).toEqual([
      {
        type: EVENT.robotRemoved,
        data: { severity: 'warning', deviceId: 'dev-3', missingSince: at(5), missedLists: 2 },
      },
    ]);
    expect(script.all.map((event) => event.type)).toEqual([EVENT.robotRemoved]);
  });

  it('shares the rules and names the robot in data.deviceId', () => {
    const script = new Script(robotMembershipDetector, { removeAfter: 2 });
    script.ok(0, ['dev-1']);
    expect(script.ok(10, ['dev-1', { deviceId: 'dev-2' }] as never)).toEqual([
      { type: EVENT.robotDiscovered, data: { severity: 'info', deviceId: 'dev-2' } },
    ]);
    script.ok(20, ['dev-2']);
    expect(script.ok(30, ['dev-2'])).toEqual([
      {
        type: EVENT.robotRemoved,
        data: { severity: 'warning', deviceId: 'dev-1', missingSince: at(20), missedLists: 2 },
      },
    ]);
  });
});
