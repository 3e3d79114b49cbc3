import type { Logger } from 'pino';
import type { FleetEvent } from '../../events/types.js';
import { throttledWarn } from '../../lib/redis-connection.js';
import { type DeliveryQueue, enqueueDelivery } from '../delivery/delivery-queue.js';
import type { FiringIncidents } from '../muting/firing-incidents.js';
import type { MuteMarks } from '../muting/mute-marks.js';
import type { Judgement, Muted, Mutes } from '../muting/mutes.js';
import type { Notification } from '../notifier.js';
import { type GroupRecord, idleExpired, reschedule, type WakePolicy } from './group-record.js';
import type { GroupStore } from './group-store.js';
import { dueAt, flush, reminders } from './groups.js';

/**
 * The second half of the notification step: groups that are due become notifications on their
 * receiver's delivery queue.
 *
 * Waking. Every group's next look is the score of its key in the wake set `{p}:notify:wake`,
 * written in the same compare-and-set as the group itself, so a stored group always has a wake
 * time. Each replica's flusher claims due keys with one Lua call that also pushes their score
 * `leaseMs` ahead (a lease): replicas share the work without taking the same group twice, and a
 * group whose flusher died comes due again when the lease runs out. The set is polled every
 * `pollMs` (1 s); a wake time written by this process's dispatcher also arms a timer for exactly
 * then (`hint`), so a 30 s `group_wait` is kept to the millisecond on the replica that saw the
 * event, and to within `pollMs` on any other. A group that comes due while a look is under way
 * gets a look of its own at once (up to `MAX_LOOKS` in parallel), not a place behind that look's
 * groups. And a group this process's dispatcher scheduled is claimed by its key when it comes due
 * (`GroupStore.claim`) and flushed by itself: a look claims due groups oldest first, so in a look
 * a new event's group came after every group due before it (idle groups to delete, reminders),
 * and at 40,000 entities that cost its notification up to 140 ms.
 *
 * One look at a group, in two writes around the hand-off (each without a read of its own: the
 * group store remembers the version it read when the group was claimed, then the one it wrote):
 * 0. the events the look may send are judged by the muting mechanism (`Mutes.judge`: silenced, in
 *    maintenance, inhibited, or waiting until the inhibition source is known);
 * 1. compare-and-set: `flush` (pending events → one notification; muted ones kept out, the whole
 *    flush waits while an event does) and `reminders` (open incidents due again, muted ones put off
 *    by `group_interval`) go into `outgoing`, together with the new state — so the events leave
 *    `pending` in the same write that records the notification;
 * 2. every `outgoing` notification is handed to `enqueueDelivery` (job id = notification id);
 * 3. compare-and-set: the handed-over ids leave `outgoing`; the wake time is recomputed.
 * Killed between 1 and 3, the group wakes again `handOffRetryMs` later and step 2 hands over the
 * same notifications again: same ids, so the delivery queue keeps one job each; none is lost, and
 * no second one is made because `pending` was already emptied in step 1.
 *
 * An idle group (nothing pending, no open incident, nothing outgoing) is deleted once its idle
 * grace (`max(group_interval, redeliveryMs)`) has passed.
 */

/** Looks at the wake set that may run at once in one process (see `#tick`). */
const MAX_LOOKS = 4;
/**
 * Groups this process's dispatcher scheduled that wait for a look of their own (see `hint`): at most
 * this many at once, each due within `OWN_LOOK_WITHIN_MS`; the others wait for the next look.
 */
const MAX_OWN_LOOKS = 10_000;
const OWN_LOOK_WITHIN_MS = 300_000;

export interface FlusherHooks {
  /** Just before a notification is handed to delivery; throwing aborts the hand-off (tests: a crash). */
  beforeHandOff?(notification: Notification): void | Promise<void>;
  /** A notification is on its receiver's delivery queue. */
  onHandedOff?(notification: Notification): void;
  /** A notification for a receiver that has no delivery queue (removed from the config) was dropped. */
  onDropped?(notification: Notification): void;
  /** An idle group was deleted. */
  onGroupDeleted?(groupKey: string): void;
  /** A pending event was found muted when its group was flushed (once per event). */
  onSuppressed?(suppressed: Muted & { event: FleetEvent }): void;
}

