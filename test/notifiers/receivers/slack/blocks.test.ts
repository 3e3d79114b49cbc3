import { describe, expect, it } from 'vitest';
import { FLEET_EVENT_TYPES } from '../../../../src/events/catalogue.js';
import { describeEvent } from '../../../../src/events/describe.js';
import type { FleetEvent } from '../../../../src/events/types.js';
import { truncate } from '../../../../src/lib/text.js';
import {
  buildSlackMessage,
  type SlackBlock,
  type SlackMessage,
} from '../../../../src/notifiers/receivers/slack/blocks.js';
import { SLACK_LIMITS } from '../../../../src/notifiers/receivers/slack/limits.js';
import { validateSlackPayload } from '../../../support/slack-standin.js';
import { acknowledged, event, notification, vehicleId, vehicles, vpnBack, vpnLost } from './fixtures.js';

function header(message: SlackMessage): string {
  const block = message.blocks[0];
  if (block?.type !== 'header') throw new Error('first block is not a header');
  return block.text.text;
}

/** All mrkdwn and plain text of the message, in order. */
function allText(message: SlackMessage): string {
  return message.blocks.map(blockText).join('\n');
}

function blockText(block: SlackBlock): string {
  if (block.type === 'header') return block.text.text;
  if (block.type === 'context') return block.elements.map((element) => element.text).join(' ');
  if (block.type === 'divider') return '';
  if ('fields' in block) return block.fields.map((field) => field.text).join('\n');
  return block.text.text;
}

