import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseProblems } from '../../../src/lib/issues.js';
import { notificationsConfigSchema } from '../../../src/notifiers/config.js';
import { BUILTIN_INHIBIT_RULES, type InhibitRuleConfig } from '../../../src/notifiers/muting/config.js';
import type { IncidentRecord } from '../../../src/notifiers/muting/firing-incidents.js';
import {
  candidateSources,
  compileInhibitRules,
  Inhibition,
} from '../../../src/notifiers/muting/inhibition.js';
import { compileEntityTags } from '../../../src/notifiers/routing/entity-tags.js';
import { fleetEvent, MINUTE, T0 } from '../routing/helpers.js';

const noTags = compileEntityTags([]);

function incident(
  subject: string,
  key: string,
  type: string,
  over: Partial<IncidentRecord> = {},
): IncidentRecord {
  return { subject, key, type, severity: 'critical', firing: true, since: T0, at: T0, ...over };
}

const tokenDown = incident('upstream/token', 'upstream', 'monitor.upstream.degraded');
const gatewayDown = incident('upstream/robots', 'upstream', 'monitor.upstream.degraded');
const fleetDown = incident('upstream/fleet', 'upstream', 'monitor.upstream.degraded');
const offVpn = (vehicle: string) => incident(`vehicle/${vehicle}`, 'vpn', 'vehicle.vpn.disconnected');

function builtins(incidents: IncidentRecord[], rules: readonly InhibitRuleConfig[] = BUILTIN_INHIBIT_RULES) {
  return new Inhibition(compileInhibitRules(rules), noTags, incidents);
}

const robotDown = (robot = 'r-1', time = T0 + MINUTE) =>
  fleetEvent('robot.health.down', `robot/${robot}`, { time });
const unreachable = (vehicle = 'v-1') =>
  fleetEvent('vehicle.unreachable', `vehicle/${vehicle}`, { time: T0 + MINUTE });
const now = { covering: false };

describe('the built-in inhibition rules', () => {
  it('the token issuer down inhibits the other upstreams’ incidents, and needs nothing else', () => {
    const inhibition = builtins([tokenDown]);
    for (const subject of ['upstream/robots', 'upstream/fleet']) {
      expect(inhibition.check(fleetEvent('monitor.upstream.degraded', subject), now), subject).toEqual({
        reason: 'inhibited',
        by: 'upstream-token',
        source: { type: 'monitor.upstream.degraded', subject: 'upstream/token' },
      });
    }
    // An access failure reaches no detector (Guarantee 2): entity events are not its effects, and
    // holding them for the token's window would only delay them.
    for (const event of [
      robotDown(),
      unreachable(),
      fleetEvent('vehicle.vpn.disconnected', 'vehicle/v-1'),
      fleetEvent('robot.state.changed', 'robot/r-1'),
    ]) {
      expect(inhibition.check(event, now), event.type).toBeUndefined();
    }
    // Its own recovery is not its target, nor is the monitor's delivery trouble.
    expect(inhibition.check(fleetEvent('monitor.upstream.recovered', 'upstream/token'), now)).toBeUndefined();
    expect(inhibition.check(fleetEvent('monitor.receiver.disabled', 'receiver/ops'), now)).toBeUndefined();
  });

  it('the robot gateway down inhibits robot health, not other robot events nor vehicle ones', () => {
    const inhibition = builtins([gatewayDown]);
    expect(inhibition.check(robotDown(), now)?.by).toBe('upstream-robots');
    expect(inhibition.check(fleetEvent('robot.health.up', 'robot/r-1'), now)?.by).toBe('upstream-robots');
    expect(inhibition.check(fleetEvent('robot.lease.changed', 'robot/r-1'), now)).toBeUndefined();
    expect(inhibition.check(unreachable(), now)).toBeUndefined();
  });

  it('the fleet API down inhibits vehicle reachability only', () => {
    const inhibition = builtins([fleetDown]);
    expect(inhibition.check(unreachable(), now)?.by).toBe('upstream-fleet');
    expect(inhibition.check(fleetEvent('vehicle.reachable', 'vehicle/v-1'), now)?.by).toBe('upstream-fleet');
    expect(inhibition.check(fleetEvent('vehicle.vpn.disconnected', 'vehicle/v-1'), now)).toBeUndefined();
    expect(inhibition.check(robotDown(), now)).toBeUndefined();
  });

  it('a vehicle off the VPN inhibits its own unreachable and stale report, not another vehicle’s', () => {
    const inhibition = builtins([offVpn('v-1')]);
    expect(inhibition.check(unreachable('v-1'), now)?.by).toBe('vehicle-off-vpn');
    expect(inhibition.check(fleetEvent('vehicle.power.report.stale', 'vehicle/v-1'), now)?.by).toBe(
      'vehicle-off-vpn',
    );
    expect(inhibition.check(unreachable('v-2'), now)).toBeUndefined();
    expect(inhibition.check(fleetEvent('vehicle.power.changed', 'vehicle/v-1'), now)).toBeUndefined();
  });

  it('an entity failing while its upstream is healthy is not inhibited', () => {
    expect(builtins([]).check(robotDown(), now)).toBeUndefined();
    expect(
      builtins([{ ...gatewayDown, firing: false, at: T0 + 30_000 }]).check(robotDown(), now),
    ).toBeUndefined();
  });
});