/**
 * The groups both halves of the notification step (dispatcher and flusher) work on: where they are
 * stored, who is muted, when a group wakes, and the clock. Built once, shared by both.
 */
export interface GroupContext {
  store: GroupStore;
  mutes: Mutes;
  policy: WakePolicy;
  now: () => number;
  /** Where the dispatcher records incidents (inhibition's sources); absent: none are recorded. */
  incidents?: FiringIncidents;
  /** Where muted events are marked for the API; absent: not marked. */
  marks?: MuteMarks;
}

export interface FlusherOptions {
  groups: GroupContext;
  /** Delivery queue per receiver name. */
  queues: ReadonlyMap<string, DeliveryQueue>;
  logger?: Logger;
  hooks?: FlusherHooks;
  /** How often the wake set is polled; 1 s by default. */
  pollMs?: number;
  /** How long a claimed group is kept from other flushers; 30 s by default. */
  leaseMs?: number;
  /** Groups claimed per call; 100 by default. */
  batchSize?: number;
  /** Groups looked at in parallel; 8 by default. */
  concurrency?: number;
}

export type GroupFlushResult =
  | { kind: 'missing' }
  | { kind: 'deleted' }
  | { kind: 'flushed'; made: Notification[]; handedOff: Notification[] };

type Taken =
  | { kind: 'missing' }
  | { kind: 'deleted' }
  | { kind: 'ready'; made: Notification[]; outgoing: Notification[]; muted: FleetEvent[] };

/** The events a look at the group may send or announce: its pending events and due incidents. */
function eventsToJudge(record: GroupRecord | undefined, now: number): FleetEvent[] {
  if (!record) return [];
  const due = [...record.state.incidents.values()]
    .filter((incident) => incident.dueAt !== undefined && incident.dueAt <= now)
    .map((incident) => incident.event);
  return [...record.state.pending, ...due];
}

export class Flusher {
  readonly #groups: GroupContext;
  readonly #queues: ReadonlyMap<string, DeliveryQueue>;
  readonly #logger: Logger | undefined;
  readonly #hooks: FlusherHooks;
  readonly #pollMs: number;
  readonly #leaseMs: number;
  readonly #batchSize: number;
  readonly #concurrency: number;
  readonly #warn: ReturnType<typeof throttledWarn>;
  #running = false;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  /** Looks under way (at most `MAX_LOOKS`), and whether one more is wanted once one ends. */
  readonly #looks = new Set<Promise<void>>();
  #again = false;
  /** Groups waiting for a look of their own, by key, and those looks under way. */
  readonly #ownTimers = new Map<string, NodeJS.Timeout>();
  readonly #ownLooks = new Set<Promise<void>>();

  constructor(options: FlusherOptions) {
    this.#groups = options.groups;
    this.#queues = options.queues;
    this.#logger = options.logger?.child({ component: 'flusher' });
    this.#hooks = options.hooks ?? {};
    this.#pollMs = options.pollMs ?? 1_000;
    this.#leaseMs = options.leaseMs ?? 30_000;
    this.#batchSize = options.batchSize ?? 100;
    this.#concurrency = options.concurrency ?? 8;
    this.#warn = throttledWarn(this.#logger);
  }

