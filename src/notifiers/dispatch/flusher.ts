import type { Logger } from 'pino';
import { throttledWarn } from '../../queues/connection.js';
import { type DeliveryQueue, enqueueDelivery } from '../delivery/delivery-queue.js';
import { dueAt, flush, reminders } from '../routing/aggregation.js';
import type { Notification } from '../types.js';
import {
  DEFAULT_WAKE_POLICY,
  type GroupRecord,
  idleExpired,
  reschedule,
  type WakePolicy,
} from './group-record.js';
import type { GroupStore } from './group-store.js';
import type { Mutes } from './mutes.js';

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
 * event, and to within `pollMs` on any other.
 *
 * One look at a group, in two writes around the hand-off:
 * 1. compare-and-set: `flush` (pending events → one notification) and `reminders` (open incidents
 *    due again, muted ones put off by `group_interval`) go into `outgoing`, together with the new
 *    state — so the events leave `pending` in the same write that records the notification;
 * 2. every `outgoing` notification is handed to `enqueueDelivery` (job id = notification id);
 * 3. compare-and-set: the handed-over ids leave `outgoing`; the wake time is recomputed.
 * Killed between 1 and 3, the group wakes again `handOffRetryMs` later and step 2 hands over the
 * same notifications again: same ids, so the delivery queue keeps one job each; none is lost, and
 * no second one is made because `pending` was already emptied in step 1.
 *
 * An idle group (nothing pending, no open incident, nothing outgoing) is deleted once its idle
 * grace (`max(group_interval, idleGraceMinMs)`) has passed.
 */

export interface FlusherHooks {
  /** Just before a notification is handed to delivery; throwing aborts the hand-off (tests: a crash). */
  beforeHandOff?(notification: Notification): void | Promise<void>;
  /** A notification is on its receiver's delivery queue. */
  onHandedOff?(notification: Notification): void;
  /** A notification for a receiver that has no delivery queue (removed from the config) was dropped. */
  onDropped?(notification: Notification): void;
  /** An idle group was deleted. */
  onGroupDeleted?(groupKey: string): void;
}

export interface FlusherOptions {
  store: GroupStore;
  mutes: Mutes;
  /** Delivery queue per receiver name. */
  queues: ReadonlyMap<string, DeliveryQueue>;
  policy?: WakePolicy;
  now?: () => number;
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

export type LookResult =
  | { kind: 'missing' }
  | { kind: 'deleted' }
  | { kind: 'looked'; made: Notification[]; handedOff: Notification[] };

type Taken =
  | { kind: 'missing' }
  | { kind: 'deleted' }
  | { kind: 'ready'; made: Notification[]; outgoing: Notification[] };

export class Flusher {
  readonly #store: GroupStore;
  readonly #mutes: Mutes;
  readonly #queues: ReadonlyMap<string, DeliveryQueue>;
  readonly #policy: WakePolicy;
  readonly #now: () => number;
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
  #ticking: Promise<void> | undefined;
  #again = false;

  constructor(options: FlusherOptions) {
    this.#store = options.store;
    this.#mutes = options.mutes;
    this.#queues = options.queues;
    this.#policy = options.policy ?? DEFAULT_WAKE_POLICY;
    this.#now = options.now ?? Date.now;
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
    await this.#ticking;
  }

  /** A group is due at `wakeAt`: look then rather than at the next poll. */
  hint(wakeAt: number): void {
    if (this.#running) this.#arm(Math.max(0, wakeAt - this.#now()));
  }

  /** Claims every due group and looks at each; resolves to how many were claimed. */
  async runOnce(): Promise<number> {
    let total = 0;
    for (;;) {
      const now = this.#now();
      const keys = await this.#store.claimDue(now, now + this.#leaseMs, this.#batchSize);
      total += keys.length;
      await this.#each(keys, async (key) => {
        try {
          await this.look(key);
        } catch (error) {
          this.#warn({ group: key, err: (error as Error).message }, 'could not flush a group; retrying');
        }
      });
      if (keys.length < this.#batchSize) return total;
    }
  }

  /** Flushes one group now if anything in it is due (and hands over what it had not handed over). */
  async look(groupKey: string): Promise<LookResult> {
    const now = this.#now();
    const check = await this.#mutes.at(now);
    const muted = (event: Parameters<typeof check>[0]) => check(event) !== undefined;
    const taken = await this.#store.update<Taken>(groupKey, (current) => {
      if (!current) return { result: { kind: 'missing' } };
      if (idleExpired(current, now, this.#policy)) return { result: { kind: 'deleted' }, next: null };
      const flushed = flush(current.state, now);
      const reminded = reminders(flushed.state, now, { muted });
      const made = [flushed.notification, reminded.notification].filter(
        (notification): notification is Notification => notification !== undefined,
      );
      const outgoing = [...current.outgoing, ...made];
      const next: GroupRecord = { ...current, state: reminded.state, outgoing };
      if (outgoing.length > 0) next.handOffRetryAt = now + this.#policy.handOffRetryMs;
      const record = reschedule(next, now, this.#policy);
      // Still due right after a look: a reminder held back by a pending firing event of the same
      // incident (the pending flush announces it). Wake for that flush, not at every poll.
      if (record.wakeAt !== undefined && record.wakeAt <= now) {
        record.wakeAt = dueAt(record.state) ?? now + record.state.groupInterval;
      }
      return { result: { kind: 'ready', made, outgoing: record.outgoing }, next: record };
    });
    if (taken.kind === 'missing') {
      await this.#store.forget(groupKey);
      return taken;
    }
    if (taken.kind === 'deleted') {
      this.#logger?.debug({ group: groupKey }, 'idle group deleted');
      this.#hooks.onGroupDeleted?.(groupKey);
      return taken;
    }
    const handedOff = await this.#handOff(groupKey, taken.outgoing);
    return { kind: 'looked', made: taken.made, handedOff };
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
      await this.#store.update<void>(groupKey, (current) => {
        if (!current) return { result: undefined };
        const left = current.outgoing.filter((notification) => !ids.has(notification.id));
        if (left.length === current.outgoing.length) return { result: undefined };
        return {
          result: undefined,
          next: reschedule({ ...current, outgoing: left }, this.#now(), this.#policy),
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

  #arm(delayMs: number): void {
    if (!this.#running) return;
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

  #tick(): void {
    if (this.#ticking) {
      this.#again = true;
      return;
    }
    this.#ticking = (async () => {
      do {
        this.#again = false;
        try {
          await this.runOnce();
        } catch (error) {
          this.#warn({ err: (error as Error).message }, 'cannot read due notification groups; retrying');
        }
      } while (this.#again && this.#running);
    })().finally(() => {
      this.#ticking = undefined;
      this.#arm(this.#pollMs);
    });
  }
}
