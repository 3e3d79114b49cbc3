import { type FleetEventType, isFleetEventType } from '../../events/catalogue.js';

/**
 * What a group of entities did, in the plural: `40 vehicles lost their VPN connection`. The
 * singular sentence of one event is `describeEvent`'s; keyed by the catalogue so a new event type
 * does not compile until it has words here too.
 */
const GROUP_PHRASES: Record<FleetEventType, string> = {
  'vehicle.discovered': 'appeared in the vehicle list',
  'vehicle.removed': 'left the vehicle list',
  'vehicle.vpn.disconnected': 'lost their VPN connection',
  'vehicle.vpn.connected': 'are back on the VPN',
  'vehicle.ip.changed': 'changed VPN address',
  'vehicle.power.changed': 'report a new power state',
  'vehicle.power.command.pending': 'have a power command pending',
  'vehicle.power.command.completed': 'completed their power command',
  'vehicle.power.command.failed': 'dropped their power command without reaching the state',
  'vehicle.power.command.stuck': 'have a power command stuck pending',
  'vehicle.power.command.unstuck': 'no longer have a stuck power command',
  'vehicle.power.report.stale': 'have not reported their power state recently',
  'vehicle.power.report.fresh': 'report their power state again',
  'vehicle.power.unsupported': 'no longer support power control',
  'vehicle.unreachable': 'are unreachable',
  'vehicle.reachable': 'are reachable again',
  'robot.discovered': 'appeared in the robot list',
  'robot.removed': 'left the robot list',
  'robot.health.down': 'fail their health check',
  'robot.health.up': 'pass their health check again',
  'robot.autonomy.changed': 'changed autonomy state',
  'robot.navigation.changed': 'changed navigation status',
  'robot.state.changed': 'changed vehicle state',
  'robot.lease.changed': 'changed teleoperation lease holder',
  'robot.config.changed': 'changed their loaded configuration',
  'monitor.upstream.degraded': 'are failing',
  'monitor.upstream.recovered': 'have recovered',
  'monitor.receiver.disabled': 'were disabled: they answered that they are gone for good',
};

export interface Noun {
  /** Field labels: `Vehicle`, `Vehicles`. */
  label: string;
  labelMany: string;
  one: string;
  many: string;
}

const NOUNS: Record<string, Noun> = {
  vehicle: { label: 'Vehicle', labelMany: 'Vehicles', one: 'vehicle', many: 'vehicles' },
  robot: { label: 'Robot', labelMany: 'Robots', one: 'robot', many: 'robots' },
  upstream: { label: 'Upstream', labelMany: 'Upstreams', one: 'upstream', many: 'upstreams' },
  receiver: { label: 'Receiver', labelMany: 'Receivers', one: 'receiver', many: 'receivers' },
};
const ENTITY: Noun = { label: 'Entity', labelMany: 'Entities', one: 'entity', many: 'entities' };

/** The entity an event is about, from its `subject` (`vehicle/veh-0003` → vehicle, veh-0003). */
export function entityOf(subject: string): { kind: string; id: string; noun: Noun } {
  const slash = subject.indexOf('/');
  const kind = slash === -1 ? '' : subject.slice(0, slash);
  return { kind, id: subject.slice(slash + 1), noun: NOUNS[kind] ?? ENTITY };
}

/** `40 vehicles lost their VPN connection`; `1 vehicle …` is left to `describeEvent`. */
export function groupPhrase(type: string, count: number, noun: Noun): string {
  const what = count === 1 ? noun.one : noun.many;
  if (!isFleetEventType(type)) return `${count} ${what}: ${type}`;
  return `${count} ${what} ${GROUP_PHRASES[type]}`;
}
