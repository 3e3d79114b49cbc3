import type { FleetEvent } from '../../src/events/types.js';
import type { EventLogEntry } from '../../src/store/event-log.js';
import { type EventKey, eventKey } from '../support/scenario.js';
import type { VerifiedDelivery } from '../support/webhook-receiver.js';

/**
 * Accounting from the change to the receiver: what was expected in the event log (one entry per
 * scripted change), what the log holds, and what the webhook receiver accepted. Every way an event
 * can go missing or come twice is listed by name, so a failing scenario says which one it was.
 */

export interface LedgerInput {
  /** `<type> <subject>` → how many events the scripted changes must have caused. */
  expected: ReadonlyMap<EventKey, number>;
  /** The whole event log. */
  entries: readonly EventLogEntry[];
  /** Requests the receiver answered with a 2xx, in arrival order. */
  accepted: readonly VerifiedDelivery[];
  /**
   * Logged events no scripted change caused but the injected fault legitimately does (a storm
   * making vehicles unreachable). They must still be delivered exactly once.
   */
  tolerated?: (event: FleetEvent) => boolean;
  /** Logged event ids kept out of notifications on purpose (inhibited, silenced) → why. */
  muted?: ReadonlyMap<string, string>;
}

export interface Ledger {
  eventsLogged: number;
  eventsDelivered: number;
  requestsAccepted: number;
  /** Expected keys the log holds fewer times than expected: `key (logged n of m)`. */
  unlogged: string[];
  unloggedCount: number;
  /** Logged event ids the receiver never accepted (those kept out on purpose excepted). */
  undelivered: string[];
  /** Logged events kept out of notifications on purpose, by why (`inhibited`, `silenced`, …). */
  muted: Map<string, number>;
  /** Expected keys logged more often than expected. */
  loggedTwice: string[];
  loggedTwiceCount: number;
  /** Event ids that stand in the log more than once. */
  sameIdLoggedTwice: string[];
  /** Event ids accepted in more than one notification (distinct webhook-ids). */
  deliveredTwice: string[];
  /** webhook-ids accepted more than once: the same notification sent again (at least once). */
  redelivered: string[];
  /** Logged events neither expected nor tolerated: invented state. */
  unexpected: string[];
  /** Tolerated (fault-caused) events by type. */
  tolerated: Map<string, number>;
  /** Accepted event ids that are not in the log. */
  unknownDelivered: string[];
  lost: number;
  duplicated: number;
}

export function reckon({ expected, entries, accepted, tolerated, muted }: LedgerInput): Ledger {
  const logged = new Map<EventKey, number>();
  const idsLogged = new Map<string, number>();
  const unexpected: string[] = [];
  const toleratedTypes = new Map<string, number>();
  for (const { event } of entries) {
    const key = eventKey(event.type, event.subject);
    logged.set(key, (logged.get(key) ?? 0) + 1);
    idsLogged.set(event.id, (idsLogged.get(event.id) ?? 0) + 1);
  }
  for (const { event } of entries) {
    const key = eventKey(event.type, event.subject);
    if (expected.has(key)) continue;
    if (tolerated?.(event)) toleratedTypes.set(event.type, (toleratedTypes.get(event.type) ?? 0) + 1);
    else unexpected.push(`${key} (${event.id})`);
  }

  const unlogged: string[] = [];
  const loggedTwice: string[] = [];
  let unloggedCount = 0;
  let loggedTwiceCount = 0;
  for (const [key, want] of expected) {
    const seen = logged.get(key) ?? 0;
    if (seen < want) {
      unlogged.push(`${key} (logged ${seen} of ${want})`);
      unloggedCount += want - seen;
    }
    if (seen > want) {
      loggedTwice.push(`${key} (logged ${seen}, expected ${want})`);
      loggedTwiceCount += seen - want;
    }
  }
  const sameIdLoggedTwice = [...idsLogged].filter(([, n]) => n > 1).map(([id, n]) => `${id} ×${n}`);

  // Which notifications (webhook-ids) carried each event id, and how often each was accepted.
  const carriers = new Map<string, Set<string>>();
  const acceptances = new Map<string, number>();
  for (const delivery of accepted) {
    acceptances.set(delivery.webhookId, (acceptances.get(delivery.webhookId) ?? 0) + 1);
    for (const event of delivery.events) {
      const set = carriers.get(event.id) ?? new Set<string>();
      set.add(delivery.webhookId);
      carriers.set(event.id, set);
    }
  }
  const deliveredTwice = [...carriers]
    .filter(([, notifications]) => notifications.size > 1)
    .map(([id, notifications]) => `${id} in ${[...notifications].join(', ')}`);
  const redelivered = [...acceptances].filter(([, n]) => n > 1).map(([id, n]) => `${id} ×${n}`);
  const undelivered = [...idsLogged.keys()].filter((id) => !carriers.has(id) && !muted?.has(id));
  const mutedReasons = new Map<string, number>();
  for (const id of idsLogged.keys()) {
    const reason = carriers.has(id) ? undefined : muted?.get(id);
    if (reason) mutedReasons.set(reason, (mutedReasons.get(reason) ?? 0) + 1);
  }
  const unknownDelivered = [...carriers.keys()].filter((id) => !idsLogged.has(id));

  return {
    eventsLogged: entries.length,
    eventsDelivered: carriers.size,
    requestsAccepted: accepted.length,
    unlogged,
    unloggedCount,
    undelivered,
    muted: mutedReasons,
    loggedTwice,
    loggedTwiceCount,
    sameIdLoggedTwice,
    deliveredTwice,
    redelivered,
    unexpected,
    tolerated: toleratedTypes,
    unknownDelivered,
    lost: unloggedCount + undelivered.length,
    duplicated: loggedTwiceCount + sameIdLoggedTwice.length + deliveredTwice.length,
  };
}

/** The ledger's findings, for a failure message and the report's notes (empty lists left out). */
export function describeLedger(ledger: Ledger, limit = 10): string[] {
  const list = (label: string, items: readonly string[]) =>
    items.length === 0
      ? []
      : [
          `${label} (${items.length}): ${items.slice(0, limit).join('; ')}${items.length > limit ? '; …' : ''}`,
        ];
  return [
    ...list('expected but not logged', ledger.unlogged),
    ...list('logged but never accepted by the receiver', ledger.undelivered),
    ...list('logged more often than changed', ledger.loggedTwice),
    ...list('event ids logged twice', ledger.sameIdLoggedTwice),
    ...list('accepted in more than one notification', ledger.deliveredTwice),
    ...list('logged without a change (invented)', ledger.unexpected),
    ...list('accepted but not in the log', ledger.unknownDelivered),
    ...list('same notification accepted again (same webhook-id)', ledger.redelivered),
  ];
}
