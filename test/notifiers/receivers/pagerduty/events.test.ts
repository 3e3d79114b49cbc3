import { describe, expect, it } from 'vitest';
import type { FleetEvent } from '../../../../src/events/types.js';
import {
  boundedSummary,
  DEFAULT_SEVERITY_MAP,
  dedupKey,
  type PlannedEvent,
  planEvents,
} from '../../../../src/notifiers/receivers/pagerduty/index.js';
import { validateEvent } from '../../../support/pagerduty-standin.js';
import { acknowledged, event, notification, vpnBack, vpnLost } from '../slack/fixtures.js';

const OPTIONS = { severityMap: DEFAULT_SEVERITY_MAP, changes: 'trigger' as const };
const ROUTING_KEY = 'a'.repeat(32);

function plan(events: FleetEvent[], options: Partial<Parameters<typeof planEvents>[1]> = {}): PlannedEvent[] {
  const planned = planEvents(notification(events), { ...OPTIONS, ...options });
  // Every planned event is one PagerDuty takes, read by the stand-in's independent rules.
  for (const item of planned)
    expect(validateEvent({ routing_key: ROUTING_KEY, ...item }, ROUTING_KEY)).toEqual([]);
  return planned;
}

const actions = (planned: PlannedEvent[]) => planned.map((item) => [item.event_action, item.dedup_key]);

