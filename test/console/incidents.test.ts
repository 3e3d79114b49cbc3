import { describe, expect, it } from 'vitest';
import {
  describeState,
  entityOf,
  groupIncidents,
  type Incident,
  matchesText,
} from '../../console/src/lib/incidents.js';

function incident(over: Partial<Incident>): Incident {
  return {
    id: 'inc-1',
    subject: 'vehicle/veh-0001',
    key: 'vpn',
    type: 'vehicle.vpn.disconnected',
    severity: 'warning',
    state: 'open',
    since: '2026-01-01T00:00:00Z',
    changedAt: '2026-01-01T00:00:00Z',
    durationMs: 0,
    eventId: 'e-1',
    closedAt: null,
    closedBy: null,
    muted: null,
    acknowledged: false,
    acknowledgement: null,
    ...over,
  };
}

describe('the console incident helpers', () => {
  it('groups by type: the most severe group first, then the larger, keeping the API order inside', () => {
    const items = [
      incident({ id: 'a', type: 'vehicle.vpn.disconnected', subject: 'vehicle/v1' }),
      incident({ id: 'b', type: 'robot.health.down', severity: 'critical', subject: 'robot/r1' }),
      incident({ id: 'c', type: 'vehicle.vpn.disconnected', subject: 'vehicle/v2', acknowledged: true }),
      incident({ id: 'd', type: 'vehicle.unreachable', subject: 'vehicle/v3' }),
    ];
    const groups = groupIncidents(items, 'type');
    expect(groups.map((group) => [group.key, group.items.map((item) => item.id)])).toEqual([
      ['robot.health.down', ['b']],
      ['vehicle.vpn.disconnected', ['a', 'c']],
      ['vehicle.unreachable', ['d']],
    ]);
    expect(groups[1]?.active).toBe(1);
    expect(groupIncidents(items, 'kind').map((group) => [group.key, group.items.length])).toEqual([
      ['robot', 1],
      ['vehicle', 3],
    ]);
    expect(groupIncidents(items, 'severity')[0]?.key).toBe('critical');
  });

  it('filters by every word of the text in the type or subject, ignoring case', () => {
    const one = incident({ type: 'robot.health.down', subject: 'robot/RB-0004' });
    expect(matchesText(one, '')).toBe(true);
    expect(matchesText(one, 'health rb-0004')).toBe(true);
    expect(matchesText(one, 'health veh')).toBe(false);
  });

  it('links vehicles and robots to their pages, and nothing else', () => {
    expect(entityOf('vehicle/veh-0001')).toEqual({ page: 'vehicle', id: 'veh-0001' });
    expect(entityOf('robot/rb/7')).toEqual({ page: 'robot', id: 'rb/7' });
    expect(entityOf('store/redis')).toBeUndefined();
    expect(entityOf('vehicle/')).toBeUndefined();
  });

  it('says the state: muted how, acknowledged by whom, or active', () => {
    expect(describeState(incident({}))).toEqual(['active']);
    expect(
      describeState(
        incident({
          muted: {
            reason: 'inhibited',
            by: 'upstream-down',
            source: { type: 'monitor.upstream.degraded', subject: 'upstream/v1' },
          },
          acknowledged: true,
          acknowledgement: { by: 'ana', comment: 'on it', at: '', until: '', active: true, eventId: 'x' },
        }),
      ),
    ).toEqual([
      'inhibited by rule upstream-down (monitor.upstream.degraded on upstream/v1)',
      'acknowledged by ana',
    ]);
    expect(describeState(incident({ muted: { reason: 'silenced', by: 's-1' } }))).toEqual([
      'silenced (silence s-1)',
    ]);
    expect(describeState(incident({ muted: { reason: 'maintenance', by: 'night' } }))).toEqual([
      'in maintenance (night)',
    ]);
    expect(describeState(incident({ state: 'closed', closedBy: 'vehicle.vpn.connected' }))).toEqual([
      'closed by vehicle.vpn.connected',
    ]);
  });
});
