import { describe, expect, it } from 'vitest';
import { parseProblems } from '../../../src/lib/issues.js';
import { notificationsConfigSchema } from '../../../src/notifiers/config.js';
import { BUILTIN_INHIBIT_RULES } from '../../../src/notifiers/muting/config.js';
import { checkReceiverNames, type RootRouteConfig } from '../../../src/notifiers/routing/config.js';
import { compileEntityTags } from '../../../src/notifiers/routing/entity-tags.js';

/** The problems of a notifications config, one `path: message` line each ([] when valid). */
function problems(input: unknown): string[] {
  const result = parseProblems(notificationsConfigSchema, input);
  return result.ok ? [] : result.problems;
}

const ROOT = { receiver: 'ops' };

describe('notifications config', () => {
  it('defaults to routing nothing', () => {
    expect(notificationsConfigSchema.parse({})).toEqual({
      entity_tags: [],
      maintenance: [],
      inhibit_rules: BUILTIN_INHIBIT_RULES,
      inhibit_max_wait: 60_000,
    });
  });

  it('fills route defaults: group everything per receiver, 30s / 5m / 4h, send resolved', () => {
    const config = notificationsConfigSchema.parse({ route: ROOT });
    expect(config.route).toEqual({
      receiver: 'ops',
      group_by: [],
      group_wait: 30_000,
      group_interval: 300_000,
      repeat_interval: 14_400_000,
      send_resolved: true,
      routes: [],
    });
  });

  it('parses a full example', () => {
    const config = notificationsConfigSchema.parse({
      route: {
        receiver: 'ops',
        group_by: ['type', 'site'],
        group_wait: '10s',
        routes: [
          { match: { severity: 'critical', tags: { site: 'north' } }, receiver: 'pager', continue: true },
          {
            match: { type: 'vehicle.vpn.*', subject: ['vehicle/veh-00*', 'vehicle/north-*'] },
            routes: [{ match: { type: 'vehicle.vpn.connected' }, send_resolved: false }],
          },
        ],
      },
      entity_tags: [{ match: 'vehicle/north-*', tags: { site: 'north' } }],
      maintenance: [
        { name: 'updates', schedule: '0 22 * * sat', duration: '4h', time_zone: 'Europe/Berlin' },
        { name: 'nightly', schedule: '0 0 3 * * *', duration: 600_000, match: { tags: { site: 'north' } } },
      ],
    });
    expect(config.route?.group_wait).toBe(10_000);
    expect(config.route?.routes[0]).toMatchObject({ receiver: 'pager', continue: true });
    expect(config.route?.routes[1]?.continue).toBe(false);
    expect(config.route?.routes[1]?.routes[0]).toMatchObject({ send_resolved: false, routes: [] });
    expect(config.maintenance[0]).toMatchObject({ duration: 14_400_000, time_zone: 'Europe/Berlin' });
    expect(config.maintenance[1]?.time_zone).toBe('UTC');
  });

  it('names a bad glob', () => {
    expect(problems({ route: { ...ROOT, routes: [{ match: { subject: 'vehicle/[abc' } }] } })).toEqual([
      'route.routes[0].match.subject: is not a valid glob: has an unclosed "[" at position 9 in "vehicle/[abc"',
    ]);
    expect(
      problems({ route: { ...ROOT, routes: [{ match: { subject: ['vehicle/*', 'robot/[z-a]'] } }] } }),
    ).toEqual([
      'route.routes[0].match.subject[1]: is not a valid glob: has a reversed range "z-a" in "robot/[z-a]"',
    ]);
  });

  it('rejects a type glob that matches no event type', () => {
    expect(problems({ route: { ...ROOT, routes: [{ match: { type: 'vehcle.vpn.*' } }] } })).toEqual([
      'route.routes[0].match.type: "vehcle.vpn.*" matches no event type (for example vehicle.vpn.disconnected, robot.health.*)',
    ]);
  });

  it('names an unknown severity', () => {
    expect(problems({ route: { ...ROOT, routes: [{ match: { severity: 'warn' } }] } })).toEqual([
      'route.routes[0].match.severity: must be one of info, warning, critical (a minimum: warning matches warning and critical), got "warn"',
    ]);
  });

  it('names a bad cron expression', () => {
    const window = { name: 'w', duration: '1h' };
    expect(problems({ maintenance: [{ ...window, schedule: '61 * * * *' }] })).toEqual([
      'maintenance[0].schedule: "61 * * * *" is not a valid cron expression: "61" is not a valid minute field',
    ]);
    expect(problems({ maintenance: [{ ...window, schedule: '0 22 * *' }] })).toEqual([
      'maintenance[0].schedule: "0 22 * *" is not a valid cron expression: expected 5 or 6 fields but got 4 (5 or 6 fields: [second] minute hour day-of-month month day-of-week)',
    ]);
    expect(problems({ maintenance: [{ ...window, schedule: '0 0 31 2 *' }] })).toEqual([
      'maintenance[0].schedule: "0 0 31 2 *" never fires: that day of month never occurs in those months',
    ]);
  });

  it('names a bad time zone', () => {
    expect(
      problems({
        maintenance: [{ name: 'w', schedule: '0 1 * * *', duration: '1h', time_zone: 'Europe/Berln' }],
      }),
    ).toEqual([
      'maintenance[0].time_zone: "Europe/Berln" is not a known time zone (use an IANA name such as "UTC" or "Europe/Berlin")',
    ]);
  });

  it('rejects negative, malformed and too short durations', () => {
    expect(problems({ route: { ...ROOT, group_wait: -5 } })).toEqual([
      'route.group_wait: expected a duration between 0s and 1h, like 30s; got -5',
    ]);
    expect(problems({ route: { ...ROOT, routes: [{ repeat_interval: '-4h' }] } })).toEqual([
      'route.routes[0].repeat_interval: expected a duration between 1s and 30d, like 30s; got -4h',
    ]);
    expect(problems({ route: { ...ROOT, group_interval: 'soon' } })).toEqual([
      'route.group_interval: expected a duration between 1s and 1d, like 30s; got soon',
    ]);
    expect(problems({ route: { ...ROOT, repeat_interval: '500ms' } })).toEqual([
      'route.repeat_interval: expected a duration between 1s and 30d, like 30s; got 500ms',
    ]);
    expect(problems({ maintenance: [{ name: 'w', schedule: '0 1 * * *', duration: '40d' }] })).toEqual([
      'maintenance[0].duration: expected a duration between 1s and 31d, like 30s; got 40d',
    ]);
    expect(problems({ route: { ...ROOT, group_wait: true } })).toEqual([
      'route.group_wait: expected a duration between 0s and 1h, like 30s; got true',
    ]);
  });

  it('is strict: unknown fields, match or continue on the root', () => {
    expect(problems({ route: { ...ROOT, match: { severity: 'critical' }, continue: true } })).toEqual([
      'route: unknown fields "match", "continue" (expected one of receiver, group_by, group_wait, group_interval, repeat_interval, send_resolved, routes)',
    ]);
    expect(problems({ route: { ...ROOT, routes: [{ mach: {} }] } })).toEqual([
      'route.routes[0]: unknown field "mach"; did you mean "match"?',
    ]);
    expect(problems({ route: {} })).toEqual(['route.receiver: is required (the name of a receiver)']);
  });

  it('checks group_by and tag names against entity_tags', () => {
    expect(
      problems({
        route: { ...ROOT, group_by: ['type', 'sitee'], routes: [{ match: { tags: { region: 'eu' } } }] },
        entity_tags: [{ match: 'vehicle/north-*', tags: { site: 'north' } }],
      }),
    ).toEqual([
      'route.group_by[1]: "sitee" is not a label; use type, subject, severity, kind, incident, site',
      'route.routes[0].match.tags.region: no entity_tags entry sets the tag "region", so this never matches',
    ]);
    expect(problems({ route: { ...ROOT, group_by: ['...', 'type'] } })).toEqual([
      'route.group_by: "..." (every label) must be the only entry',
    ]);
    expect(problems({ route: { ...ROOT, group_by: ['type', 'type'] } })).toEqual([
      'route.group_by[1]: "type" is listed twice',
    ]);
  });

  it('rejects tag names that shadow built-in labels or are not identifiers', () => {
    expect(
      problems({ entity_tags: [{ match: 'vehicle/*', tags: { severity: 'low', 'my-tag': 'x' } }] }),
    ).toEqual([
      'entity_tags[0].tags.severity: "severity" is a built-in label (type, subject, severity, kind, incident) and cannot be a tag name',
      'entity_tags[0].tags.my-tag: tag name "my-tag" must be letters, digits and _ (not first a digit)',
    ]);
  });

  it('rejects duplicate maintenance window names', () => {
    const window = { name: 'nightly', schedule: '0 1 * * *', duration: '1h' };
    expect(problems({ maintenance: [window, window] })).toEqual([
      'maintenance[1].name: "nightly" is used by another window',
    ]);
  });
});