describe('planEvents: one PagerDuty alert per incident', () => {
  it('triggers a firing event under the incident’s key in its installation, with the event as details', () => {
    const [trigger] = plan([vpnLost('veh-0003')]);
    expect(trigger).toEqual({
      event_action: 'trigger',
      dedup_key: 'test/vehicle/veh-0003#vpn',
      client: 'fleetwatch',
      payload: {
        summary: 'veh-0003 is off the VPN: connected → disconnected',
        source: 'vehicle/veh-0003',
        severity: 'warning',
        timestamp: '2026-03-04T10:00:00.000Z',
        component: 'vehicle',
        group: 'test',
        class: 'vehicle.vpn.disconnected',
        custom_details: expect.objectContaining({
          event_id: 'evt-vehicle.vpn.disconnected-veh-0003-0',
          type: 'vehicle.vpn.disconnected',
          subject: 'vehicle/veh-0003',
          incident: 'vehicle/veh-0003#vpn',
          data: expect.objectContaining({ consecutive: 3, current: 'disconnected' }),
        }),
      },
    });
  });

  it('resolves with the resolving event and acknowledges with incident.acknowledged, on the same key', () => {
    expect(actions(plan([vpnBack('veh-0003')]))).toEqual([['resolve', 'test/vehicle/veh-0003#vpn']]);
    expect(actions(plan([acknowledged('veh-0003')]))).toEqual([['acknowledge', 'test/vehicle/veh-0003#vpn']]);
  });

  it('keeps two installations on one routing key apart', () => {
    const other = { ...vpnLost('veh-0003'), source: 'fleetwatch/staging' };
    expect(actions(plan([vpnLost('veh-0003'), other]))).toEqual([
      ['trigger', 'test/vehicle/veh-0003#vpn'],
      ['trigger', 'staging/vehicle/veh-0003#vpn'],
    ]);
  });

  it('sends each incident once, in the order the incidents first appear', () => {
    const planned = plan([vpnLost('veh-0001'), vpnLost('veh-0002', 1_000), acknowledged('veh-0001', 2_000)]);
    expect(actions(planned)).toEqual([
      ['trigger', 'test/vehicle/veh-0001#vpn'],
      ['acknowledge', 'test/vehicle/veh-0001#vpn'],
      ['trigger', 'test/vehicle/veh-0002#vpn'],
    ]);
  });

  it('sends an incident that fired and resolved within the notification as its resolve only', () => {
    expect(actions(plan([vpnLost('veh-0001'), vpnBack('veh-0001', 5_000)]))).toEqual([
      ['resolve', 'test/vehicle/veh-0001#vpn'],
    ]);
  });

  it('resolves, then triggers again, an incident that resolved and fired again', () => {
    const again = vpnLost('veh-0001', 9_000);
    const planned = plan([vpnBack('veh-0001'), again]);
    expect(actions(planned)).toEqual([
      ['resolve', 'test/vehicle/veh-0001#vpn'],
      ['trigger', 'test/vehicle/veh-0001#vpn'],
    ]);
    expect(planned[1]?.payload?.timestamp).toBe(again.time);
  });

  it('drops an acknowledgement of an incident the notification closed', () => {
    expect(actions(plan([acknowledged('veh-0001'), vpnBack('veh-0001', 1_000)]))).toEqual([
      ['resolve', 'test/vehicle/veh-0001#vpn'],
    ]);
  });

  it('triggers a change under a key of its own, or skips it with changes: skip', () => {
    const power = event('vehicle.power.changed', 'veh-0004', {
      severity: 'info',
      previous: 'off',
      current: 'on',
    });
    expect(actions(plan([power]))).toEqual([['trigger', `test/event/${power.id}`]]);
    expect(plan([power], { changes: 'skip' })).toEqual([]);
  });

  it('resolves every incident a vehicle can have when it is removed', () => {
    const removed = event('vehicle.removed', 'veh-0005', { severity: 'warning' });
    const planned = plan([vpnLost('veh-0005'), removed], { changes: 'skip' });
    expect(actions(planned)).toEqual([
      ['resolve', 'test/vehicle/veh-0005#vpn'],
      ['resolve', 'test/vehicle/veh-0005#stuck'],
      ['resolve', 'test/vehicle/veh-0005#stale'],
      ['resolve', 'test/vehicle/veh-0005#reachability'],
    ]);
  });

  it('maps severities, with the receiver’s overrides', () => {
    const down = event('robot.health.down', 'rb-1', {
      severity: 'critical',
      previous: 'ok',
      current: 'down',
    });
    expect(plan([down])[0]?.payload?.severity).toBe('critical');
    expect(
      plan([vpnLost('veh-1')], { severityMap: { ...DEFAULT_SEVERITY_MAP, warning: 'error' } })[0]?.payload
        ?.severity,
    ).toBe('error');
  });

  it('links a trigger to the entity and the Incidents page of the console when console.url is set', () => {
    const [trigger] = plan([vpnLost('veh 7')], { consoleUrl: 'https://fw.example.com/ops' });
    expect(trigger?.client_url).toBe('https://fw.example.com/ops');
    expect(trigger?.links).toEqual([
      { href: 'https://fw.example.com/ops/#/vehicle/veh%207', text: 'vehicle veh 7 in fleetwatch' },
      { href: 'https://fw.example.com/ops/#/incidents', text: 'open incidents in fleetwatch' },
    ]);
    expect(plan([vpnLost('veh-7')])[0]).not.toHaveProperty('links');
  });
});

describe('PagerDuty’s limits', () => {
  it('cuts a summary to 1,024 characters without splitting one', () => {
    expect(boundedSummary('short')).toBe('short');
    const cut = boundedSummary('🚗'.repeat(2_000));
    expect([...cut]).toHaveLength(1_024);
    expect(cut.endsWith('🚗…')).toBe(true);
  });

  it('replaces a dedup key over 255 characters by its hash', () => {
    const long = vpnLost('v'.repeat(300));
    const key = dedupKey(long, `vehicle/${'v'.repeat(300)}#vpn`);
    expect(key).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(plan([long])[0]?.dedup_key).toBe(key);
  });

  it('leaves out event data too large for custom_details, keeping the event’s identity', () => {
    const huge = event('robot.config.changed', 'rb-1', {
      severity: 'info',
      blob: 'x'.repeat(70_000),
    } as never);
    const details = plan([huge])[0]?.payload?.custom_details;
    expect(details).toMatchObject({ event_id: huge.id, type: 'robot.config.changed' });
    expect(details?.data).toMatch(/^left out: \d+ bytes of JSON; the event log has event /);
  });
});