describe('inhibition semantics', () => {
  it('asks "now" of an announcement, and "over its time" of a send', () => {
    const resolved = { ...gatewayDown, firing: false, since: T0, at: T0 + 2 * MINUTE };
    const inhibition = builtins([resolved]);
    const during = robotDown('r-1', T0 + MINUTE);
    const after = robotDown('r-1', T0 + 3 * MINUTE);
    const before = robotDown('r-1', T0 - MINUTE);
    expect(inhibition.check(during, now)).toBeUndefined();
    expect(inhibition.check(during, { covering: true })?.by).toBe('upstream-robots');
    expect(inhibition.check(after, { covering: true })).toBeUndefined();
    expect(inhibition.check(before, { covering: true })).toBeUndefined();
  });

  it('compares the equal labels (absent on both counts as equal) and never inhibits an incident by itself', () => {
    const tagsFor = compileEntityTags([
      { match: 'vehicle/n-*', tags: { site: 'north' } },
      { match: 'vehicle/s-*', tags: { site: 'south' } },
    ]);
    const rules = compileInhibitRules([
      {
        name: 'site-down',
        source_matchers: { type: 'vehicle.vpn.disconnected', subject: 'vehicle/*-gw' },
        target_matchers: { type: 'vehicle.*' },
        equal: ['site'],
      },
    ]);
    const inhibition = new Inhibition(rules, tagsFor, [offVpn('n-gw')]);
    expect(inhibition.check(unreachable('n-7'), now)?.source).toEqual({
      type: 'vehicle.vpn.disconnected',
      subject: 'vehicle/n-gw',
    });
    expect(inhibition.check(unreachable('s-7'), now)).toBeUndefined();
    // Both untagged: the label is absent on both, so equal.
    expect(new Inhibition(rules, noTags, [offVpn('x-gw')]).check(unreachable('y'), now)?.by).toBe(
      'site-down',
    );
    // The gateway's own VPN incident (its firing and its resolution) is not inhibited by itself.
    expect(inhibition.check(fleetEvent('vehicle.vpn.disconnected', 'vehicle/n-gw'), now)).toBeUndefined();
    expect(inhibition.check(fleetEvent('vehicle.vpn.connected', 'vehicle/n-gw'), now)).toBeUndefined();
    // …but its other events are.
    expect(inhibition.check(unreachable('n-gw'), now)?.by).toBe('site-down');
  });

  it('labels again only the incidents that changed since the reading it follows', () => {
    const labelled: string[] = [];
    const tagsFor = (subject: string) => {
      labelled.push(subject);
      return noTags(subject);
    };
    const rules = compileInhibitRules([
      {
        name: 'critical-gateway',
        source_matchers: { type: 'vehicle.vpn.disconnected', severity: 'critical' },
        target_matchers: { type: 'vehicle.unreachable' },
        equal: [],
      },
    ]);
    const gateway = offVpn('gw');
    const other = incident('vehicle/other', 'vpn', 'vehicle.vpn.disconnected', { severity: 'warning' });
    const first = new Inhibition(rules, tagsFor, [gateway, other]);
    expect(first.check(unreachable('v-9'), now)?.source?.subject).toBe('vehicle/gw');
    expect(first.recorded(rules[0]!, 'vehicle/gw', 'vpn')).toBe(gateway);
    expect(first.recorded(rules[0]!, 'vehicle/other', 'vpn')).toBeUndefined();
    labelled.length = 0;
    // The gateway's incident unchanged (the same record), the other one now critical.
    const critical = { ...other, severity: 'critical' as const };
    const next = new Inhibition(rules, tagsFor, [gateway, critical], first);
    expect(labelled).toEqual(['vehicle/other']);
    expect(next.recorded(rules[0]!, 'vehicle/other', 'vpn')).toBe(critical);
    // Gone from the reading, gone from the rules' sources.
    const last = new Inhibition(rules, tagsFor, [critical], next);
    expect(last.recorded(rules[0]!, 'vehicle/gw', 'vpn')).toBeUndefined();
    expect(last.check(unreachable('v-9'), now)?.source?.subject).toBe('vehicle/other');
  });

  it('brought up to date reading by reading, answers as one built from the reading alone', () => {
    const tagsFor = compileEntityTags([{ match: 'vehicle/n-*', tags: { site: 'north' } }]);
    const rules = compileInhibitRules([
      ...BUILTIN_INHIBIT_RULES,
      {
        name: 'site-gateway',
        source_matchers: { type: 'vehicle.vpn.disconnected', subject: 'vehicle/*-gw' },
        target_matchers: { type: 'vehicle.*' },
        equal: ['site'],
      },
    ]);
    const subjects = ['vehicle/n-gw', 'vehicle/s-gw', 'vehicle/n-1', 'vehicle/v-1', 'vehicle/v-2'];
    // A reading: per incident, absent or one of its records (firing, or resolved at some time).
    const pool = [
      ...subjects.map((subject) => ({ subject, key: 'vpn', type: 'vehicle.vpn.disconnected' })),
      { subject: 'upstream/fleet', key: 'upstream', type: 'monitor.upstream.degraded' },
    ];
    const records = pool.map((at) =>
      [true, false].flatMap((firing) =>
        [T0, T0 + 2 * MINUTE].map((time) => incident(at.subject, at.key, at.type, { firing, at: time })),
      ),
    );
    const reading = fc
      .array(fc.option(fc.nat({ max: 3 }), { nil: undefined }), {
        minLength: pool.length,
        maxLength: pool.length,
      })
      .chain((picks) =>
        fc
          .shuffledSubarray(
            picks.flatMap((pick, i) => (pick === undefined ? [] : [records[i]![pick]!])),
            { minLength: 0 },
          )
          .map((shown) => shown),
      );
    const events = subjects.flatMap((subject) => [
      fleetEvent('vehicle.unreachable', subject, { time: T0 + MINUTE }),
      fleetEvent('vehicle.power.report.stale', subject, { time: T0 + 3 * MINUTE }),
      fleetEvent('vehicle.vpn.connected', subject, { time: T0 + MINUTE }),
    ]);
    fc.assert(
      fc.property(fc.array(reading, { minLength: 1, maxLength: 6 }), (readings) => {
        let kept: Inhibition | undefined;
        for (const incidents of readings) {
          // A record read again is the same object; drawing one twice in a row shows that case.
          kept = new Inhibition(rules, tagsFor, incidents, kept);
          const fresh = new Inhibition(rules, tagsFor, incidents);
          for (const event of events) {
            for (const covering of [false, true]) {
              expect(kept.check(event, { covering })?.by).toBe(fresh.check(event, { covering })?.by);
            }
          }
          for (const rule of rules) {
            for (const at of pool) {
              expect(kept.recorded(rule, at.subject, at.key)).toBe(fresh.recorded(rule, at.subject, at.key));
            }
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('finds the candidate sources of the wait: the literal subjects, or the target’s own', () => {
    const [token, , robots, vpn] = compileInhibitRules(BUILTIN_INHIBIT_RULES);
    if (!token || !robots || !vpn) throw new Error('missing built-in rules');
    expect(candidateSources(robots, robotDown())).toEqual([
      { subject: 'upstream/robots', key: 'upstream', type: 'monitor.upstream.degraded' },
    ]);
    expect(candidateSources(vpn, unreachable('v-3'))).toEqual([
      { subject: 'vehicle/v-3', key: 'vpn', type: 'vehicle.vpn.disconnected' },
    ]);
    expect(candidateSources(token, fleetEvent('monitor.upstream.degraded', 'upstream/fleet'))).toEqual([
      { subject: 'upstream/token', key: 'upstream', type: 'monitor.upstream.degraded' },
    ]);
    // A glob subject and no equal subject: found through the recorded incidents only.
    const [glob] = compileInhibitRules([
      {
        name: 'any',
        source_matchers: { type: 'vehicle.vpn.disconnected', subject: 'vehicle/*' },
        target_matchers: { type: 'robot.*' },
        equal: [],
      },
    ]);
    if (!glob) throw new Error('no rule');
    expect(candidateSources(glob, robotDown())).toEqual([]);
  });
});

describe('the inhibit_rules config', () => {
  const problems = (input: unknown) => {
    const result = parseProblems(notificationsConfigSchema, input);
    return result.ok ? [] : result.problems;
  };

  it('keeps built-in rules by name, adds one’s own, and turns all off with []', () => {
    const config = notificationsConfigSchema.parse({
      inhibit_rules: [
        'vehicle-off-vpn',
        {
          name: 'gateway',
          source_matchers: { type: 'vehicle.vpn.disconnected', subject: 'vehicle/gw' },
          target_matchers: { subject: 'vehicle/*' },
        },
      ],
      inhibit_max_wait: '30s',
    });
    expect(config.inhibit_rules.map((rule) => rule.name)).toEqual(['vehicle-off-vpn', 'gateway']);
    expect(config.inhibit_rules[1]?.equal).toEqual([]);
    expect(config.inhibit_max_wait).toBe(30_000);
    expect(notificationsConfigSchema.parse({ inhibit_rules: [] }).inhibit_rules).toEqual([]);
  });

  it('says what is wrong with a rule, one line per problem', () => {
    expect(
      problems({
        inhibit_rules: [
          'upstream-everything',
          {
            name: 'a',
            source_matchers: { type: 'robot.state.changed' },
            target_matchers: { subject: 'robot/*' },
          },
          { name: 'b', source_matchers: { type: 'robot.health.down' }, target_matchers: {} },
          {
            name: 'b',
            source_matchers: { type: 'robot.health.down', tags: { site: 'x' } },
            target_matchers: { type: 'robot.*' },
            equal: ['site', 'nope'],
          },
        ],
        inhibit_max_wait: '11m',
      }),
    ).toEqual([
      'inhibit_rules[0]: "upstream-everything" is not a built-in rule (upstream-token, upstream-fleet, upstream-robots, vehicle-off-vpn); write a rule as { name, source_matchers, target_matchers, equal }',
      'inhibit_rules[1].source_matchers.type: matches no event that fires an incident, so nothing can inhibit (for example vehicle.vpn.disconnected, vehicle.power.command.stuck)',
      'inhibit_rules[2].target_matchers: must have at least one of type, severity, subject, tags (a rule without one would mute everything)',
      'inhibit_max_wait: expected a duration between 0s and 10m, like 30s; got 11m',
    ]);
    expect(
      problems({
        inhibit_rules: [
          { name: 'b', source_matchers: { type: 'robot.health.down' }, target_matchers: { type: 'robot.*' } },
          {
            name: 'b',
            source_matchers: { type: 'robot.health.down', tags: { site: 'x' } },
            target_matchers: { type: 'robot.*' },
            equal: ['subject', 'nope'],
          },
        ],
      }),
    ).toEqual([
      'inhibit_rules[1].name: "b" is used by another rule',
      'inhibit_rules[1].source_matchers.tags.site: no entity_tags entry sets the tag "site", so this never matches',
      'inhibit_rules[1].equal[1]: "nope" is not a label; use type, subject, severity, kind, incident (add entity_tags to group by your own tags)',
    ]);
  });
});
