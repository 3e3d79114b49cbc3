import { randomBytes } from 'node:crypto';
import { type DestinationStream, pino } from 'pino';
import type { FleetEvent } from '../../../../src/events/types.js';
import type { Logger } from '../../../../src/log/logger.js';
import type { Notification } from '../../../../src/notifiers/notifier.js';
import {
  type WebhookReceiverConfig,
  webhookReceiverSchema,
} from '../../../../src/notifiers/receivers/webhook/config.js';

/** A fresh `whsec_` secret of `bytes` random bytes. */
export function newSecret(bytes = 32): string {
  return `whsec_${randomBytes(bytes).toString('base64')}`;
}

export function vpnEvent(vehicleId: string, version = 1): FleetEvent {
  return {
    specversion: '1.0',
    id: `evt-${vehicleId}-vpn-${version}`,
    source: 'fleetwatch/test',
    type: 'vehicle.vpn.disconnected',
    subject: `vehicle/${vehicleId}`,
    time: '2026-03-01T12:00:00.000Z',
    datacontenttype: 'application/json',
    data: { severity: 'warning', previous: true, current: false, vehicleId, note: 'Zürich depot ✓' },
  };
}

export function notificationOf(events: FleetEvent[], id = 'ntf-0001'): Notification {
  return {
    id,
    receiver: 'ops-bridge',
    groupKey: 'type=vehicle.vpn.disconnected',
    groupLabels: { type: 'vehicle.vpn.disconnected' },
    status: 'firing',
    severity: 'warning',
    events,
    createdAt: '2026-03-01T12:00:05.000Z',
  };
}

/** A receiver config as the schema returns it, from the fields a test cares about. */
export function webhookConfig(
  fields: Partial<Record<keyof WebhookReceiverConfig, unknown>>,
): WebhookReceiverConfig {
  return webhookReceiverSchema.parse({ kind: 'webhook', name: 'ops-bridge', ...fields });
}

/** A pino logger at trace level that keeps every line it writes, unscrubbed. */
export function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination: DestinationStream = { write: (line: string) => void lines.push(line) };
  return { logger: pino({ level: 'trace' }, destination), lines };
}
