import { describe, expect, it } from 'vitest';
import { stepThreshold } from '../../src/events/detectors/threshold.js';
import { FACETS } from '../../src/fleet/facets.js';
import { readThreshold, settledGood as settled, stateV1 } from '../../src/fleet/states.js';

/** How stored detector states read as gauge values: the settled status, never a guess. */

const settledGood = (threshold: unknown) => settled(readThreshold(threshold));

// Each facet's gauge fields from a stored state, the way the read model reads them.
const { link, power } = FACETS.vehicle;
const { health, feedback } = FACETS.robot;
const vpnStatusOf = (state: unknown) => link.gauge(link.read(stateV1(state))).vpn;
const healthOf = (state: unknown) => health.gauge(health.read(stateV1(state))).health;
const autonomyStatusOf = (state: unknown) => feedback.gauge(feedback.read(stateV1(state))).autonomy;
function powerOf(state: unknown) {
  const gauges = power.gauge(power.read(stateV1(state)));
  return { state: gauges.power, command: gauges.command };
}

const THRESHOLDS = { failureThreshold: 3, successThreshold: 2 };

function afterSteps(...goods: boolean[]) {
  let state = null as ReturnType<typeof stepThreshold>['state'] | null;
  goods.forEach((good, i) => {
    state = stepThreshold(state, good, i * 1_000, THRESHOLDS).state;
  });
  return state;
}

describe('settled threshold status', () => {
  it('follows the incident, not the last observation', () => {
    expect(settledGood(afterSteps(true))).toBe(true);
    // Two failures below the threshold of 3: still settled good (no event said otherwise).
    expect(settledGood(afterSteps(true, false, false))).toBe(true);
    expect(settledGood(afterSteps(true, false, false, false))).toBe(false);
    // One good reading of the two needed to resolve: still down.
    expect(settledGood(afterSteps(true, false, false, false, true))).toBe(false);
    expect(settledGood(afterSteps(true, false, false, false, true, true))).toBe(true);
  });

  it('reads an entity never seen good as bad, and nothing as nothing', () => {
    expect(settledGood(afterSteps(false))).toBe(false);
    expect(settledGood(null)).toBeUndefined();
    expect(
      settledGood({ alerting: null, streak: 0, streakSince: null, incidentSince: null }),
    ).toBeUndefined();
    expect(settledGood('garbage')).toBeUndefined();
  });
});

describe('signal states', () => {
  it('reads the VPN link and robot health of their detectors (state version 1 only)', () => {
    expect(vpnStatusOf({ v: 1, vpn: afterSteps(true), ip: null })).toBe('connected');
    expect(vpnStatusOf({ v: 1, vpn: afterSteps(true, false, false, false), ip: null })).toBe('disconnected');
    expect(vpnStatusOf({ v: 2, vpn: afterSteps(true), ip: null })).toBeUndefined();
    expect(vpnStatusOf(undefined)).toBeUndefined();
    expect(healthOf({ v: 1, health: afterSteps(true) })).toBe('up');
    expect(healthOf({ v: 1, health: afterSteps(false, false, false) })).toBe('down');
    expect(healthOf({ v: 1, health: null })).toBeUndefined();
  });

  it('reads power and commands; no reading or no power control is unknown', () => {
    const state = (reading: unknown, over: Record<string, unknown> = {}) => ({
      v: 1,
      powerCapable: true,
      reading,
      pendingSince: null,
      stuck: false,
      staleSince: null,
      reachability: null,
      ...over,
    });
    expect(powerOf(state({ state: 'on', pending: null, updatedAt: null }))).toEqual({
      state: 'on',
      command: null,
    });
    expect(powerOf(state({ state: 'off', pending: 'on', updatedAt: null }))).toEqual({
      state: 'off',
      command: 'pending',
    });
    expect(powerOf(state({ state: 'off', pending: 'on', updatedAt: null }, { stuck: true }))).toEqual({
      state: 'off',
      command: 'stuck',
    });
    expect(powerOf(state({ state: 'unknown', pending: null, updatedAt: null })).state).toBe('unknown');
    expect(powerOf(state(null))).toEqual({ state: 'unknown', command: null });
    expect(powerOf(state({ state: 'on', pending: null }, { powerCapable: false }))).toEqual({
      state: 'unknown',
      command: null,
    });
    expect(powerOf(undefined)).toEqual({ state: 'unknown', command: null });
  });

  it('reads the autonomy status number', () => {
    const feedback = (autonomy: unknown) => ({ v: 1, autonomy, navigation: null, vehicleState: null });
    expect(autonomyStatusOf(feedback({ value: { status: 4, text: 'AUTONOMOUS' } }))).toBe(4);
    expect(autonomyStatusOf(feedback({ value: { status: null, text: 'AUTONOMOUS' } }))).toBeUndefined();
    expect(autonomyStatusOf(feedback(null))).toBeUndefined();
  });
});