describe('checkReceiverNames', () => {
  it('names every unknown receiver with its path', () => {
    const route: RootRouteConfig = notificationsConfigSchema.parse({
      route: {
        receiver: 'ops',
        routes: [{ receiver: 'ops' }, { receiver: 'pager', routes: [{ receiver: 'audit' }, {}] }],
      },
    }).route!;
    expect(checkReceiverNames(route, ['ops', 'audit'])).toEqual([
      'route.routes[1].receiver: unknown receiver "pager" (configured: audit, ops)',
    ]);
    expect(checkReceiverNames(route, [])).toEqual([
      'route.receiver: unknown receiver "ops" (no receivers are configured)',
      'route.routes[0].receiver: unknown receiver "ops" (no receivers are configured)',
      'route.routes[1].receiver: unknown receiver "pager" (no receivers are configured)',
      'route.routes[1].routes[0].receiver: unknown receiver "audit" (no receivers are configured)',
    ]);
    expect(checkReceiverNames(undefined, [])).toEqual([]);
  });
});

describe('entity tags', () => {
  it('merges every matching entry, later entries winning', () => {
    const tagsFor = compileEntityTags([
      { match: 'vehicle/*', tags: { site: 'unknown', fleet: 'cars' } },
      { match: 'vehicle/north-*', tags: { site: 'north' } },
      { match: 'robot/*', tags: { fleet: 'robots' } },
    ]);
    expect(tagsFor('vehicle/north-7')).toEqual({ site: 'north', fleet: 'cars' });
    expect(tagsFor('vehicle/south-1')).toEqual({ site: 'unknown', fleet: 'cars' });
    expect(tagsFor('robot/r1')).toEqual({ fleet: 'robots' });
    expect(tagsFor('upstream/fleet-api')).toEqual({});
    expect(tagsFor('vehicle/north-7')).toBe(tagsFor('vehicle/north-7'));
  });
});
