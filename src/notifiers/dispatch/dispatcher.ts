import type { Logger } from 'pino';
import { EVENT } from '../../events/catalogue.js';
import type { FleetEvent } from '../../events/types.js';
import { addEvent, closeSubject, openGroup } from '../routing/aggregation.js';
import type { TagsFor } from '../routing/entity-tags.js';
import { groupFor } from '../routing/labels.js';
import type { Router } from '../routing/router.js';
import { DEFAULT_WAKE_POLICY, newRecord, reschedule, type WakePolicy } from './group-record.js';
import type { GroupStore } from './group-store.js';
import type { Muted, Mutes } from './mutes.js';

/**
 * The first half of the notification step: one event from the `events` queue into the
 * aggregation groups it belongs to. Per event: entity tags → `route()` → for each route match the
 * group (`groupFor`) → `addEvent` in one compare-and-set write per group, which also sets the
 * group's wake time (the flusher takes it from there). Nothing is sent here.
 *
 * - At-least-once input: an event already pending or recently flushed in a group is a no-op
 *   there (`addEvent` dedups by id), so a retried job or two replicas taking the same event add it
 *   once. A failure (Redis away, contention) throws and the events job is retried; the groups
 *   already written dedup the retry.
 * - Muted (an active silence, a maintenance window): the event still went to the event log; here
 *   it is added with `muted`, which keeps incident bookkeeping without notifying it, and is
 *   counted through `onSuppressed` (once per event that changed a group, so not on redeliveries).
 * - `vehicle.removed` / `robot.removed` also close the subject's open incidents in every other
 *   group (found through `{p}:notify:subject:<subject>`): a removed entity never resolves.
 * - No route configured: every event completes with nothing to do.
 */

export interface Suppressed extends Muted {
  event: FleetEvent;
}

export interface DispatchHooks {
  /** A muted event was taken into its groups without being notified. */
  onSuppressed?(suppressed: Suppressed): void;
  /** A group's next look is due at `wakeAt` (the local flusher can wake up for it). */
  onScheduled?(wakeAt: number, groupKey: string): void;
}

export interface DispatchResult {
  /** Route matches (groups) the event went to. */
  groups: number;
  /** Groups it was new to (0 for a redelivered event). */
  added: number;
  muted?: Muted;
  /** Other groups in which a removal closed incidents. */
  closedElsewhere: number;
}

export interface DispatcherOptions {
  store: GroupStore;
  router: Router;
  tagsFor: TagsFor;
  mutes: Mutes;
  policy?: WakePolicy;
  now?: () => number;
  logger?: Logger;
  hooks?: DispatchHooks;
}

const REMOVED = new Set<string>([EVENT.vehicleRemoved, EVENT.robotRemoved]);

export class Dispatcher {
  readonly #store: GroupStore;
  readonly #router: Router;
  readonly #tagsFor: TagsFor;
  readonly #mutes: Mutes;
  readonly #policy: WakePolicy;
  readonly #now: () => number;
  readonly #logger: Logger | undefined;
  readonly #hooks: DispatchHooks;

  constructor(options: DispatcherOptions) {
    this.#store = options.store;
    this.#router = options.router;
    this.#tagsFor = options.tagsFor;
    this.#mutes = options.mutes;
    this.#policy = options.policy ?? DEFAULT_WAKE_POLICY;
    this.#now = options.now ?? Date.now;
    this.#logger = options.logger?.child({ component: 'dispatcher' });
    this.#hooks = options.hooks ?? {};
  }

  async dispatch(event: FleetEvent): Promise<DispatchResult> {
    const now = this.#now();
    const tags = this.#tagsFor(event.subject);
    const matches = this.#router.route(event, tags);
    if (matches.length === 0) return { groups: 0, added: 0, closedElsewhere: 0 };
    const muted = (await this.#mutes.at(now))(event);
    const targets = matches.map((match) => ({ match, group: groupFor(event, tags, match) }));

    const wakes = await Promise.all(
      targets.map(({ match, group }) =>
        this.#store.update<number | undefined>(group.key, (current) => {
          const state = current?.state ?? openGroup(group, match, now);
          const next = addEvent(state, event, now, match, muted ? { muted: true } : {});
          if (next === state) return { result: undefined };
          const record = reschedule({ ...(current ?? newRecord(state)), state: next }, now, this.#policy);
          return { result: record.wakeAt, next: record };
        }),
      ),
    );
    const added = wakes.filter((wake) => wake !== undefined).length;

    if (muted && added > 0) {
      this.#logger?.debug(
        { id: event.id, type: event.type, subject: event.subject, reason: muted.reason, by: muted.by },
        'event muted: kept out of notifications',
      );
      this.#hooks.onSuppressed?.({ event, ...muted });
    }
    const closedElsewhere = REMOVED.has(event.type)
      ? await this.#closeElsewhere(event.subject, new Set(targets.map(({ group }) => group.key)), now)
      : 0;
    wakes.forEach((wake, index) => {
      const key = targets[index]?.group.key;
      if (wake !== undefined && key !== undefined) this.#hooks.onScheduled?.(wake, key);
    });
    return { groups: targets.length, added, closedElsewhere, ...(muted ? { muted } : {}) };
  }

  /** Closes the subject's incidents in the groups (other than `own`) that hold one. */
  async #closeElsewhere(subject: string, own: ReadonlySet<string>, now: number): Promise<number> {
    const others = (await this.#store.groupsOfSubject(subject)).filter((key) => !own.has(key));
    const closed = await Promise.all(
      others.map((key) =>
        this.#store.update<boolean>(key, (current) => {
          if (!current) return { result: false };
          const state = closeSubject(current.state, subject);
          if (state === current.state) return { result: false };
          return { result: true, next: reschedule({ ...current, state }, now, this.#policy) };
        }),
      ),
    );
    const count = closed.filter(Boolean).length;
    if (count > 0) this.#logger?.debug({ subject, groups: count }, 'removed entity: incidents closed');
    return count;
  }
}
