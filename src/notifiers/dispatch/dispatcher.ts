import type { Logger } from 'pino';
import { EVENT } from '../../events/catalogue.js';
import { incidentId } from '../../events/incident-ref.js';
import type { FleetEvent } from '../../events/types.js';
import type { GroupContext } from '../aggregation/flusher.js';
import { newRecord, reschedule } from '../aggregation/group-record.js';
import { acknowledge, addEvent, closeSubject, openGroup, routeOf } from '../aggregation/groups.js';
import type { Muted } from '../muting/mutes.js';
import type { TagsFor } from '../routing/entity-tags.js';
import { type GroupRef, groupFor, incidentOf } from '../routing/labels.js';
import type { RouteMatch, Router } from '../routing/router.js';

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
 * - Incidents: an event that fires or resolves an incident (or removes an entity) is recorded in
 *   the installation's incidents (`FiringIncidents`, inhibition's sources) first, whichever route
 *   takes it.
 * - Muted (an active silence, a maintenance window, an inhibiting incident that fires or fired over
 *   the event's time): the event still went to the event log; here it is added with `muted`, which
 *   keeps incident bookkeeping without notifying it (but a resolution of an incident a group
 *   announced is still said there), marked with why (`MuteMarks`, for the API) and counted through
 *   `onSuppressed` (once per event a group newly kept out, so not on redeliveries). An event not
 *   muted yet may still be at flush (muting/mutes.ts, the wait).
 * - `vehicle.removed` / `robot.removed` also close the subject's open incidents in every other
 *   group (found through `{p}:notify:subject:<subject>`): a removed entity never resolves.
 * - `incident.acknowledged` is not routed: it goes to the groups that hold its incident (found
 *   through the subject set of `data.entity`), which show it in their next notification and hold
 *   the incident's reminders until the acknowledgement ends (`acknowledge` in groups.ts).
 * - No route configured: every event completes with nothing to do (nothing is notified, so
 *   nothing needs inhibiting).
 * - Reload (`use`): the routes, the entity tags and the muting are swapped together between two
 *   events. A dispatch takes all three once, when it begins, so an event under way during a swap
 *   is routed by the old set or the new one, never by a mix.
 * - A resolution follows its incident: when groups hold the incident open that the routes do not
 *   name (a reload moved the route, or changed its `group_by`), the resolution goes to those groups
 *   (with their own settings) instead of routed groups that never saw the incident fire. The
 *   receiver that heard the firing hears the resolution, once, and its reminders stop.
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
  /** The gate held it back: nothing was written (`dispatch`). */
  held?: true;
  muted?: Muted;
  /** Other groups in which a removal closed incidents. */
  closedElsewhere: number;
}

/** What a reload swaps: the compiled routes and the entity tags they label events with. */
export interface Routing {
  router: Router;
  tagsFor: TagsFor;
}

export interface DispatcherOptions {
  groups: GroupContext;
  router: Router;
  tagsFor: TagsFor;
  logger?: Logger;
  hooks?: DispatchHooks;
}

const REMOVED = new Set<string>([EVENT.vehicleRemoved, EVENT.robotRemoved]);

export class Dispatcher {
  readonly #groups: GroupContext;
  #routing: Routing;
  readonly #logger: Logger | undefined;
  readonly #hooks: DispatchHooks;

  constructor(options: DispatcherOptions) {
    this.#groups = options.groups;
    this.#routing = { router: options.router, tagsFor: options.tagsFor };
    this.#logger = options.logger?.child({ component: 'dispatcher' });
    this.#hooks = options.hooks ?? {};
  }

  /**
   * Routes every event from now on with `routing`; the caller swaps the groups' `mutes` in the
   * same synchronous step (notification-step.ts), so no dispatch sees one without the other.
   */
  use(routing: Routing): void {
    this.#routing = routing;
  }

