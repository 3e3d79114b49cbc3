import { describe, expect, it } from 'vitest';
import { EVENT } from '../../src/events/catalogue.js';
import { vehicleLinkDetector } from '../../src/events/detectors/vehicle-link.js';
import { at, Script, typesOf } from './helpers.js';

const link = (failureThreshold = 2, successThreshold = 1) =>
  new Script(vehicleLinkDetector, { failureThreshold, successThreshold });
const up = { vpnConnected: true, ipAddress: '10.8.0.7' };
const down = { vpnConnected: false, ipAddress: '10.8.0.7' };

describe('vehicle link: VPN', () => {
  it('sets the baseline silently when first seen connected', () => {
    const script = link();
    expect(script.ok(0, up)).toEqual([]);
    expect(script.ok(10, up)).toEqual([]);
  });

  it('ignores a flap shorter than the failure threshold', () => {
    const script = link(3);
    script.ok(0, up);
    for (let i = 1; i <= 6; i += 3) {
      script.ok(i * 10, down);
      script.ok(i * 10 + 10, down);
      script.ok(i * 10 + 20, up);
    }
    expect(script.all).toEqual([]);
  });

  it('fires exactly at the threshold, once, and reports the outage duration on reconnect', () => {
    const script = link(2);
    script.ok(0, up);
    expect(script.ok(10, down)).toEqual([]);
    expect(script.ok(20, down)).toEqual([
      {
        type: EVENT.vpnDisconnected,
        data: {
          severity: 'warning',
          previous: 'connected',
          current: 'disconnected',
          since: at(10),
          consecutive: 2,
        },
      },
    ]);
    expect(script.ok(30, down)).toEqual([]);
    expect(script.ok(100, up)).toEqual([
      {
        type: EVENT.vpnConnected,
        data: {
          severity: 'info',
          previous: 'disconnected',
          current: 'connected',
          since: at(10),
          durationMs: 90_000,
        },
      },
    ]);
    expect(script.ok(110, up)).toEqual([]);
    expect(script.count(EVENT.vpnDisconnected)).toBe(1);
    expect(script.count(EVENT.vpnConnected)).toBe(1);
  });

  it('needs success_threshold connected lists to resolve; the outage ends at the first of them', () => {
    const script = link(1, 3);
    script.ok(0, up);
    expect(typesOf(script.ok(10, down))).toEqual([EVENT.vpnDisconnected]);
    script.ok(20, up);
    script.ok(30, up);
    script.ok(40, down); // resets the recovery streak
    script.ok(50, up);
    script.ok(60, up);
    const events = script.ok(70, up);
    expect(typesOf(events)).toEqual([EVENT.vpnConnected]);
    expect(events[0]?.data.durationMs).toBe(40_000);
    expect(events[0]?.data.since).toBe(at(10));
  });

  it('reports a vehicle already disconnected at start once the threshold is met, with previous null', () => {
    const script = link(2);
    expect(script.ok(0, down)).toEqual([]);
    const events = script.ok(10, down);
    expect(typesOf(events)).toEqual([EVENT.vpnDisconnected]);
    expect(events[0]?.data.previous).toBeNull();
    expect(events[0]?.data.since).toBe(at(0));
  });

  it('settles silently when a start-up disconnection clears below the threshold', () => {
    const script = link(3);
    script.ok(0, down);
    script.ok(10, up);
    script.ok(20, down);
    script.ok(30, down);
    expect(script.all).toEqual([]);
  });

  it('never turns failed observations into events, and they do not break a streak', () => {
    const script = link(2);
    script.ok(0, up);
    for (let i = 1; i <= 10; i += 1) expect(script.fail(i, 'internal_server_error', 500)).toEqual([]);
    script.ok(20, down);
    script.fail(25, 'timeout');
    expect(typesOf(script.ok(30, down))).toEqual([EVENT.vpnDisconnected]);
  });

  it('carries data.vehicleId when the value has an id', () => {
    const script = link(1);
    script.ok(0, { ...up, id: 'v-9' });
    const events = script.ok(10, { ...down, id: 'v-9' });
    expect(events[0]?.data.vehicleId).toBe('v-9');
  });

  it('ignores values without a boolean vpnConnected', () => {
    const script = link(1);
    script.ok(0, up);
    expect(script.ok(10, { vpnConnected: 'no' } as never)).toEqual([]);
    expect(script.ok(20, null as never)).toEqual([]);
    expect(script.ok(30, up)).toEqual([]);
  });
});

describe('vehicle link: IP address', () => {
  it('reports a change, a disappearance and an appearance, once each; the first address is the baseline', () => {
    const script = link();
    expect(script.ok(0, { vpnConnected: true, ipAddress: '10.8.0.7' })).toEqual([]);
    expect(script.ok(10, { vpnConnected: true, ipAddress: '10.8.0.9' })).toEqual([
      { type: EVENT.ipChanged, data: { severity: 'info', previous: '10.8.0.7', current: '10.8.0.9' } },
    ]);
    expect(script.ok(20, { vpnConnected: true })).toEqual([
      { type: EVENT.ipChanged, data: { severity: 'info', previous: '10.8.0.9', current: null } },
    ]);
    expect(script.ok(30, { vpnConnected: true })).toEqual([]);
    expect(script.ok(40, { vpnConnected: true, ipAddress: '10.8.0.1' })).toEqual([
      { type: EVENT.ipChanged, data: { severity: 'info', previous: null, current: '10.8.0.1' } },
    ]);
    expect(script.count(EVENT.ipChanged)).toBe(3);
  });

  it('takes a vehicle first seen without an address as a baseline of null', () => {
    const script = link();
    script.ok(0, { vpnConnected: true });
    expect(typesOf(script.ok(10, up))).toEqual([EVENT.ipChanged]);
  });

  it('leaves the known address alone when ipAddress is not a string', () => {
    const script = link();
    script.ok(0, up);
    expect(script.ok(10, { vpnConnected: true, ipAddress: 42 } as never)).toEqual([]);
    expect(script.ok(20, up)).toEqual([]);
  });

  it('reports VPN and address changes of the same list together', () => {
    const script = link(1);
    script.ok(0, up);
    expect(typesOf(script.ok(10, { vpnConnected: false }))).toEqual([EVENT.vpnDisconnected, EVENT.ipChanged]);
  });
});
