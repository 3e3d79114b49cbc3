import type { FleetEvent } from '../../src/events/types.js';
import { incidentOf } from '../../src/notifiers/routing/labels.js';
import type { EventLogEntry } from '../../src/store/event-log.js';
import type { VerifiedDelivery } from '../support/webhook-receiver.js';

/**
 * Whether each entity's events reached the receiver in the order they were committed (Guarantee 6).
 * Compared within one subject and one incident (a fire and its resolve) or, for events that belong
 * to no incident, one type (a lease holder chain, an address chain): events of different types
 * travel in different groups, which flush on their own timers, so their relative order is not
 * promised. An event counts as reordered when the receiver first accepted it after a later-committed
 * event of its class. Events that reached the receiver only in `replayed` notifications (dead
 * letters sent again, which go to the end of the queue by design) are left out.
 */
export function reorderedEvents(
  /** The event log, in commit order. */
  entries: readonly EventLogEntry[],
  /** The requests the receiver answered with a 2xx, in arrival order. */
  accepted: readonly VerifiedDelivery[],
  replayed: ReadonlySet<string> = new Set(),
): string[] {
  const classOf = (event: FleetEvent) => `${event.subject} ${incidentOf(event.type)?.key ?? event.type}`;
  const position = new Map<string, number>();
  entries.forEach(({ event }, index) => {
    if (!position.has(event.id)) position.set(event.id, index);
  });
  const latest = new Map<string, { index: number; event: FleetEvent }>();
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const delivery of accepted) {
    if (replayed.has(delivery.webhookId)) continue;
    for (const event of delivery.events) {
      if (seen.has(event.id)) continue;
      seen.add(event.id);
      const index = position.get(event.id);
      if (index === undefined) continue;
      const key = classOf(event);
      const before = latest.get(key);
      if (before && before.index > index) {
        problems.push(
          `${event.subject}: ${event.type} ${event.id} after the later ${before.event.type} ${before.event.id}`,
        );
        continue;
      }
      latest.set(key, { index, event });
    }
  }
  return problems;
}
