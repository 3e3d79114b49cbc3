import { describe, expect, it } from 'vitest';
import { FLEET_EVENT_TYPES } from '../../src/events/catalogue.js';
import { describeDuration, describeEvent } from '../../src/events/describe.js';

describe('describeEvent', () => {
  it('says who, what, and the change', () => {
    expect(
      describeEvent({
        type: 'vehicle.power.changed',
        subject: 'vehicle/veh-0003',
        data: { severity: 'info', previous: 'off', current: 'on' },
      }),
    ).toBe('veh-0003 reports a new power state: off → on');
  });

  it('adds the incident duration on resolving events', () => {
    expect(
      describeEvent({
        type: 'vehicle.vpn.connected',
        subject: 'vehicle/veh-0003',
        data: { severity: 'info', previous: 'disconnected', current: 'connected', durationMs: 185_000 },
      }),
    ).toBe('veh-0003 is back on the VPN: disconnected → connected after 3m 05s');
  });

  it('renders status pairs by their text and hides config hashes', () => {
    expect(
      describeEvent({
        type: 'robot.navigation.changed',
        subject: 'robot/rb-1',
        data: {
          severity: 'warning',
          previous: { status: 2, text: 'executing' },
          current: { status: 6, text: 'aborted' },
        },
      }),
    ).toBe('rb-1 changed navigation status: executing → aborted');
    expect(
      describeEvent({
        type: 'robot.config.changed',
        subject: 'robot/rb-1',
        data: { severity: 'info', part: 'loadedRoute', previous: 'ab12', current: 'cd34' },
      }),
    ).toBe('rb-1 changed its loaded configuration (loadedRoute)');
  });

  it('has words for every catalogued type', () => {
    for (const type of FLEET_EVENT_TYPES) {
      expect(describeEvent({ type, subject: 'vehicle/x', data: { severity: 'info' } })).not.toContain(type);
    }
  });
});

describe('describeDuration', () => {
  it.each([
    [12_000, '12s'],
    [185_000, '3m 05s'],
    [3_720_000, '1h 02m'],
    [3 * 86_400_000 + 3_600_000, '3d 1h'],
  ])('%d ms is %s', (ms, text) => {
    expect(describeDuration(ms)).toBe(text);
  });
});
