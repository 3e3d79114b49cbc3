import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FLEET_EVENT_TYPES } from '../../../src/events/catalogue.js';
import type { FleetEvent } from '../../../src/events/types.js';
import { notificationsConfigSchema } from '../../../src/notifiers/config.js';
import { compileRoutes, type RouteMatch } from '../../../src/notifiers/routing/router.js';
import { fleetEvent, vpnBack, vpnLost } from './helpers.js';

function router(route: unknown) {
  const entity_tags = [{ match: '*', tags: { site: 'unknown' } }];
  return compileRoutes(notificationsConfigSchema.parse({ route, entity_tags }).route);
}

const receivers = (matches: RouteMatch[]) => matches.map((match) => `${match.routeId}:${match.receiver}`);

describe('routing tree', () => {
  it('routes nothing without a root route', () => {
    expect(compileRoutes(undefined).route(vpnLost('v'))).toEqual([]);
  });

  it('falls back to the root when no child matches', () => {
    const tree = router({ receiver: 'ops', routes: [{ match: { type: 'robot.*' }, receiver: 'robots' }] });
    expect(tree.route(vpnLost('v'))).toEqual([
      {
        routeId: '0',
        receiver: 'ops',
        groupBy: [],
        groupWait: 30_000,
        groupInterval: 300_000,
        repeatInterval: 14_400_000,
        sendResolved: true,
      },
    ]);
  });

  it('stops at the first matching child', () => {
    const tree = router({
      receiver: 'ops',
      routes: [
        { match: { type: 'vehicle.vpn.*' }, receiver: 'network' },
        { match: { subject: 'vehicle/*' }, receiver: 'vehicles' },
      ],
    });
    expect(receivers(tree.route(vpnLost('v')))).toEqual(['0.0:network']);
    expect(receivers(tree.route(fleetEvent('vehicle.ip.changed', 'vehicle/v')))).toEqual(['0.1:vehicles']);
    expect(receivers(tree.route(fleetEvent('robot.state.changed', 'robot/r')))).toEqual(['0:ops']);
  });

  it('goes on after a child with continue: true', () => {
    const tree = router({
      receiver: 'ops',
      routes: [
        { match: { severity: 'critical' }, receiver: 'pager', continue: true },
        { match: { subject: 'robot/*' }, receiver: 'robots', continue: true },
        { match: { type: 'robot.health.*' }, receiver: 'health' },
        { receiver: 'never' },
      ],
    });
    expect(receivers(tree.route(fleetEvent('robot.health.down', 'robot/r1')))).toEqual([
      '0.0:pager',
      '0.1:robots',
      '0.2:health',
    ]);
    // Continuing past the last matching child: the catch-all child takes it.
    expect(receivers(tree.route(fleetEvent('monitor.upstream.degraded', 'upstream/api')))).toEqual([
      '0.0:pager',
      '0.3:never',
    ]);
    expect(receivers(tree.route(vpnLost('v')))).toEqual(['0.3:never']);
  });

  it('uses the parent only when no child matched, a continue child included', () => {
    const tree = router({
      receiver: 'ops',
      routes: [{ match: { severity: 'critical' }, receiver: 'pager', continue: true }],
    });
    expect(receivers(tree.route(fleetEvent('robot.health.down', 'robot/r1')))).toEqual(['0.0:pager']);
    expect(receivers(tree.route(vpnLost('v')))).toEqual(['0:ops']);
  });

  it('inherits unset fields from the parent, depth-first', () => {
    const tree = router({
      receiver: 'ops',
      group_by: ['type'],
      group_wait: '10s',
      repeat_interval: '1h',
      send_resolved: false,
      routes: [
        {
          match: { type: 'vehicle.*' },
          group_by: ['subject'],
          group_interval: '1m',
          routes: [{ match: { subject: 'vehicle/north-*' }, receiver: 'north', send_resolved: true }],
        },
      ],
    });
    expect(tree.route(vpnLost('north-1'))).toEqual([
      {
        routeId: '0.0.0',
        receiver: 'north',
        groupBy: ['subject'],
        groupWait: 10_000,
        groupInterval: 60_000,
        repeatInterval: 3_600_000,
        sendResolved: true,
      },
    ]);
    expect(tree.route(vpnLost('south-1'))).toEqual([
      {
        routeId: '0.0',
        receiver: 'ops',
        groupBy: ['subject'],
        groupWait: 10_000,
        groupInterval: 60_000,
        repeatInterval: 3_600_000,
        sendResolved: false,
      },
    ]);
  });

  it('matches severity minimums, globs and tags', () => {
    const tree = router({
      receiver: 'ops',
      routes: [
        { match: { tags: { site: 'north' }, severity: 'warning' }, receiver: 'north-oncall' },
        { match: { type: ['robot.health.*', 'robot.removed'] }, receiver: 'robots' },
      ],
    });
    expect(receivers(tree.route(vpnLost('a'), { site: 'north' }))).toEqual(['0.0:north-oncall']);
    expect(receivers(tree.route(fleetEvent('vehicle.ip.changed', 'vehicle/a'), { site: 'north' }))).toEqual([
      '0:ops',
    ]);
    expect(receivers(tree.route(vpnLost('a'), { site: 'south' }))).toEqual(['0:ops']);
    expect(receivers(tree.route(fleetEvent('robot.removed', 'robot/r')))).toEqual(['0.1:robots']);
  });

  it('routes a resolution where its incident went', () => {
    const tree = router({
      receiver: 'ops',
      routes: [{ match: { severity: 'warning', type: 'vehicle.vpn.disconnected' }, receiver: 'network' }],
    });
    expect(receivers(tree.route(vpnLost('v')))).toEqual(['0.0:network']);
    expect(receivers(tree.route(vpnBack('v')))).toEqual(['0.0:network']);
  });

  it('never throws and always finds a receiver when a root route is set (property)', () => {
    const glob = fc.constantFrom('vehicle.*', 'robot.health.*', 'vehicle/veh-00*', 'robot/*', '*');
    const match = fc.record(
      {
        type: fc.constantFrom('vehicle.*', 'robot.*', 'vehicle.vpn.*', 'monitor.upstream.degraded'),
        severity: fc.constantFrom('info', 'warning', 'critical'),
        subject: fc.oneof(glob, fc.array(glob, { minLength: 1, maxLength: 3 })),
        tags: fc.dictionary(fc.constantFrom('site', 'region'), fc.constantFrom('north', 'eu-*')),
      },
      { requiredKeys: [] },
    );
    const route: fc.Memo<Record<string, unknown>> = fc.memo((depth) =>
      fc.record(
        {
          match,
          receiver: fc.constantFrom('a', 'b', 'c'),
          continue: fc.boolean(),
          group_by: fc.constantFrom(['type'], [], ['...'], ['site', 'subject']),
          routes: depth > 1 ? fc.array(route(depth - 1), { maxLength: 3 }) : fc.constant([]),
        },
        { requiredKeys: [] },
      ),
    );
    const event = fc
      .record({
        type: fc.oneof(fc.constantFrom(...FLEET_EVENT_TYPES), fc.string()),
        subject: fc.oneof(fc.constantFrom('vehicle/veh-001', 'robot/r1', 'upstream/api'), fc.string()),
        severity: fc.constantFrom('info', 'warning', 'critical', 'bogus'),
      })
      .map(({ type, subject, severity }) => {
        const event = fleetEvent(type, subject);
        return { ...event, data: { severity } } as unknown as FleetEvent;
      });
    const tags = fc.dictionary(fc.constantFrom('site', 'region', 'other'), fc.string());
    const entityTags = [{ match: '*', tags: { site: 'x', region: 'y' } }];
    fc.assert(
      fc.property(fc.array(route(3), { maxLength: 4 }), event, tags, (routes, anEvent, someTags) => {
        const config = notificationsConfigSchema.parse({
          route: { receiver: 'root', routes },
          entity_tags: entityTags,
        });
        const matches = compileRoutes(config.route).route(anEvent, someTags);
        expect(matches.length).toBeGreaterThanOrEqual(1);
        for (const found of matches) expect(['root', 'a', 'b', 'c']).toContain(found.receiver);
      }),
      { numRuns: 300 },
    );
  });
});
