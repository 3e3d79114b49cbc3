import type { FleetEvent } from './types.js';

/** What each event type says in a sentence, after the entity's name. */
const PHRASES: Record<string, string> = {
  'vehicle.discovered': 'appeared in the vehicle list',
  'vehicle.removed': 'left the vehicle list',
  'vehicle.vpn.disconnected': 'lost its VPN connection',
  'vehicle.vpn.connected': 'is back on the VPN',
  'vehicle.ip.changed': 'changed VPN address',
  'vehicle.power.changed': 'reports a new power state',
  'vehicle.power.command.pending': 'has a power command pending',
  'vehicle.power.command.completed': 'completed its power command',
  'vehicle.power.command.failed': 'dropped its power command without reaching the state',
  'vehicle.power.command.stuck': 'has a power command stuck pending',
  'vehicle.power.command.unstuck': 'no longer has a stuck power command',
  'vehicle.power.report.stale': 'has not reported its power state recently',
  'vehicle.power.report.fresh': 'reports its power state again',
  'vehicle.power.unsupported': 'no longer supports power control',
  'vehicle.unreachable': 'is unreachable',
  'vehicle.reachable': 'is reachable again',
  'robot.discovered': 'appeared in the robot list',
  'robot.removed': 'left the robot list',
  'robot.health.down': 'fails its health check',
  'robot.health.up': 'passes its health check again',
  'robot.autonomy.changed': 'changed autonomy state',
  'robot.navigation.changed': 'changed navigation status',
  'robot.state.changed': 'changed vehicle state',
  'robot.lease.changed': 'changed teleoperation lease holder',
  'robot.config.changed': 'changed its loaded configuration',
  'monitor.upstream.degraded': 'is failing',
  'monitor.upstream.recovered': 'has recovered',
  'monitor.receiver.disabled': 'was disabled: it answered that it is gone for good',
};

/** Types whose previous/current are not for people (hashes) or repeat the phrase. */
const HIDES_VALUES = new Set(['robot.config.changed', 'vehicle.power.command.stuck']);

/** A `previous`/`current` value for people: status pairs by their text, absent as `none`. */
export function renderValue(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const text = record.text ?? record.status_text ?? record.status;
    if (typeof text === 'string' || typeof text === 'number') return String(text);
    return JSON.stringify(value);
  }
  return String(value);
}

/** `1h 02m`, `3m 05s`, `12s`: how long an incident lasted. */
export function describeDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, '0')}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h ${String(minutes % 60).padStart(2, '0')}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

/**
 * One human sentence for an event: `veh-0003 lost its VPN connection`, `veh-0003 reports a new power
 * state: off → on`. Used by the console printer and as the plain-text fallback of notifications.
 */
export function describeEvent(event: Pick<FleetEvent, 'type' | 'subject' | 'data'>): string {
  const entity = event.subject.slice(event.subject.indexOf('/') + 1);
  const phrase = PHRASES[event.type] ?? event.type;
  const data = event.data;
  const part = typeof data.part === 'string' ? ` (${data.part})` : '';
  const change =
    'previous' in data && 'current' in data && !HIDES_VALUES.has(event.type)
      ? `: ${renderValue(data.previous)} → ${renderValue(data.current)}`
      : typeof data.requested === 'string'
        ? `: power ${data.requested}`
        : '';
  const duration = typeof data.durationMs === 'number' ? ` after ${describeDuration(data.durationMs)}` : '';
  return `${entity} ${phrase}${part}${change}${duration}`;
}
