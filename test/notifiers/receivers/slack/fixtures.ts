import type { EventData, FleetEvent, Severity } from '../../../../src/events/types.js';
import type { Notification } from '../../../../src/notifiers/notifier.js';

const BASE = Date.parse('2026-03-04T10:00:00.000Z');

export function vehicleId(index: number): string {
  return `veh-${String(index).padStart(4, '0')}`;
}

export function event(
  type: string,
  entity: string,
  data: Partial<EventData> & { severity: Severity },
  offsetMs = 0,
): FleetEvent {
  const kind = type.startsWith('robot.') ? 'robot' : type.startsWith('monitor.') ? 'upstream' : 'vehicle';
  const field = kind === 'robot' ? 'deviceId' : kind === 'upstream' ? 'upstream' : 'vehicleId';
  return {
    specversion: '1.0',
    id: `evt-${type}-${entity}-${offsetMs}`,
    source: 'fleetwatch/test',
    type,
    subject: `${kind}/${entity}`,
    time: new Date(BASE + offsetMs).toISOString(),
    datacontenttype: 'application/json',
    data: { ...data, [field]: entity } as EventData,
  };
}

export function vpnLost(entity: string, offsetMs = 0): FleetEvent {
  return event(
    'vehicle.vpn.disconnected',
    entity,
    {
      severity: 'warning',
      previous: 'connected',
      current: 'disconnected',
      since: new Date(BASE - 60_000 + offsetMs).toISOString(),
      consecutive: 3,
    },
    offsetMs,
  );
}

export function vpnBack(entity: string, offsetMs = 0): FleetEvent {
  return event(
    'vehicle.vpn.connected',
    entity,
    {
      severity: 'info',
      previous: 'disconnected',
      current: 'connected',
      since: new Date(BASE - 185_000 + offsetMs).toISOString(),
      durationMs: 185_000,
    },
    offsetMs,
  );
}

export function notification(events: FleetEvent[], overrides: Partial<Notification> = {}): Notification {
  const severities: Severity[] = ['info', 'warning', 'critical'];
  const severity = severities[Math.max(...events.map((item) => severities.indexOf(item.data.severity)), 0)];
  const first = events[0];
  return {
    id: 'ntf-0001',
    receiver: 'ops-slack',
    groupKey: first ? `type=${first.type}` : 'none',
    groupLabels: first ? { type: first.type } : {},
    status: 'firing',
    severity: severity ?? 'info',
    events,
    createdAt: '2026-03-04T10:00:30.000Z',
    ...overrides,
  };
}

export function vehicles(
  count: number,
  make: (id: string, index: number) => FleetEvent = vpnLost,
): FleetEvent[] {
  return Array.from({ length: count }, (_, index) => make(vehicleId(index + 1), index));
}

/** `incident.acknowledged` of `entity`'s VPN incident, by dana. */
export function acknowledged(entity: string, offsetMs = 0): FleetEvent {
  const incident = `vpn-${entity}-0a0b0c0d`;
  return {
    specversion: '1.0',
    id: `evt-ack-${entity}-${offsetMs}`,
    source: 'fleetwatch/test',
    type: 'incident.acknowledged',
    subject: `incident/${incident}`,
    time: new Date(BASE + offsetMs).toISOString(),
    datacontenttype: 'application/json',
    data: {
      severity: 'info',
      incident,
      entity: `vehicle/${entity}`,
      key: 'vpn',
      firing: 'vehicle.vpn.disconnected',
      since: new Date(BASE - 60_000).toISOString(),
      by: 'dana',
      comment: 'on it',
      until: new Date(BASE + 7_200_000).toISOString(),
    },
  };
}