  /**
   * Takes `event` into its groups. With `gate`, the routed groups' reads and the incident record
   * go ahead while the gate is decided (the events worker's order check), and nothing is written
   * to a group unless it lets the event go (`held` otherwise): an event costs one round trip less.
   * Only what cannot mislead goes ahead: a read taken before an earlier event of the subject has
   * written only leaves a version in the store's memory, which the group's compare-and-set
   * checks; the record keeps the latest event time per incident, whatever order they come in.
   * Where a resolution goes (`#followIncident`) is decided on reads taken after the gate: they
   * see every earlier event of the subject in its groups (also when the order list and the
   * groups are on different Redis Cluster masters, on connections not ordered with each other).
   */
  async dispatch(event: FleetEvent, gate?: Promise<boolean>): Promise<DispatchResult> {
    if (event.type === EVENT.incidentAcknowledged) return this.#acknowledge(event, gate);
    // Taken once: a reload during the awaits below does not change how this event is routed.
    const { router, tagsFor } = this.#routing;
    const mutes = this.#groups.mutes;
    const now = this.#groups.now();
    const tags = tagsFor(event.subject);
    const matches = router.route(event, tags);
    if (matches.length === 0) return { groups: 0, added: 0, closedElsewhere: 0 };
    const routed = matches.map((match) => {
      const group = groupFor(event, tags, match);
      return { key: group.key, match, group };
    });
    // One round trip for both, while the gate is decided: the groups' reads leave their versions
    // in the store, so each group's write below needs no read of its own (group-store.ts).
    await Promise.all([
      this.#groups.incidents?.record(event),
      ...routed.map(({ key }) => this.#groups.store.warm(key)),
    ]);
    if (gate && !(await gate)) return { groups: 0, added: 0, closedElsewhere: 0, held: true };
    // After the gate (see above); only resolutions read anything here.
    const targets = await this.#followIncident(event, routed);
    const muted = (await mutes.at(now))(event, { covering: true });

    const outcomes = await Promise.all(
      targets.map(({ key, match, group }) =>
        this.#groups.store.update<{ wake: number | undefined; keptOut: boolean } | undefined>(
          key,
          (current) => {
            // A group the resolution follows and that was closed meanwhile: nothing to resolve.
            if (!current && !group) return { result: undefined };
            const state = current?.state ?? openGroup(group!, match!, now);
            const settings = match ?? routeOf(state);
            const next = addEvent(state, event, now, settings, {
              rememberMs: this.#groups.policy.redeliveryMs,
              ...(muted ? { muted: true } : {}),
            });
            if (next === state) return { result: undefined };
            const record = reschedule(
              { ...(current ?? newRecord(state)), state: next },
              now,
              this.#groups.policy,
            );
            // A muted resolution of an incident the group announced is still said (groups.ts).
            // Taken, the event is the last pending one (a scan of a storm's pending events per
            // event made the storm quadratic).
            const keptOut = muted !== undefined && next.pending.at(-1) !== event;
            return { result: { wake: record.wakeAt, keptOut }, next: record };
          },
        ),
      ),
    );
    const wakes = outcomes.map((outcome) => outcome?.wake);
    const added = outcomes.filter((outcome) => outcome !== undefined).length;

    if (muted && outcomes.some((outcome) => outcome?.keptOut)) {
      await this.#groups.marks?.mark(event.id, muted, now);
      this.#logger?.debug(
        { id: event.id, type: event.type, subject: event.subject, reason: muted.reason, by: muted.by },
        'event muted: kept out of notifications',
      );
      this.#hooks.onSuppressed?.({ event, ...muted });
    }
    const closedElsewhere = REMOVED.has(event.type)
      ? await this.#closeElsewhere(event.subject, new Set(targets.map(({ key }) => key)), now)
      : 0;
    wakes.forEach((wake, index) => {
      const key = targets[index]?.key;
      if (wake !== undefined && key !== undefined) this.#hooks.onScheduled?.(wake, key);
    });
    return { groups: targets.length, added, closedElsewhere, ...(muted ? { muted } : {}) };
  }

  /**
   * Where a resolution goes: the routed groups, unless groups the routes do not name hold its
   * incident open (see the class comment); then those, and the routed ones that hold it too.
   * Anything else goes where it was routed. Entries without `group`/`match` are existing groups.
   */
  async #followIncident(
    event: FleetEvent,
    routed: Array<{ key: string; match: RouteMatch; group: GroupRef }>,
  ): Promise<Array<{ key: string; match?: RouteMatch; group?: GroupRef }>> {
    if (incidentOf(event.type)?.role !== 'resolves') return routed;
    const incident = incidentOf(event.type);
    const keys = await this.#groups.store.groupsOfSubject(event.subject);
    const holders = new Set(
      incident ? await this.#groups.store.holding(keys, incidentId(event.subject, incident.key)) : [],
    );
    const own = new Set(routed.map(({ key }) => key));
    const elsewhere = [...holders].filter((key) => !own.has(key));
    if (elsewhere.length === 0) return routed;
    return [...routed.filter(({ key }) => holders.has(key)), ...elsewhere.map((key) => ({ key }))];
  }

  /** Records an acknowledgement in every group holding its incident. */
  async #acknowledge(event: FleetEvent, gate?: Promise<boolean>): Promise<DispatchResult> {
    const entity = event.data.entity;
    if (typeof entity !== 'string') return { groups: 0, added: 0, closedElsewhere: 0 };
    if (gate && !(await gate)) return { groups: 0, added: 0, closedElsewhere: 0, held: true };
    const now = this.#groups.now();
    const check = await this.#groups.mutes.at(now);
    const muted = (firing: FleetEvent) => check(firing) !== undefined;
    const keys = await this.#groups.store.groupsOfSubject(entity);
    const wakes = await Promise.all(
      keys.map((key) =>
        this.#groups.store.update<number | undefined>(key, (current) => {
          if (!current) return { result: undefined };
          const state = acknowledge(current.state, event, now, {
            muted,
            rememberMs: this.#groups.policy.redeliveryMs,
          });
          if (state === current.state) return { result: undefined };
          const record = reschedule({ ...current, state }, now, this.#groups.policy);
          return { result: record.wakeAt, next: record };
        }),
      ),
    );
    wakes.forEach((wake, index) => {
      const key = keys[index];
      if (wake !== undefined && key !== undefined) this.#hooks.onScheduled?.(wake, key);
    });
    const added = wakes.filter((wake) => wake !== undefined).length;
    this.#logger?.debug({ id: event.id, incident: event.data.incident, groups: added }, 'acknowledgement');
    return { groups: keys.length, added, closedElsewhere: 0 };
  }

  /** Closes the subject's incidents in the groups (other than `own`) that hold one. */
  async #closeElsewhere(subject: string, own: ReadonlySet<string>, now: number): Promise<number> {
    const others = (await this.#groups.store.groupsOfSubject(subject)).filter((key) => !own.has(key));
    const closed = await Promise.all(
      others.map((key) =>
        this.#groups.store.update<boolean>(key, (current) => {
          if (!current) return { result: false };
          const state = closeSubject(current.state, subject);
          if (state === current.state) return { result: false };
          return { result: true, next: reschedule({ ...current, state }, now, this.#groups.policy) };
        }),
      ),
    );
    const count = closed.filter(Boolean).length;
    if (count > 0) this.#logger?.debug({ subject, groups: count }, 'removed entity: incidents closed');
    return count;
  }
}
