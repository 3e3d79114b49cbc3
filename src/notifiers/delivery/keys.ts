import { encodeSegment, hashTag } from '../../store/keys.js';

/**
 * Redis keys of delivery (next to BullMQ's own `{p}:notify-<receiver>:…`), under the same
 * `{<prefix>}` hash tag as every other fleetwatch key:
 *
 * ```
 * {p}:delivered:<receiver>:<notification id>   string  delivered marker (epoch ms), EX 1 day
 * {p}:receiver:<name>:disabled                 hash    reason, kind, at, episode, status
 * ```
 */
export interface DeliveryKeys {
  delivered(receiver: string, notificationId: string): string;
  receiverDisabled(receiver: string): string;
}

export function deliveryKeys(prefix: string): DeliveryKeys {
  const tag = hashTag(prefix);
  return {
    delivered: (receiver, id) => `${tag}:delivered:${encodeSegment(receiver)}:${encodeSegment(id)}`,
    receiverDisabled: (receiver) => `${tag}:receiver:${encodeSegment(receiver)}:disabled`,
  };
}
