import { describe, expect, it } from 'vitest';
import {
  groupFor,
  groupKey,
  groupLabels,
  incidentLabels,
  labelsFor,
} from '../../../src/notifiers/routing/labels.js';
import { compileGlob, compileMatcher, globProblem } from '../../../src/notifiers/routing/matcher.js';
import { fleetEvent, routeMatch, vpnBack, vpnLost } from './helpers.js';

describe('globs', () => {
  it.each([
    ['vehicle.vpn.*', 'vehicle.vpn.disconnected', true],
    ['vehicle.vpn.*', 'vehicle.vpnx', false],
    ['vehicle.*', 'vehicle.power.command.stuck', true],
    ['vehicle/veh-00*', 'vehicle/veh-0042', true],
    ['vehicle/veh-00*', 'vehicle/veh-0142', false],
    ['vehicle/veh-00?', 'vehicle/veh-007', true],
    ['vehicle/veh-00?', 'vehicle/veh-0071', false],
    ['robot/[ab]*', 'robot/alpha', true],
    ['robot/[!ab]*', 'robot/alpha', false],
    ['robot/r[0-3]', 'robot/r2', true],
    ['robot/r[0-3]', 'robot/r7', false],
    ['a.b', 'axb', false],
    ['a\\*', 'a*', true],
    ['a\\*', 'ab', false],
    ['(x)+', '(x)+', true],
  ])('%s against %s is %s', (glob, value, expected) => {
    expect(compileGlob(glob).test(value)).toBe(expected);
  });

  it('reports malformed globs', () => {
    expect(globProblem('')).toBe('must not be empty');
    expect(globProblem('robot/[ab')).toMatch(/unclosed "\["/);
    expect(globProblem('robot/[z-a]')).toMatch(/reversed range "z-a"/);
    expect(globProblem('robot\\')).toMatch(/unescaped/);
    expect(globProblem('vehicle/*')).toBeUndefined();
    expect(() => compileGlob('[')).toThrow(/invalid glob/);
  });
});

describe('labels', () => {
  it('carries type, subject, severity, kind, incident and entity tags', () => {
    expect(labelsFor(vpnLost('veh-1'), { site: 'north' })).toEqual({
      type: 'vehicle.vpn.disconnected',
      subject: 'vehicle/veh-1',
      severity: 'warning',
      kind: 'vehicle',
      incident: 'vpn',
      site: 'north',
    });
    expect(labelsFor(fleetEvent('robot.lease.changed', 'robot/r1'))).toEqual({
      type: 'robot.lease.changed',
      subject: 'robot/r1',
      severity: 'info',
      kind: 'robot',
    });
    expect(labelsFor(fleetEvent('monitor.upstream.degraded', 'upstream/fleet-api')).kind).toBe('upstream');
  });

  it('never lets a tag replace a built-in label', () => {
    expect(labelsFor(vpnLost('veh-1'), { type: 'x', incident: 'y', severity: 'info' })).toMatchObject({
      type: 'vehicle.vpn.disconnected',
      incident: 'vpn',
      severity: 'warning',
    });
    expect(
      labelsFor(fleetEvent('vehicle.ip.changed', 'vehicle/v'), { incident: 'y' }).incident,
    ).toBeUndefined();
  });

  it('sees a resolving event as the incident it closes', () => {
    const labels = labelsFor(vpnBack('veh-1'));
    expect(labels).toMatchObject({ type: 'vehicle.vpn.connected', severity: 'info' });
    expect(incidentLabels(labels)).toMatchObject({ type: 'vehicle.vpn.disconnected', severity: 'warning' });
    const other = labelsFor(vpnLost('veh-1'));
    expect(incidentLabels(other)).toBe(other);
  });

  it('makes stable group keys without ":" that differ by route, receiver and values', () => {
    const labels = labelsFor(vpnLost('veh-1'), { site: 'north:1' });
    const key = groupKey('0.1', 'ops', ['type', 'site'], labels);
    expect(key).toMatch(/^ops~0\.1~type=vehicle\.vpn\.disconnected,site=north_1~[0-9a-f]{16}$/);
    expect(key).not.toContain(':');
    expect(groupKey('0.1', 'ops', ['type', 'site'], { ...labels })).toBe(key);
    expect(groupKey('0.2', 'ops', ['type', 'site'], labels)).not.toBe(key);
    expect(groupKey('0.1', 'pager', ['type', 'site'], labels)).not.toBe(key);
    expect(groupKey('0.1', 'ops', ['type', 'site'], { ...labels, site: 'north_1' })).not.toBe(key);
    expect(groupKey('0', 'ops', [], labels)).toMatch(/^ops~0~all~[0-9a-f]{16}$/);
  });

  it('groups a resolution with its incident, also under group_by ["..."]', () => {
    for (const groupBy of [['type'], ['type', 'severity'], ['...']]) {
      const route = routeMatch({ groupBy });
      expect(groupFor(vpnBack('veh-1'), {}, route)).toEqual(groupFor(vpnLost('veh-1'), {}, route));
    }
    const all = routeMatch({ groupBy: ['...'] });
    expect(groupFor(vpnLost('veh-1'), {}, all).key).not.toBe(groupFor(vpnLost('veh-2'), {}, all).key);
    expect(groupLabels(['site'], labelsFor(vpnLost('veh-1')))).toEqual({ site: '' });
  });
});

