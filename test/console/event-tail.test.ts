import { describe, expect, it } from 'vitest';
import {
  globToRegExp,
  prepend,
  sayEvent,
  summarize,
  type TailEvent,
  tailMatcher,
} from '../../console/src/lib/event-tail.js';

function event(n: number, over: Partial<TailEvent> = {}): TailEvent {
  return {
    streamId: `${n}-0`,
    id: `e-${n}`,
    type: 'vehicle.vpn.disconnected',
    subject: 'vehicle/veh-0001',
    time: '2026-01-01T00:00:00Z',
    data: { severity: 'warning' },
    ...over,
  };
}

describe('the console event tail helpers', () => {
  it('reads globs as the API does: * any run, ? one character, anchored, dots literal', () => {
    expect(globToRegExp('vehicle.vpn.*').test('vehicle.vpn.disconnected')).toBe(true);
    expect(globToRegExp('vehicle.vpn.*').test('vehicleXvpn.connected')).toBe(false);
    expect(globToRegExp('robot/rb-000?').test('robot/rb-0004')).toBe(true);
    expect(globToRegExp('robot').test('robot/rb-0004')).toBe(false);
  });

  it('filters by type glob, subject glob and a minimum severity', () => {
    const events = [
      event(1),
      event(2, { type: 'robot.health.down', subject: 'robot/rb-1', data: { severity: 'critical' } }),
      event(3, { type: 'vehicle.vpn.connected', data: { severity: 'info' } }),
    ];
    const ids = (filter: { type?: string; subject?: string; severity?: string }) =>
      events.filter(tailMatcher({ type: '', subject: '', severity: '', ...filter })).map((one) => one.id);
    expect(ids({})).toEqual(['e-1', 'e-2', 'e-3']);
    expect(ids({ type: 'vehicle.*' })).toEqual(['e-1', 'e-3']);
    expect(ids({ subject: 'robot/*' })).toEqual(['e-2']);
    expect(ids({ severity: 'warning' })).toEqual(['e-1', 'e-2']);
    expect(ids({ type: 'vehicle.*', severity: 'critical' })).toEqual([]);
  });

  it('keeps the newest first, each event once, and at most the bound', () => {
    let list = prepend([], [event(1), event(2)], 3);
    expect(list.map((one) => one.id)).toEqual(['e-2', 'e-1']);
    list = prepend(list, [event(2), event(3), event(4)], 3);
    expect(list.map((one) => one.id)).toEqual(['e-4', 'e-3', 'e-2']);
    expect(prepend(list, [event(4)], 3)).toBe(list);
  });

  it('shows a status pair by its text, as the receivers do, not as JSON', () => {
    expect(
      summarize({
        severity: 'info',
        previous: { status: 0, text: 'UNKNOWN' },
        current: { status: 4, text: 'SUCCEEDED' },
        deviceId: 'rb-1',
      }),
    ).toBe('UNKNOWN → SUCCEEDED');
    expect(summarize({ severity: 'info', previous: { a: 1 }, current: null })).toBe('{"a":1} → —');
  });

  it('says an event in the sentence the API sent with it, else in its key data', () => {
    const data = { severity: 'warning', previous: 'connected', current: 'disconnected' };
    expect(sayEvent({ data, summary: 'veh-1 is off the VPN' })).toBe('veh-1 is off the VPN');
    expect(sayEvent({ data })).toBe('connected → disconnected');
    expect(sayEvent({ data, summary: '' })).toBe('connected → disconnected');
  });

  it('summarizes the key data: previous → current, then the other fields', () => {
    expect(
      summarize({ severity: 'warning', previous: 'on', current: 'off', vehicleId: 'veh-1', since: 'x' }),
    ).toBe('on → off, since x');
    expect(summarize({ severity: 'info', summary: 'gateway answered 503', current: 'x' })).toBe(
      'gateway answered 503',
    );
    expect(summarize({ severity: 'info', a: 1, b: true, c: null, d: { x: 1 }, e: 2 }, 4)).toBe(
      'a 1, b true, c —, d {"x":1}, …',
    );
  });
});
