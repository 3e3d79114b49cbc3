import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/events/catalogue.js';
import { coversTime, INCIDENT_FACETS, incidentSource } from '../../src/events/detectors/incident-status.js';
import { robotCommandQueueDetector } from '../../src/events/detectors/robot-command-queue.js';
import { robotHealthDetector } from '../../src/events/detectors/robot-health.js';
import { upstreamHealthDetector } from '../../src/events/detectors/upstream-health.js';
import { vehicleLinkDetector } from '../../src/events/detectors/vehicle-link.js';
import { paceRef } from '../../src/pollers/pace.js';
import { ENTITY_FACETS, POLLER_NAMES } from '../../src/pollers/registry.js';
import { upstreamRef } from '../../src/pollers/upstream-windows.js';
import { UPSTREAM_NAMES } from '../../src/upstream/names.js';
import { Script } from './helpers.js';

describe('where each incident is kept', () => {
  it('names a facet for every incident key of the catalogue, one the pollers write', () => {
    const keys = new Set(CATALOGUE.flatMap((entry) => (entry.incident ? [entry.incident.key] : [])));
    expect(new Set(INCIDENT_FACETS.map((entry) => entry.key))).toEqual(keys);
    for (const { key, kind, facet } of INCIDENT_FACETS) {
      if (kind === 'upstream' || kind === 'poller') continue;
      expect(ENTITY_FACETS[kind] as readonly string[], key).toContain(facet);
    }
    for (const name of UPSTREAM_NAMES) {
      expect(incidentSource(`upstream/${name}`, 'upstream')?.ref).toEqual(upstreamRef(name));
    }
    for (const name of POLLER_NAMES) {
      expect(incidentSource(`poller/${name}`, 'pace')?.ref).toEqual(paceRef(name));
    }
  });

  it('has no source for a subject of another kind', () => {
    expect(incidentSource('robot/r-1', 'vpn')).toBeUndefined();
    expect(incidentSource('vehicle/v-1', 'upstream')).toBeUndefined();
    expect(incidentSource('vehicle/', 'vpn')).toBeUndefined();
    expect(incidentSource('vehicle/v-1', 'nonsense')).toBeUndefined();
    expect(incidentSource('vehicle/v:1', 'vpn')?.ref).toEqual({ kind: 'vehicle', id: 'v:1', facet: 'link' });
  });

  it('reads a threshold incident as clear, pending, firing or resolving from the detector state', () => {
    const script = new Script(robotHealthDetector, { failureThreshold: 2, successThreshold: 2 });
    const status = () => incidentSource('robot/r-1', 'health')?.status(script.state);
    script.ok(0, {});
    expect(status()).toBe('clear');
    script.fail(10, 'timeout');
    expect(status()).toBe('pending');
    script.fail(20, 'timeout');
    expect(status()).toBe('firing');
    script.ok(30, {});
    expect(status()).toBe('resolving');
    script.ok(40, {});
    expect(status()).toBe('clear');
    expect(incidentSource('robot/r-1', 'health')?.status({ v: 1, health: null })).toBe('clear');
    expect(incidentSource('robot/r-1', 'health')?.status('garbage')).toBeUndefined();
  });

  it('reads the other detectors the same way', () => {
    const link = new Script(vehicleLinkDetector, { failureThreshold: 1, successThreshold: 1 });
    link.ok(0, { vpnConnected: true });
    link.ok(10, { vpnConnected: false });
    expect(incidentSource('vehicle/v-1', 'vpn')?.status(link.state)).toBe('firing');

    const queue = new Script(robotCommandQueueDetector, { backlogThreshold: 2 });
    queue.ok(0, { length: 0 });
    queue.ok(10, { length: 3 });
    expect(incidentSource('robot/r-1', 'backlog')?.status(queue.state)).toBe('firing');

    const upstream = new Script(upstreamHealthDetector, {
      failureThreshold: 2,
      successThreshold: 1,
      errorRatio: 0.5,
      minRequests: 1,
      authFailures: 5,
    });
    upstream.ok(0, { requests: 10, authFailures: 0, serverErrors: 0, timeouts: 0 });
    upstream.ok(15, { requests: 10, authFailures: 10, serverErrors: 0, timeouts: 0 });
    expect(incidentSource('upstream/token', 'upstream')?.status(upstream.state)).toBe('pending');
  });

  it('covers a time: a counting window only the times before its end, a reading its own time too', () => {
    const window = incidentSource('upstream/robots', 'upstream');
    const reading = incidentSource('vehicle/v-1', 'vpn');
    if (!window || !reading) throw new Error('no source');
    expect(coversTime(window, 15_000, 15_000)).toBe(false);
    expect(coversTime(window, 15_000, 14_999)).toBe(true);
    expect(coversTime(reading, 15_000, 15_000)).toBe(true);
    expect(coversTime(reading, 15_000, 15_001)).toBe(false);
    expect(coversTime(reading, Number.NaN, 0)).toBe(false);
  });
});