describe('matchers', () => {
  const north = { site: 'north' };

  it('matches everything when empty', () => {
    expect(compileMatcher({}).matches(vpnLost('v'))).toBe(true);
    expect(compileMatcher().matches(fleetEvent('robot.state.changed', 'robot/r'))).toBe(true);
  });

  it('treats severity as a minimum', () => {
    const warning = compileMatcher({ severity: 'warning' });
    expect(warning.matches(fleetEvent('robot.health.down', 'robot/r1'))).toBe(true); // critical
    expect(warning.matches(vpnLost('v'))).toBe(true); // warning
    expect(warning.matches(fleetEvent('vehicle.ip.changed', 'vehicle/v'))).toBe(false); // info
    expect(compileMatcher({ severity: 'critical' }).matches(vpnLost('v'))).toBe(false);
    expect(compileMatcher({ severity: 'info' }).matches(fleetEvent('vehicle.ip.changed', 'vehicle/v'))).toBe(
      true,
    );
  });

  it('matches type and subject globs, any of a list', () => {
    const matcher = compileMatcher({
      type: ['vehicle.vpn.*', 'robot.health.down'],
      subject: 'vehicle/veh-00*',
    });
    expect(matcher.matches(vpnLost('veh-001'))).toBe(true);
    expect(matcher.matches(vpnLost('veh-100'))).toBe(false);
    expect(matcher.matches(fleetEvent('vehicle.ip.changed', 'vehicle/veh-001'))).toBe(false);
  });

  it('matches tags; an entity without the tag does not match', () => {
    const matcher = compileMatcher({ tags: { site: ['north', 'east-*'] } });
    expect(matcher.matches(vpnLost('v'), north)).toBe(true);
    expect(matcher.matches(vpnLost('v'), { site: 'east-2' })).toBe(true);
    expect(matcher.matches(vpnLost('v'), { site: 'south' })).toBe(false);
    expect(matcher.matches(vpnLost('v'))).toBe(false);
  });

  it('lets a resolution match what its incident matches', () => {
    const critical = compileMatcher({ type: 'robot.health.down', severity: 'critical' });
    expect(critical.matches(fleetEvent('robot.health.up', 'robot/r1'))).toBe(true);
    // Its own labels still match too, but every field must match in the same view.
    expect(compileMatcher({ type: 'vehicle.vpn.connected' }).matches(vpnBack('v'))).toBe(true);
    expect(compileMatcher({ type: 'vehicle.vpn.connected', severity: 'warning' }).matches(vpnBack('v'))).toBe(
      false,
    );
    expect(compileMatcher({ type: 'vehicle.vpn.disconnected' }).matches(vpnBack('v'))).toBe(true);
    expect(
      compileMatcher({ type: 'vehicle.vpn.disconnected' }).matches(
        fleetEvent('vehicle.reachable', 'vehicle/v'),
      ),
    ).toBe(false);
  });
});
