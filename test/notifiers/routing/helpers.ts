import { catalogueEntry, isFleetEventType } from '../../../src/events/catalogue.js';
import type { FleetEvent, Severity } from '../../../src/events/types.js';
import type { RouteMatch } from '../../../src/notifiers/routing/router.js';

export const T0 = Date.parse('2025-03-01T12:00:00.000Z');
export const SECOND = 1_000;
export const MINUTE = 60_000;
export const HOUR = 3_600_000;

let counter = 0;

/** A CloudEvent of `type` about `subject`; severity defaults to the catalogue's. */
export function fleetEvent(
  type: string,
  subject: string,
  options: { id?: string; time?: number; severity?: Severity } = {},
): FleetEvent {
  counter += 1;
  const severity =
    options.severity ?? (isFleetEventType(type) ? catalogueEntry(type).severity : ('info' as Severity));
  return {
    specversion: '1.0',
    id: options.id ?? `evt-${counter}`,
    source: 'fleetwatch/test',
    type,
    subject,
    time: new Date(options.time ?? T0).toISOString(),
    datacontenttype: 'application/json',
    data: { severity },
  };
}

export function vpnLost(vehicle: string, options: { id?: string; time?: number } = {}): FleetEvent {
  return fleetEvent('vehicle.vpn.disconnected', `vehicle/${vehicle}`, options);
}

export function vpnBack(vehicle: string, options: { id?: string; time?: number } = {}): FleetEvent {
  return fleetEvent('vehicle.vpn.connected', `vehicle/${vehicle}`, options);
}

export function routeMatch(overrides: Partial<RouteMatch> = {}): RouteMatch {
  return {
    routeId: '0',
    receiver: 'ops',
    groupBy: ['type'],
    groupWait: 30 * SECOND,
    groupInterval: 5 * MINUTE,
    repeatInterval: 4 * HOUR,
    sendResolved: true,
    ...overrides,
  };
}

/** Plain JSON: survives a round trip through JSON (as through Redis) unchanged. */
export function roundTrip<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