  /** Starts polling the wake set (and looks at once). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#arm(0);
  }

  /** Stops polling and waits for the look under way (its hand-off included) to finish. */
  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    for (const timer of this.#ownTimers.values()) clearTimeout(timer);
    this.#ownTimers.clear();
    await Promise.all([...this.#looks, ...this.#ownLooks]);
  }

  /**
   * A group is due at `wakeAt`: look then rather than at the next poll. With its key, the group
   * gets a look of its own then (one timer per key; a later hint for the same key replaces it).
   */
  hint(wakeAt: number, groupKey?: string): void {
    if (!this.#running) return;
    const delayMs = Math.max(0, wakeAt - this.#groups.now());
    const own = groupKey === undefined ? undefined : this.#ownTimers.get(groupKey);
    const ownLook = own !== undefined || this.#ownTimers.size < MAX_OWN_LOOKS;
    if (groupKey === undefined || delayMs > OWN_LOOK_WITHIN_MS || !ownLook) {
      this.#arm(delayMs);
      return;
    }
    clearTimeout(own);
    this.#ownTimers.set(
      groupKey,
      setTimeout(() => {
        this.#ownTimers.delete(groupKey);
        if (this.#running) this.#lookAt(groupKey);
      }, delayMs),
    );
  }

  /** Claims `groupKey` if it is due and flushes it; a group not due (moved, or taken) is left to the looks. */
  #lookAt(groupKey: string): void {
    const look: Promise<void> = (async () => {
      const now = this.#groups.now();
      // Read while claiming: one round trip for both (the read is dropped if the claim fails).
      const reading = this.#groups.store.get(groupKey);
      reading.catch(() => undefined);
      try {
        if (await this.#groups.store.claim(groupKey, now, now + this.#leaseMs))
          await this.flushGroup(groupKey, reading);
      } catch (error) {
        this.#warn({ group: groupKey, err: (error as Error).message }, 'could not flush a group; retrying');
      }
    })().finally(() => this.#ownLooks.delete(look));
    this.#ownLooks.add(look);
  }

  /** Claims every due group and looks at each; resolves to how many were claimed. */
  async runOnce(): Promise<number> {
    let total = 0;
    for (;;) {
      const now = this.#groups.now();
      const keys = await this.#groups.store.claimDue(now, now + this.#leaseMs, this.#batchSize);
      total += keys.length;
      await this.#each(keys, async (key) => {
        try {
          await this.flushGroup(key);
        } catch (error) {
          this.#warn({ group: key, err: (error as Error).message }, 'could not flush a group; retrying');
        }
      });
      if (keys.length < this.#batchSize) return total;
    }
  }

  /**
   * Flushes one group now if anything in it is due (and hands over what it had not handed over).
   * `reading`: the group as read when it was claimed, else it is read here.
   */
  async flushGroup(groupKey: string, reading?: Promise<GroupRecord | undefined>): Promise<GroupFlushResult> {
    const now = this.#groups.now();
    const judgement: Judgement = await this.#groups.mutes.judge(
      eventsToJudge(await (reading ?? this.#groups.store.get(groupKey)), now),
      now,
    );
    const taken = await this.#groups.store.update<Taken>(groupKey, (current) => {
      if (!current) return { result: { kind: 'missing' } };
      if (idleExpired(current, now, this.#groups.policy)) return { result: { kind: 'deleted' }, next: null };
      const flushed = flush(current.state, now, {
        rememberMs: this.#groups.policy.redeliveryMs,
        muted: (event) => judgement.toSend(event).muted !== undefined,
        waits: (event) => judgement.toSend(event).waits === true,
      });
      const reminded = reminders(flushed.state, now, {
        muted: (event) => judgement.toAnnounce(event).muted !== undefined,
        waits: (event) => judgement.toAnnounce(event).waits === true,
      });
      const made = [flushed.notification, reminded.notification].filter(
        (notification): notification is Notification => notification !== undefined,
      );
      const outgoing = [...current.outgoing, ...made];
      const next: GroupRecord = { ...current, state: reminded.state, outgoing };
      if (outgoing.length > 0) next.handOffRetryAt = now + this.#groups.policy.handOffRetryMs;
      const record = reschedule(next, now, this.#groups.policy);
      // Still due right after a look: a reminder held back by a pending firing event of the same
      // incident (the pending flush announces it). Wake for that flush, not at every poll.
      if (record.wakeAt !== undefined && record.wakeAt <= now) {
        record.wakeAt = dueAt(record.state) ?? now + record.state.groupInterval;
      }
      return {
        result: { kind: 'ready', made, outgoing: record.outgoing, muted: flushed.muted },
        next: record,
      };
    });
    if (taken.kind === 'missing') {
      await this.#groups.store.forget(groupKey);
      return taken;
    }
    if (taken.kind === 'deleted') {
      this.#logger?.debug({ group: groupKey }, 'idle group deleted');
      this.#hooks.onGroupDeleted?.(groupKey);
      return taken;
    }
    await this.#reportMuted(taken.muted, judgement, now);
    const handedOff = await this.#handOff(groupKey, taken.outgoing);
    return { kind: 'flushed', made: taken.made, handedOff };
  }

  /** Marks and counts the events a flush kept out (once per event, however many groups it is in). */
  async #reportMuted(events: readonly FleetEvent[], judgement: Judgement, now: number): Promise<void> {
    for (const event of events) {
      const muted = judgement.toSend(event).muted;
      if (!muted) continue;
      const first = this.#groups.marks ? await this.#groups.marks.mark(event.id, muted, now) : true;
      if (!first) continue;
      this.#logger?.debug(
        { id: event.id, type: event.type, subject: event.subject, reason: muted.reason, by: muted.by },
        'event muted at flush: kept out of notifications',
      );
      this.#hooks.onSuppressed?.({ event, ...muted });
    }
  }

  /** Hands `outgoing` over in order, then removes what was handed over from the group. */
  async #handOff(groupKey: string, outgoing: readonly Notification[]): Promise<Notification[]> {
    const done: Notification[] = [];
    let failure: unknown;
    for (const notification of outgoing) {
      try {
        await this.#hooks.beforeHandOff?.(notification);
        const queue = this.#queues.get(notification.receiver);
        if (queue) {
          await enqueueDelivery(queue, notification);
          this.#logger?.info(
            {
              notification: notification.id,
              receiver: notification.receiver,
              status: notification.status,
              events: notification.events.length,
              reminder: notification.reminder?.count,
            },
            'notification handed to delivery',
          );
          this.#hooks.onHandedOff?.(notification);
        } else {
          this.#logger?.error(
            { notification: notification.id, receiver: notification.receiver, group: groupKey },
            'no delivery queue for this receiver (not in the config any more); notification dropped',
          );
          this.#hooks.onDropped?.(notification);
        }
        done.push(notification);
      } catch (error) {
        failure = error;
        break;
      }
    }
    if (done.length > 0) {
      const ids = new Set(done.map((notification) => notification.id));
      await this.#groups.store.update<void>(groupKey, (current) => {
        if (!current) return { result: undefined };
        const left = current.outgoing.filter((notification) => !ids.has(notification.id));
        if (left.length === current.outgoing.length) return { result: undefined };
        return {
          result: undefined,
          next: reschedule({ ...current, outgoing: left }, this.#groups.now(), this.#groups.policy),
        };
      });
    }
    if (failure !== undefined) throw failure;
    return done;
  }

