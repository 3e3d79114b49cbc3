import type { EventData, FleetEvent } from '../../../../src/events/types.js';
import type { Notification } from '../../../../src/notifiers/notifier.js';

/** Events as the commit writes them, around a fixed time, and notifications of them. */

export const BASE = Date.parse('2026-03-04T10:00:00.000Z');

export function at(offsetMs: number): string {
  return new Date(BASE + offsetMs).toISOString();
}

function fleetEvent(
  type: string,
  subject: string,
  data: EventData,
  offsetMs: number,
  id?: string,
): FleetEvent {
  return {
    specversion: '1.0',
    id: id ?? `evt-${type}-${subject}-${offsetMs}`,
    source: 'fleetwatch/production',
    type,
    subject,
    time: at(offsetMs),
    datacontenttype: 'application/json',
    data,
  };
}

export function vpnLost(vehicleId: string, offsetMs = 0): FleetEvent {
  return fleetEvent(
    'vehicle.vpn.disconnected',
    `vehicle/${vehicleId}`,
    {
      severity: 'warning',
      vehicleId,
      previous: 'connected',
      current: 'disconnected',
      since: at(offsetMs - 60_000),
      consecutive: 3,
    },
    offsetMs,
  );
}

export function vpnBack(vehicleId: string, offsetMs: number, startedAtOffsetMs = -60_000): FleetEvent {
  return fleetEvent(
    'vehicle.vpn.connected',
    `vehicle/${vehicleId}`,
    {
      severity: 'info',
      vehicleId,
      previous: 'disconnected',
      current: 'connected',
      since: at(startedAtOffsetMs),
      durationMs: offsetMs - startedAtOffsetMs,
    },
    offsetMs,
  );
}

export function acknowledged(vehicleId: string, offsetMs: number, untilOffsetMs: number): FleetEvent {
  return fleetEvent(
    'incident.acknowledged',
    'incident/vpn-veh-0001-1f2e3d4c',
    {
      severity: 'info',
      incident: 'vpn-veh-0001-1f2e3d4c',
      entity: `vehicle/${vehicleId}`,
      key: 'vpn',
      firing: 'vehicle.vpn.disconnected',
      since: at(-60_000),
      by: 'dana',
      comment: 'on it',
      until: at(untilOffsetMs),
    },
    offsetMs,
  );
}

export function removed(vehicleId: string, offsetMs: number): FleetEvent {
  return fleetEvent(
    'vehicle.removed',
    `vehicle/${vehicleId}`,
    { severity: 'warning', vehicleId, missingSince: at(offsetMs - 60_000), missedLists: 3 },
    offsetMs,
  );
}

export function configChanged(deviceId: string, offsetMs: number): FleetEvent {
  return fleetEvent(
    'robot.config.changed',
    `robot/${deviceId}`,
    {
      severity: 'info',
      deviceId,
      part: 'site',
      previous: 'north',
      current: 'south',
      summary: 'site north → south',
    },
    offsetMs,
  );
}

export function notificationOf(
  id: string,
  events: FleetEvent[],
  groupLabels: Record<string, string> = { type: events[0]?.type ?? '' },
): Notification {
  return {
    id,
    receiver: 'am',
    groupKey: `am~0~${id}`,
    groupLabels,
    status: 'firing',
    severity: 'warning',
    events,
    createdAt: at(30_000),
  };
}