/** Slack's limits, checked by this file's reading and by the stand-in's independent validator. */
function expectWithinLimits(message: SlackMessage): void {
  expect(validateSlackPayload(message)).toEqual([]);
  expect(message.text.length).toBeGreaterThan(0);
  expect(message.text.length).toBeLessThanOrEqual(SLACK_LIMITS.text);
  expect(message.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
  for (const block of message.blocks) {
    if (block.type === 'header') expect(block.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.headerText);
    if (block.type === 'context') {
      expect(block.elements.length).toBeLessThanOrEqual(SLACK_LIMITS.contextElements);
      for (const element of block.elements) {
        expect(element.text.length).toBeLessThanOrEqual(SLACK_LIMITS.contextText);
      }
    }
    if (block.type === 'section' && 'fields' in block) {
      expect(block.fields.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionFields);
      for (const field of block.fields) expect(field.text.length).toBeLessThanOrEqual(SLACK_LIMITS.fieldText);
    }
    if (block.type === 'section' && 'text' in block) {
      expect(block.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionText);
    }
  }
}

function idsListed(message: SlackMessage, count: number): number {
  const text = allText(message);
  let listed = 0;
  for (let index = 1; index <= count; index += 1) if (text.includes(`\`${vehicleId(index)}\``)) listed += 1;
  return listed;
}

describe('buildSlackMessage: one event', () => {
  const lost = vpnLost('veh-0003');
  const message = buildSlackMessage(notification([lost]));

  it('has a header with the severity emoji and the sentence', () => {
    expect(header(message)).toBe(':large_orange_circle: veh-0003 is off the VPN: connected → disconnected');
  });

  it('has fields for the entity, the change and since when', () => {
    const fields = message.blocks[1];
    expect(fields?.type).toBe('section');
    const text = fields ? blockText(fields) : '';
    expect(text).toContain('*Vehicle*\n`veh-0003`');
    expect(text).toContain('*State*\nconnected → disconnected');
    expect(text).toMatch(
      /\*Since\*\n<!date\^\d+\^\{date_short_pretty\} \{time_secs\}\|2026-03-04T09:59:00\.000Z>/,
    );
  });

  it('shows an acknowledgement: the incident, who, why and until when', () => {
    const message = buildSlackMessage(notification([acknowledged('veh-0004')]));
    expect(header(message)).toContain('veh-0004 is off the VPN: acknowledged by dana: on it');
    const text = allText(message);
    expect(text).toContain('*Incident*\n`vpn-veh-0004-0a0b0c0d`');
    expect(text).toContain('*Acknowledged by*\ndana');
    expect(text).toContain('*Comment*\non it');
    expect(text).toContain('*Until*\n');
    expectWithinLimits(message);
  });

  it('ends with a context of time, source, type and event id', () => {
    const context = message.blocks.at(-1);
    expect(context?.type).toBe('context');
    const text = context ? blockText(context) : '';
    expect(text).toContain('2026-03-04T10:00:00.000Z');
    expect(text).toContain('`fleetwatch/test`');
    expect(text).toContain('`vehicle.vpn.disconnected`');
    expect(text).toContain(`\`${lost.id}\``);
  });

  it('falls back to describeEvent in plain text', () => {
    expect(message.text).toBe(`:large_orange_circle: ${describeEvent(lost)}`);
    expectWithinLimits(message);
  });

  it.each([
    ['critical', ':red_circle:'],
    ['warning', ':large_orange_circle:'],
    ['info', ':large_blue_circle:'],
  ] as const)('marks %s with %s', (severity, emoji) => {
    const built = buildSlackMessage(
      notification([event('robot.health.down', 'rb-7', { severity, previous: 'up', current: 'down' })]),
    );
    expect(header(built).startsWith(`${emoji} `)).toBe(true);
  });

  it('makes a resolved message visibly different: check mark, "Resolved:", duration', () => {
    const built = buildSlackMessage(notification([vpnBack('veh-0003')], { status: 'resolved' }));
    expect(header(built)).toBe(
      ':white_check_mark: Resolved: veh-0003 is back on the VPN: disconnected → connected after 3m 05s',
    );
    expect(allText(built)).toContain('*Duration*\n3m 05s');
    expect(built.text.startsWith(':white_check_mark: Resolved: ')).toBe(true);
    expectWithinLimits(built);
  });

  it('says "Still firing (reminder N)" on reminders', () => {
    const built = buildSlackMessage(
      notification([lost], { reminder: { firstNotifiedAt: '2026-03-04T08:00:00.000Z', count: 3 } }),
    );
    expect(header(built)).toContain('Still firing (reminder 3): veh-0003 is off the VPN');
    expect(allText(built)).toMatch(/Still firing \(reminder 3\)\* · first notified <!date\^\d+\^/);
    expect(built.text).toContain('Still firing (reminder 3)');
    expectWithinLimits(built);
  });

  it('tells on a reminder how long a command has been pending by now, not when it fired', () => {
    const stuck = event('vehicle.power.command_stuck', 'veh-0003', {
      severity: 'warning',
      requested: 'off',
      current: 'on',
      pendingSince: '2026-03-04T09:59:30.000Z',
      pendingForMs: 30_000,
    });
    const fields = (built: SlackMessage) => allText(built);
    expect(fields(buildSlackMessage(notification([stuck])))).toContain('*Pending for*\n30s');
    const reminder = notification([stuck], {
      reminder: { firstNotifiedAt: '2026-03-04T10:00:00.000Z', count: 4 },
      createdAt: '2026-03-04T10:01:02.000Z',
    });
    expect(fields(buildSlackMessage(reminder))).toContain('*Pending for*\n1m 32s');
  });

  it('escapes mrkdwn control characters, so an id cannot ping a channel', () => {
    const built = buildSlackMessage(notification([vpnLost('<!channel> & `x`')]));
    // The header is plain_text, which Slack does not parse; everything else is mrkdwn.
    const text = allText({ ...built, blocks: built.blocks.slice(1) }) + built.text;
    expect(text).not.toContain('<!channel>');
    expect(text).toContain('&lt;!channel&gt; &amp;');
    expectWithinLimits(built);
  });

  it('stays within limits with very long ids and values', () => {
    const long = 'x'.repeat(10_000);
    const built = buildSlackMessage(
      notification([
        {
          ...event('robot.state.changed', long, {
            severity: 'critical',
            previous: 'y'.repeat(5_000),
            current: '&'.repeat(5_000),
          }),
          id: 'i'.repeat(5_000),
          source: `fleetwatch/${'s'.repeat(5_000)}`,
        },
      ]),
    );
    expectWithinLimits(built);
    expect(header(built).endsWith('…')).toBe(true);
  });

  it('renders every catalogued type within limits, alone and in a group', () => {
    for (const type of FLEET_EVENT_TYPES) {
      const one = event(type, 'ent-1', {
        severity: 'warning',
        previous: 'a',
        current: 'b',
        since: '2026-03-04T09:00:00.000Z',
        durationMs: 5_000,
        lastError: { code: 'timeout' },
        summary: 'route changed',
      });
      expectWithinLimits(buildSlackMessage(notification([one])));
      expectWithinLimits(buildSlackMessage(notification([one, { ...one, subject: `${one.subject}-2` }])));
    }
  });
});

describe('buildSlackMessage: a group', () => {
  it('says how many in one header and lists all 40', () => {
    const built = buildSlackMessage(notification(vehicles(40)));
    expect(header(built)).toBe(':large_orange_circle: 40 vehicles are off the VPN');
    expect(idsListed(built, 40)).toBe(40);
    expect(allText(built)).not.toContain('more_');
    // The change every vehicle shares is said once, not forty times.
    expect(allText(built).match(/connected → disconnected/g)).toHaveLength(1);
    expect(built.text.split('\n')).toHaveLength(41);
    expect(built.text).toContain(describeEvent(vpnLost('veh-0040')));
    expectWithinLimits(built);
  });

  it('tells apart events whose values are hidden by what they say: the part, the power requested', () => {
    const changed = (part: string, offsetMs: number) =>
      event(
        'robot.config.changed',
        'rb-0001',
        { severity: 'info', part, previous: 'a1', current: 'b2' },
        offsetMs,
      );
    const built = buildSlackMessage(notification([changed('activeSite', 0), changed('loadedRoute', 1_000)]));
    const lines = allText(built)
      .split('\n')
      .filter((line) => line.startsWith('•'));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('`rb-0001` · activeSite · ');
    expect(lines[1]).toContain('`rb-0001` · loadedRoute · ');
    // The hashes stay out.
    expect(allText(built)).not.toContain('b2');
  });

  it('lists the first 100 of 500 and ends with "…and 400 more"', () => {
    const built = buildSlackMessage(notification(vehicles(500)));
    expect(header(built)).toBe(':large_orange_circle: 500 vehicles are off the VPN');
    expect(idsListed(built, 500)).toBe(100);
    expect(blockText(built.blocks.at(-2) as SlackBlock)).toBe('_…and 400 more_');
    expect(built.text.endsWith('\n…and 400 more')).toBe(true);
    expectWithinLimits(built);
  });

  it('lists as many as Slack allows when asked for all of them', () => {
    const events = vehicles(5_000);
    const built = buildSlackMessage(notification(events), { maxListed: Number.POSITIVE_INFINITY });
    const listed = idsListed(built, 5_000);
    expect(listed).toBeGreaterThan(500);
    expect(listed).toBeLessThan(5_000);
    expect(allText(built)).toContain(`_…and ${5_000 - listed} more_`);
    expect(built.blocks).toHaveLength(SLACK_LIMITS.blocks);
    expectWithinLimits(built);
  });

  it('stays within limits with very long ids in a group, keeping their distinct ends', () => {
    for (const count of [1, 40, 500, 2_000]) {
      const events = vehicles(count, (_, index) => vpnLost(`${'v'.repeat(3_000)}-${index + 1}`, index));
      const built = buildSlackMessage(notification(events), { maxListed: Number.POSITIVE_INFINITY });
      expectWithinLimits(built);
      const text = allText(built);
      const listed = events.filter(
        (_, index) => text.includes(`v…${'v'.repeat(20)}`) && text.includes(`v-${index + 1}\``),
      ).length;
      if (count === 1) expect(text).toContain(`\`${'v'.repeat(20)}`);
      else expect(listed + Number(/_…and (\d+) more_/.exec(text)?.[1] ?? 0)).toBe(count);
      if (count === 2_000) expect(listed).toBeLessThan(count);
    }
  });

  it('marks a resolved group with a check mark and "Resolved:"', () => {
    const built = buildSlackMessage(notification(vehicles(40, vpnBack), { status: 'resolved' }));
    expect(header(built)).toBe(':white_check_mark: Resolved: 40 vehicles are back on the VPN');
    expect(allText(built)).toContain('`veh-0001` · after 3m 05s');
    expectWithinLimits(built);
  });

  it('says "Still firing (reminder N)" on a group reminder', () => {
    const built = buildSlackMessage(
      notification(vehicles(40), { reminder: { firstNotifiedAt: '2026-03-04T08:00:00.000Z', count: 2 } }),
    );
    expect(header(built)).toBe(
      ':large_orange_circle: Still firing (reminder 2): 40 vehicles are off the VPN',
    );
    expectWithinLimits(built);
  });

  it('counts each type of a mixed group and marks each line', () => {
    const events: FleetEvent[] = [
      ...vehicles(3),
      event('robot.health.down', 'rb-1', { severity: 'critical', previous: 'up', current: 'down' }),
      event('robot.state.changed', 'rb-2', { severity: 'info', previous: 'idle', current: 'busy' }),
    ];
    const built = buildSlackMessage(notification(events, { groupLabels: { severity: 'any' } }));
    expect(header(built)).toBe(':red_circle: 5 fleet events (3 types)');
    const text = allText(built);
    expect(text).toContain('• 3 vehicles are off the VPN');
    expect(text).toContain('• 1 robot fails its health check');
    expect(text).toContain(':red_circle: rb-1 fails its health check: up → down');
    expect(text).toContain(':large_blue_circle: rb-2 changed vehicle state: idle → busy');
    expect(text).toContain('group `severity=any`');
    expectWithinLimits(built);
  });

  it('counts vehicles, not events, when one vehicle appears twice', () => {
    const built = buildSlackMessage(
      notification([vpnLost('veh-0001', 0), vpnLost('veh-0001', 1), vpnLost('veh-0002')]),
    );
    expect(header(built)).toBe(':large_orange_circle: 2 vehicles are off the VPN');
    expect(allText(built)).toContain('*Vehicles*\n2 (3 events)');
  });
});

describe('truncate', () => {
  it('never splits a surrogate pair or an escaped entity', () => {
    expect(truncate('ab😀cd', 4)).toBe('ab…');
    expect(truncate('a&amp;bcdef', 5)).toBe('a…');
    expect(truncate('short', 10)).toBe('short');
  });
});

describe('resolutions, apart from what fires', () => {
  const headers = (message: SlackMessage) =>
    message.blocks.filter((block) => block.type === 'header').map((block) => blockText(block));

  it('shows a mixed notification as a firing part and a resolved part under its own green header', () => {
    const built = buildSlackMessage(
      notification([...vehicles(3), vpnBack('veh-0009', 5), vpnBack('veh-0010', 6)]),
    );
    expect(headers(built)).toEqual([
      ':large_orange_circle: 3 vehicles are off the VPN',
      ':white_check_mark: Resolved: 2 vehicles are back on the VPN',
    ]);
    const divider = built.blocks.findIndex((block) => block.type === 'divider');
    const resolvedHeader = built.blocks.findIndex((block, index) => index > 0 && block.type === 'header');
    expect(resolvedHeader).toBe(divider + 1);
    // Each event is listed under its own part: the resolutions never under the firing header.
    const before = built.blocks.slice(0, divider).map(blockText).join('\n');
    const after = built.blocks.slice(divider).map(blockText).join('\n');
    expect(before).toContain('`veh-0001`');
    expect(before).not.toContain('veh-0009');
    expect(after).toContain('`veh-0009` · after 3m 05s');
    expect(after).not.toContain('veh-0001');
    expect(built.text).toContain('\n:white_check_mark: Resolved: 2 vehicles are back on the VPN\n• veh-0009');
    expect(built.blocks.at(-1)?.type).toBe('context');
    expectWithinLimits(built);
  });

  it('gives a notification of only resolutions one green resolved header', () => {
    const built = buildSlackMessage(notification([vpnBack('veh-0001'), vpnBack('veh-0002', 1)]));
    expect(headers(built)).toEqual([':white_check_mark: Resolved: 2 vehicles are back on the VPN']);
    expect(built.blocks.some((block) => block.type === 'divider')).toBe(false);
  });

  it('marks the firing part by what fires, not by the resolutions beside it', () => {
    const critical = event('robot.health.down', 'rb-1', {
      severity: 'critical',
      previous: 'up',
      current: 'down',
    });
    const built = buildSlackMessage(
      notification([
        vpnLost('veh-0001'),
        { ...vpnBack('veh-0002'), data: { ...vpnBack('veh-0002').data, severity: 'critical' } },
      ]),
    );
    expect(headers(built)[0]).toBe(':large_orange_circle: veh-0001 is off the VPN: connected → disconnected');
    expect(headers(buildSlackMessage(notification([critical, vpnBack('veh-0002')])))[0]).toMatch(
      /^:red_circle: rb-1/,
    );
  });

  it('keeps both parts listed within Slack limits when both are large', () => {
    const built = buildSlackMessage(notification([...vehicles(3_000), ...vehicles(3_000, vpnBack)]), {
      maxListed: Number.POSITIVE_INFINITY,
    });
    expectWithinLimits(built);
    expect(headers(built)).toHaveLength(2);
    const more = allText(built).match(/_…and \d+ more_/g) ?? [];
    expect(more).toHaveLength(2);
  });

  it('reminds only of what still fires', () => {
    const built = buildSlackMessage(
      notification([vpnLost('veh-0001'), vpnBack('veh-0002', 1)], {
        reminder: { firstNotifiedAt: '2026-03-04T08:00:00.000Z', count: 2 },
      }),
    );
    expect(headers(built)).toEqual([
      ':large_orange_circle: Still firing (reminder 2): veh-0001 is off the VPN: connected → disconnected',
      ':white_check_mark: Resolved: veh-0002 is back on the VPN: disconnected → connected after 3m 05s',
    ]);
  });
});

describe('links into the console (console.url)', () => {
  const base = 'https://fleetwatch.example.com';
  const contextOf = (message: SlackMessage) => {
    const block = message.blocks.at(-1);
    if (block?.type !== 'context') throw new Error('the last block is not the context line');
    return block.elements.map((element) => element.text);
  };
  const silence = (query: string) => `<${base}/#/silences/new?${query}|silence>`;

  it('links one event to its vehicle and a silence of it, an acknowledgement to its incident', () => {
    const single = buildSlackMessage(notification([vpnLost('veh-0003')]), { consoleUrl: base });
    expectWithinLimits(single);
    expect(contextOf(single).at(-1)).toBe(
      `:link: console: <${base}/#/vehicle/veh-0003|vehicle veh-0003> · ${silence(
        'matchers=type%3Dvehicle.vpn.disconnected&matchers=subject%3Dvehicle%2Fveh-0003' +
          '&comment=re%3A+veh-0003+is+off+the+VPN%3A+connected+%E2%86%92+disconnected',
      )}`,
    );
    const ack = buildSlackMessage(notification([acknowledged('veh-0003')]), { consoleUrl: base });
    expect(contextOf(ack).at(-1)).toBe(
      `:link: console: <${base}/#/incidents/vpn-veh-0003-0a0b0c0d|the incident>`,
    );
  });

  it('links a group to the Incidents page, to the entity when it is one, and to a silence of what fires', () => {
    const group = buildSlackMessage(notification(vehicles(40)), { consoleUrl: base });
    expectWithinLimits(group);
    // Forty subjects would make the link too long: the silence names the type.
    expect(contextOf(group).at(-1)).toBe(
      `:link: console: <${base}/#/incidents|incidents> · ${silence(
        'matchers=type%3Dvehicle.vpn.disconnected&comment=re%3A+40+vehicles+are+off+the+VPN',
      )}`,
    );
    const one = buildSlackMessage(notification([vpnLost('veh-0001'), vpnBack('veh-0001', 1_000)]), {
      consoleUrl: base,
    });
    expect(contextOf(one).at(-1)).toMatch(
      new RegExp(
        `^:link: console: <${base}/#/incidents\\|incidents> · <${base}/#/vehicle/veh-0001\\|vehicle veh-0001> · <${base}/#/silences/new\\?matchers=type%3Dvehicle\\.vpn\\.disconnected&matchers=subject%3Dvehicle%2Fveh-0001&comment=`,
      ),
    );
    // Only resolutions: nothing to silence.
    const resolved = buildSlackMessage(notification(vehicles(3, vpnBack)), { consoleUrl: base });
    expect(contextOf(resolved).at(-1)).toBe(`:link: console: <${base}/#/incidents|incidents>`);
    // 500 events still fit Slack's limits with the links.
    expectWithinLimits(buildSlackMessage(notification(vehicles(500)), { consoleUrl: base }));
  });

  it('encodes ids, keeps a link whole or leaves it out, and adds nothing without console.url', () => {
    const odd = buildSlackMessage(notification([vpnLost('a|b>c d')]), { consoleUrl: base });
    expect(contextOf(odd).at(-1)).toMatch(
      /^:link: console: <https:\/\/fleetwatch\.example\.com\/#\/vehicle\/a%7Cb%3Ec%20d\|vehicle a\/b&gt;c d> · <[^<>| ]+\|silence>$/,
    );
    const long = buildSlackMessage(notification([vpnLost('v'.repeat(600))]), { consoleUrl: base });
    // The entity link is too long to keep; the silence names the type only, its comment cut.
    const link = contextOf(long).at(-1) ?? '';
    expect(
      link.startsWith(
        `:link: console: <${base}/#/silences/new?matchers=type%3Dvehicle.vpn.disconnected&comment=re%3A+vvv`,
      ),
    ).toBe(true);
    const comment = new URLSearchParams(/\?([^|]+)\|/.exec(link)?.[1]).get('comment') ?? '';
    expect(comment).toHaveLength(120);
    expect(comment.endsWith('…')).toBe(true);
    expect(allText(long)).not.toContain('/#/vehicle/vvv');
    expect(allText(buildSlackMessage(notification([vpnLost('veh-0003')])))).not.toContain(':link:');
  });
});