  async #each(keys: readonly string[], work: (key: string) => Promise<void>): Promise<void> {
    let next = 0;
    const lanes = Array.from({ length: Math.min(this.#concurrency, keys.length) }, async () => {
      while (next < keys.length) {
        const key = keys[next];
        next += 1;
        if (key !== undefined) await work(key);
      }
    });
    await Promise.all(lanes);
  }

  #arm(wantedMs: number): void {
    if (!this.#running) return;
    // Never further than the next poll, which looks anyway: a wake time a month away (a reminder)
    // is never one timer, which Node would fire at once beyond 24.8 days.
    const delayMs = Math.min(wantedMs, this.#pollMs);
    const at = Date.now() + delayMs;
    if (this.#timer && this.#timerAt <= at) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timerAt = Number.POSITIVE_INFINITY;
      this.#tick();
    }, delayMs);
  }

  /**
   * Starts a look. A group that comes due while another look is under way (a busy moment: that
   * look may hold twenty groups) is claimed by a look of its own at once rather than after the
   * running one: claims lease their keys, so looks in parallel never take the same group. At most
   * `MAX_LOOKS` run at once; past that, one more follows when one ends.
   */
  #tick(): void {
    if (this.#looks.size >= MAX_LOOKS) {
      this.#again = true;
      return;
    }
    const look: Promise<void> = this.runOnce()
      .then(
        () => undefined,
        (error: unknown) => {
          this.#warn({ err: (error as Error).message }, 'cannot read due notification groups; retrying');
        },
      )
      .finally(() => {
        this.#looks.delete(look);
        if (!this.#running) return;
        if (this.#again) {
          this.#again = false;
          this.#tick();
        }
        this.#arm(this.#pollMs);
      });
    this.#looks.add(look);
  }
}
