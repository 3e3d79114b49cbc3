import { describe, expect, it } from 'vitest';
import { findEntry } from '../../../../src/events/catalogue.js';
import {
  type AlertContext,
  parseStoredAlert,
  planAlerts,
  postable,
  type StoredAlert,
  tagLabels,
} from '../../../../src/notifiers/receivers/alertmanager/alerts.js';
import {
  acknowledged,
  at,
  BASE,
  configChanged,
  notificationOf,
  removed,
  vpnBack,
  vpnLost,
} from './fixtures.js';

const NOW = BASE + 30_000;
const WINDOW = 4 * 60_000;
const CONTEXT: AlertContext = { now: NOW, windowMs: WINDOW, consoleUrl: 'https://fw.example.com' };
const NONE = new Map<string, StoredAlert>();
const VPN = findEntry('vehicle.vpn.disconnected')?.description ?? '';

describe('alerts of a notification', () => {
  it('a firing incident: labels from the event and the group, annotations, startsAt when it began', () => {
    const plan = planAlerts(
      notificationOf('n1', [vpnLost('veh-0001')], { type: 'vehicle.vpn.disconnected', site: 'north' }),
      NONE,
      CONTEXT,
    );
    const link = 'https://fw.example.com/#/vehicle/veh-0001';
    expect(plan.alerts).toEqual([
      {
        labels: {
          alertname: 'vehicle.vpn.disconnected',
          subject: 'vehicle/veh-0001',
          severity: 'warning',
          installation: 'production',
          site: 'north',
        },
        annotations: {
          summary: 'veh-0001 is off the VPN: connected → disconnected',
          description: VPN,
          console: link,
        },
        startsAt: at(-60_000),
        endsAt: new Date(NOW + WINDOW).toISOString(),
        generatorURL: link,
      },
    ]);
    expect([...plan.writes.keys()]).toEqual(['vehicle/veh-0001#vpn']);
    expect(plan.writes.get('vehicle/veh-0001#vpn')).toMatchObject({ firedAt: BASE, startsAt: at(-60_000) });
    expect(plan.writes.get('vehicle/veh-0001#vpn')?.endsAt).toBeUndefined();
  });

  it('without console.url: no console annotation and no generatorURL', () => {
    const plan = planAlerts(notificationOf('n1', [vpnLost('veh-0001')]), NONE, {
      now: NOW,
      windowMs: WINDOW,
    });
    expect(plan.alerts[0]?.annotations).toEqual({
      summary: 'veh-0001 is off the VPN: connected → disconnected',
      description: VPN,
    });
    expect(plan.alerts[0]).not.toHaveProperty('generatorURL');
  });

  it('a resolution ends the stored alert at the resolving event, with the same labels and start', () => {
    const fired = planAlerts(notificationOf('n1', [vpnLost('veh-0001')], { site: 'north' }), NONE, CONTEXT);
    // The resolution comes in a group with other labels: the alert keeps the ones it fired with.
    const plan = planAlerts(notificationOf('n2', [vpnBack('veh-0001', 120_000)]), fired.writes, {
      ...CONTEXT,
      now: NOW + 120_000,
    });
    expect(plan.alerts).toHaveLength(1);
    expect(plan.alerts[0]?.labels).toEqual(fired.alerts[0]?.labels);
    expect(plan.alerts[0]?.startsAt).toBe(at(-60_000));
    expect(plan.alerts[0]?.endsAt).toBe(at(120_000));
    expect(plan.alerts[0]?.annotations.resolution).toBe(
      'veh-0001 is back on the VPN: disconnected → connected after 3m 00s',
    );
    expect(plan.writes.get('vehicle/veh-0001#vpn')).toMatchObject({
      endsAt: at(120_000),
      keepUntil: NOW + 120_000 + WINDOW,
    });
  });

  it('a resolution of an alert never pushed: the incident as it would have fired, ended at once', () => {
    const plan = planAlerts(notificationOf('n1', [vpnBack('veh-0002', 0, -300_000)]), NONE, CONTEXT);
    expect(plan.alerts).toEqual([
      expect.objectContaining({
        // The firing type, and the higher of the two severities (as routing's incident view).
        labels: {
          alertname: 'vehicle.vpn.disconnected',
          subject: 'vehicle/veh-0002',
          severity: 'warning',
          installation: 'production',
        },
        startsAt: at(-300_000),
        endsAt: at(0),
      }),
    ]);
  });

  it('firing and resolved in one notification: one alert, resolved', () => {
    const plan = planAlerts(
      notificationOf('n1', [vpnLost('veh-0001', 0), vpnBack('veh-0001', 10_000)]),
      NONE,
      CONTEXT,
    );
    expect(plan.alerts).toHaveLength(1);
    expect(plan.alerts[0]?.endsAt).toBe(at(10_000));
  });

  it('the same notification twice gives the same alert (Alertmanager merges it)', () => {
    const notification = notificationOf('n1', [vpnLost('veh-0001')]);
    const first = planAlerts(notification, NONE, CONTEXT);
    const again = planAlerts(notification, first.writes, CONTEXT);
    expect(again.alerts).toEqual(first.alerts);
    expect(again.writes).toEqual(first.writes);
  });

  it('a firing event from before the resolution (a replayed dead letter) brings nothing back', () => {
    const fired = planAlerts(notificationOf('n1', [vpnLost('veh-0001', 0)]), NONE, CONTEXT);
    const resolved = planAlerts(notificationOf('n2', [vpnBack('veh-0001', 60_000)]), fired.writes, CONTEXT);
    const replay = planAlerts(notificationOf('n1', [vpnLost('veh-0001', 0)]), resolved.writes, CONTEXT);
    expect(replay.alerts).toEqual([]);
    expect(replay.writes.size).toBe(0);
    // A new incident after the resolution fires a new alert.
    const again = planAlerts(notificationOf('n3', [vpnLost('veh-0001', 120_000)]), resolved.writes, CONTEXT);
    expect(again.alerts[0]?.startsAt).toBe(at(60_000));
    expect(again.writes.get('vehicle/veh-0001#vpn')?.endsAt).toBeUndefined();
  });

  it('an acknowledgement creates no alert; it annotates a firing one while it lasts', () => {
    const lone = planAlerts(
      notificationOf('n1', [acknowledged('veh-0001', 5_000, 3_600_000)]),
      NONE,
      CONTEXT,
    );
    expect(lone.alerts).toEqual([]);
    expect(lone.writes.size).toBe(0);

    const fired = planAlerts(notificationOf('n1', [vpnLost('veh-0001')]), NONE, CONTEXT);
    const plan = planAlerts(
      notificationOf('n2', [acknowledged('veh-0001', 5_000, 3_600_000)]),
      fired.writes,
      CONTEXT,
    );
    expect(plan.alerts).toHaveLength(1);
    expect(plan.alerts[0]?.labels).toEqual(fired.alerts[0]?.labels);
    expect(plan.alerts[0]?.annotations.acknowledged).toBe(`by dana until ${at(3_600_000)}: on it`);
    const stored = plan.writes.get('vehicle/veh-0001#vpn');
    if (!stored) throw new Error('the acknowledged alert was not stored');
    expect(postable(stored, { now: BASE + 3_600_001, windowMs: WINDOW }).annotations).not.toHaveProperty(
      'acknowledged',
    );
  });

  it('an event of no incident: alertname is its type, it fires once and ends a window later', () => {
    const plan = planAlerts(notificationOf('n1', [configChanged('rb-7', 0)]), NONE, CONTEXT);
    expect(plan.alerts).toEqual([
      expect.objectContaining({
        labels: {
          alertname: 'robot.config.changed',
          subject: 'robot/rb-7',
          severity: 'info',
          installation: 'production',
        },
        startsAt: at(0),
        endsAt: new Date(NOW + WINDOW).toISOString(),
        generatorURL: 'https://fw.example.com/#/robot/rb-7',
      }),
    ]);
    expect(plan.writes.size).toBe(0);
  });

  it('a removed vehicle ends every alert of its subject (it will never resolve them)', () => {
    const fired = planAlerts(notificationOf('n1', [vpnLost('veh-0001'), vpnLost('veh-0002')]), NONE, CONTEXT);
    const plan = planAlerts(notificationOf('n2', [removed('veh-0001', 90_000)]), fired.writes, CONTEXT);
    expect(plan.writes.get('vehicle/veh-0001#vpn')?.endsAt).toBe(at(90_000));
    expect(plan.writes.has('vehicle/veh-0002#vpn')).toBe(false);
    expect(plan.alerts.map((alert) => [alert.labels.alertname, alert.endsAt])).toEqual([
      ['vehicle.vpn.disconnected', at(90_000)],
      ['vehicle.removed', new Date(NOW + WINDOW).toISOString()],
    ]);
  });

  it('entity tags come from the group labels; built-in labels, empty values and our own names stay ours', () => {
    expect(
      tagLabels({
        type: 't',
        subject: 's',
        severity: 'info',
        kind: 'vehicle',
        incident: 'vpn',
        site: 'north',
        zone: '',
      }),
    ).toEqual({ site: 'north' });
    const plan = planAlerts(
      notificationOf('n1', [vpnLost('veh-0001')], { alertname: 'mine', installation: 'x', site: 'north' }),
      NONE,
      CONTEXT,
    );
    expect(plan.alerts[0]?.labels).toMatchObject({
      alertname: 'vehicle.vpn.disconnected',
      installation: 'production',
      site: 'north',
    });
  });

  it('reads back only what it stored', () => {
    const fired = planAlerts(notificationOf('n1', [vpnLost('veh-0001')]), NONE, CONTEXT);
    const stored = fired.writes.get('vehicle/veh-0001#vpn');
    expect(parseStoredAlert(JSON.stringify(stored))).toEqual(stored);
    expect(parseStoredAlert('not json')).toBeUndefined();
    expect(parseStoredAlert('{"labels":{}}')).toBeUndefined();
    expect(parseStoredAlert(null)).toBeUndefined();
  });
});
