import type { Notification } from '../notifier.js';
import { DEFAULT_REDELIVERY_MS, type GroupState, isIdle, nextWakeAt } from './groups.js';

/**
 * What is stored per aggregation group: the routing module's pure `GroupState`, plus what the
 * worker needs around it — notifications made but not yet handed to delivery, since when the group
 * is idle, and when the flusher should look at it next (the wake set's score).
 *
 * `outgoing` is the hand-off outbox: a flush writes its notification here in the same state write
 * that moves the events out of `pending`, then hands it to the delivery queue (job id =
 * notification id), then removes it. A process killed in between leaves it here, and the next look
 * hands over the very same notification (same id, so the delivery queue keeps one job).
 */
export interface GroupRecord {
  state: GroupState;
  /** Notifications computed from `state` but not yet handed to delivery, oldest first. */
  outgoing: Notification[];
  /** When `outgoing` is tried again if the hand-off under way does not finish (process killed). */
  handOffRetryAt?: number;
  /** Epoch ms since which the group is idle (nothing pending, no open incident, nothing outgoing). */
  idleSince?: number;
  /** Epoch ms the flusher should look at the group next (the score in the wake set). */
  wakeAt?: number;
}

export interface WakePolicy {
  /** How long an interrupted hand-off waits before it is tried again (from the group's next look). */
  handOffRetryMs: number;
  /**
   * How long after its dispatch an event may come back to the notification step (a worker killed
   * mid-job, a dispatch retried after its back-off): a group remembers the ids it took that long
   * (groups.ts, "Exactly once"), and an idle group is deleted `max(group_interval, redeliveryMs)`
   * after it went idle, so a late redelivery is still recognised and not notified again. The
   * daemon sets it to `eventsRedeliveryMs(takeover_after)` (queues/names.ts).
   */
  redeliveryMs: number;
}

export const DEFAULT_WAKE_POLICY: WakePolicy = { handOffRetryMs: 5_000, redeliveryMs: DEFAULT_REDELIVERY_MS };

export function newRecord(state: GroupState): GroupRecord {
  return { state, outgoing: [] };
}

/** How long an idle group is kept before it is deleted. */
export function idleGrace(state: GroupState, policy: WakePolicy): number {
  return Math.max(state.groupInterval, policy.redeliveryMs);
}

/** True when the group has been idle for its whole grace: the flusher deletes it. */
export function idleExpired(record: GroupRecord, now: number, policy: WakePolicy): boolean {
  return (
    record.outgoing.length === 0 &&
    record.idleSince !== undefined &&
    isIdle(record.state) &&
    now >= record.idleSince + idleGrace(record.state, policy)
  );
}

/**
 * Recomputes `idleSince` and `wakeAt` after any change: the earliest of the next flush or reminder
 * (`nextWakeAt`) and the hand-off retry while something is outgoing; the end of the idle grace
 * when idle. A group is never left without a wake time, so no group can be forgotten.
 */
export function reschedule(record: GroupRecord, now: number, policy: WakePolicy): GroupRecord {
  const { idleSince: _idle, wakeAt: _wake, handOffRetryAt: _retry, ...rest } = record;
  const outgoing = record.outgoing.length > 0;
  if (outgoing) {
    const retryAt = record.handOffRetryAt ?? now + policy.handOffRetryMs;
    const wakeAt = Math.min(retryAt, nextWakeAt(record.state) ?? Number.POSITIVE_INFINITY);
    return { ...rest, handOffRetryAt: retryAt, wakeAt };
  }
  if (isIdle(record.state)) {
    const idleSince = record.idleSince ?? now;
    return { ...rest, idleSince, wakeAt: idleSince + idleGrace(record.state, policy) };
  }
  return { ...rest, wakeAt: nextWakeAt(record.state) ?? now + record.state.groupInterval };
}
