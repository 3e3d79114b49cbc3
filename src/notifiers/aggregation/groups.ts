import { EVENT } from '../../events/catalogue.js';
import { incidentId } from '../../events/incident-ref.js';
import type { FleetEvent, Severity } from '../../events/types.js';
import { appended } from '../../lib/appended.js';
import { PersistentMap } from '../../lib/persistent-map.js';
import { ITEMS_PER_CALL } from '../../lib/slices.js';
import { eventsRedeliveryMs } from '../../queues/names.js';
import type { Notification } from '../notifier.js';
import { type GroupRef, incidentOf, type Labels, maxSeverity, severityOf } from '../routing/labels.js';
import type { RouteMatch } from '../routing/router.js';

/**
 * One group's state machine (Alertmanager's aggregation group), as pure functions over a state the
 * caller keeps (in Redis) under the group key. No clock: every function takes `now` (epoch ms).
 * The state is plain JSON but for its open incidents, an immutable map that shares structure
 * between versions (lib/persistent-map.ts): a storm opens thousands in one group, one per event,
 * and copying them all per event made it quadratic.
 *
 * Timing. A flush is due `group_wait` after the first pending event arrived (the burst window) and
 * never sooner than `group_interval` after the previous flush. (Alertmanager flushes a group that
 * already notified as soon as `group_interval` has passed; waiting for `group_wait` as well means a
 * new burst into a quiet, long-lived group is still caught whole instead of its first event going
 * out alone.) A flush turns every pending event into ONE notification.
 *
 * Incidents. A firing event (`vehicle.vpn.disconnected`) opens the incident `(subject, key)`; its
 * resolving counterpart closes it; `vehicle.removed` / `robot.removed` close every incident of that
 * subject in this group (a removed entity never resolves). An incident that stays open is repeated
 * by `reminders` every `repeat_interval` after its last notice.
 *
 * Resolutions. With `send_resolved: false` a resolving event only closes its incident. With `true`
 * it is sent even when this group never saw the firing event (state lost, firing silenced): a
 * resolution carries how long the problem lasted, and dropping one could leave an operator
 * believing a problem still stands.
 *
 * Acknowledgements. `incident.acknowledged` (an operator's `fleetwatch ack`) reaches the groups
 * holding its incident through `acknowledge`: the incident keeps who acknowledged it and until
 * when, and the event is pending like any other, so the group's next notification shows it. While
 * acknowledged (until it resolves or `until` passes) the incident gets no reminder; its next one is
 * due when the acknowledgement ends.
 *
 * Muting (silences, maintenance, inhibition). The caller decides, when the event arrives
 * (`addEvent(..., { muted: true })`) and again when it would be sent (`flush`'s `muted`): a muted
 * event is kept out of notifications but keeps the incident bookkeeping. A muted firing event
 * opens its incident unannounced and `reminders` announces it once `options.muted` no longer holds
 * for it (the problem outlived the maintenance window, the silence or the inhibiting incident),
 * unless it resolved meanwhile: then its resolution is not sent either (nobody was told it fired).
 * The other way round, the resolution of an incident the group announced is always sent, muted or
 * not: whoever was told it fires is told it stopped (`closing`).
 *
 * Waiting (inhibition's wait for its source, see muting/mutes.ts). When `flush`'s `waits` says an
 * event cannot be judged yet, the whole flush waits (so the burst stays one notification) and the
 * group is looked at again `recheckDelay` later (1–5 s, further apart the longer it waited); the
 * caller bounds how long an event waits.
 * `reminders` keeps an incident opened muted waiting the same way before announcing it.
 *
 * Exactly once. Adding an event whose id is pending or recent is a no-op, so a redelivered event
 * is not notified twice. The recent ids are those the group flushed (or muted, or dropped) within
 * the caller's redelivery window (`rememberMs`: how long after its dispatch an event may come back,
 * queues/names.ts), and in any case its last `RECENT_IDS`, at most `RECENT_IDS_MAX`: a storm
 * through one group is remembered whole for as long as one of its events can come back. When
 * they were taken is kept coarsely (`recentMarks`), and which they are as a set carried from
 * version to version, so a storm's check costs the same per event as a quiet group's.
 * Notification ids are
 * `<groupKey>~<group creation time, base 36>~<sequence>`: the same flush computed again from the
 * same stored state has the same id (the delivery queue dedups it), and a group created anew under
 * the same key (after the caller dropped an idle one) cannot reuse an old id.
 */

export interface IncidentState {
  subject: string;
  /** Catalogue incident key: `vpn`, `reachability`, `health`, ... */
  key: string;
  /** Epoch ms the incident opened in this group. */
  openedAt: number;
  /** The latest firing event, repeated in reminders. */
  event: FleetEvent;
  /** Epoch ms of the first notification that carried it; absent until then. */
  firstNotifiedAt?: number;
  lastNotifiedAt?: number;
  /** Reminders sent so far. */
  reminders: number;
  /** The latest acknowledgement (`incident.acknowledged`); `until` in epoch ms. */
  ack?: { by: string; comment: string; until: number };
  /**
   * When `reminders` next looks at it: `lastNotifiedAt + repeat_interval`, or — for an incident
   * opened while muted — as soon as possible. Absent while its firing event waits to be flushed.
   */
  dueAt?: number;
}

export interface GroupState {
  version: 1;
  key: string;
  receiver: string;
  routeId: string;
  /** The group's `group_by` label values (Notification.groupLabels). */
  labels: Labels;
  /** Timing of the route, refreshed from the route match on every `addEvent` (config reloads). */
  groupWait: number;
  groupInterval: number;
  repeatInterval: number;
  sendResolved: boolean;
  /** Epoch ms; part of every notification id. */
  createdAt: number;
  /** Notifications produced so far (flushes and reminders). */
  sequence: number;
  /** Events waiting for the next flush, in arrival order. */
  pending: FleetEvent[];
  /** Epoch ms the oldest pending event arrived; absent when nothing is pending. */
  pendingSince?: number;
  /** Epoch ms of the last flush; absent before the first. */
  lastFlushAt?: number;
  /** While a flush waits (an event waits for its inhibition source to be known): look again then. */
  recheckAt?: number;
  /** Ids of pending resolutions of incidents this group announced: sent even when muted. */
  closing?: string[];
  /** Open incidents by `<subject>#<key>`; changed by making a new map, as the rest of the state. */
  incidents: Incidents;
  /** Ids of the recently flushed (or muted, or dropped) events, oldest first (see "Exactly once"). */
  recentIds: string[];
  /**
   * When the recent ids were taken, oldest first: `[t, n]` says the next `n` ids were taken before
   * epoch ms `t`. Together they cover the end of `recentIds`; ids before them (a group stored
   * before the marks) count as taken long ago.
   */
  recentMarks?: Array<[number, number]>;
}

export type Incidents = PersistentMap<IncidentState>;

/** Makes a notification id from the group key, the group's creation time and the sequence number. */
export type NotificationIdFn = (groupKey: string, createdAt: number, sequence: number) => string;

/** Recent ids a group keeps however long ago it took them. */
export const RECENT_IDS = 512;

/**
 * Recent ids a group keeps at most, however recently it took them. Past it the oldest go down to
 * `RECENT_IDS_KEPT`, so that a storm beyond it drops ids once in a while, not one per event
 * (each drop copies the list).
 */
export const RECENT_IDS_MAX = 100_000;
export const RECENT_IDS_KEPT = RECENT_IDS_MAX - RECENT_IDS_MAX / 16;

/** The redelivery window cut into this many marks: ids are kept up to 1/16 of it longer. */
const RECENT_MARKS = 16;

/** The redelivery window with `worker.takeover_after`'s default (30 s): 247 s. */
export const DEFAULT_REDELIVERY_MS = eventsRedeliveryMs(30_000);

/** How soon a waiting flush or announcement is looked at again, at first. */
export const RECHECK_MS = 1_000;

/** The furthest apart a waiting group's looks grow (`recheckDelay`). */
export const RECHECK_MAX_MS = 5_000;

/**
 * How long after a look a waiting flush or announcement is looked at again: a quarter of how long
 * its oldest waiting event has waited (from the event's time), `RECHECK_MS` to `RECHECK_MAX_MS`.
 * Each look reads the group and the sources it waits for, and a storm of inhibitable incidents
 * waits up to a counting window together: looks every second would be sixty per incident for
 * a 60 s window, these are about twenty, and a notice comes at most a quarter of its wait (and 5 s)
 * after its source became known.
 */
export function recheckDelay(now: number, waiting: readonly FleetEvent[]): number {
  let oldest = Number.POSITIVE_INFINITY;
  for (const event of waiting) {
    const time = Date.parse(event.time);
    if (time < oldest) oldest = time;
  }
  const waited = now - oldest;
  if (!Number.isFinite(waited)) return RECHECK_MS;
  return Math.min(RECHECK_MAX_MS, Math.max(RECHECK_MS, Math.floor(waited / 4)));
}

export const notificationId: NotificationIdFn = (groupKey, createdAt, sequence) =>
  `${groupKey}~${createdAt.toString(36)}~${sequence}`;

const REMOVED_TYPES = new Set<string>([EVENT.vehicleRemoved, EVENT.robotRemoved]);

function timingOf(match: RouteMatch) {
  return {
    groupWait: match.groupWait,
    groupInterval: match.groupInterval,
    repeatInterval: match.repeatInterval,
    sendResolved: match.sendResolved,
  };
}

/** A new, empty group (the caller found no state under `group.key`). */
export function openGroup(group: GroupRef, match: RouteMatch, now: number): GroupState {
  return {
    version: 1,
    key: group.key,
    receiver: match.receiver,
    routeId: match.routeId,
    labels: { ...group.labels },
    ...timingOf(match),
    createdAt: now,
    sequence: 0,
    pending: [],
    incidents: PersistentMap.empty(),
    recentIds: [],
  };
}

/** The recent ids as `remember` leaves them. */
type Recent = Pick<GroupState, 'recentIds' | 'recentMarks'>;

/**
 * The recent ids with `more` taken at `now`, without those taken more than `windowMs` ago (but
 * for the last `RECENT_IDS`) and past `RECENT_IDS_MAX`. A mark ends on a multiple of the window's
 * sixteenth, so a steady trickle of ids makes at most 17 marks; the ids of an expired mark kept as
 * the last `RECENT_IDS` need none.
 */
function remember(state: GroupState, more: readonly string[], now: number, windowMs: number): Recent {
  const ids = state.recentIds;
  const marks = [...(state.recentMarks ?? [])];
  const step = Math.max(1, Math.ceil(windowMs / RECENT_MARKS));
  const markEnd = (Math.floor(now / step) + 1) * step;
  const last = marks.at(-1);
  if (more.length > 0) {
    if (last?.[0] === markEnd) marks[marks.length - 1] = [markEnd, last[1] + more.length];
    else marks.push([markEnd, more.length]);
  }
  const length = ids.length + more.length;
  // Ids before the marks count as taken long ago: a group stored before them, and expired marks,
  // which are dropped (only the unexpired need a time, so there are at most 17 marks).
  let expired = length - marks.reduce((sum, [, count]) => sum + count, 0);
  while (marks.length > 0 && marks[0]![0] <= now - windowMs) expired += marks.shift()![1];
  const overMax = length > RECENT_IDS_MAX ? length - RECENT_IDS_KEPT : 0;
  const drop = Math.max(Math.min(expired, length - RECENT_IDS), overMax, 0);
  // Past RECENT_IDS_MAX, unexpired ids go too.
  let left = drop - expired;
  while (left > 0 && marks.length > 0) {
    const [end, count] = marks[0]!;
    if (count > left) {
      marks[0] = [end, count - left];
      left = 0;
    } else {
      marks.shift();
      left -= count;
    }
  }
  // An append is remembered as one (lib/appended.ts) unless too long to pass as arguments.
  const recentIds =
    drop === 0 && more.length <= ITEMS_PER_CALL ? appended(ids, ...more) : [...ids.slice(drop), ...more];
  carryIds(ids, recentIds, drop, more, idOfId);
  return { recentIds, recentMarks: marks };
}

/** The event is pending, or among the recently flushed (or muted, or dropped) ones. */
function holds(state: GroupState, event: FleetEvent): boolean {
  return hasId(state.recentIds, event.id, idOfId) || hasId(state.pending, event.id, idOfEvent);
}

const idOfEvent = (event: FleetEvent) => event.id;
const idOfId = (id: string) => id;

/**
 * The ids in a long list (the pending events, the recent ids), kept so that a storm's thousands
 * are not compared one by one for every event. `carryIds` hands the set on to the list made from
 * it (and takes it from the old one, which would build its own again if asked).
 */
const idSets = new WeakMap<readonly unknown[], Set<string>>();

/** Below this many items, comparing them is cheaper than keeping a set. */
const ID_SET_FROM = 32;

function hasId<T>(list: readonly T[], id: string, idOf: (item: T) => string): boolean {
  if (list.length < ID_SET_FROM) return list.some((item) => idOf(item) === id);
  let ids = idSets.get(list);
  if (ids === undefined) {
    ids = new Set(list.map(idOf));
    idSets.set(list, ids);
  }
  return ids.has(id);
}

/** Hands the id set of `list` (when it has one) on to `next`: `list` without its first `drop`, then `more`. */
function carryIds<T>(
  list: readonly T[],
  next: readonly T[],
  drop: number,
  more: readonly T[],
  idOf: (item: T) => string,
): void {
  const ids = idSets.get(list);
  if (ids === undefined) return;
  idSets.delete(list);
  for (let index = 0; index < drop; index += 1) ids.delete(idOf(list[index]!));
  for (const item of more) ids.add(idOf(item));
  idSets.set(next, ids);
}

/** The pending events with `event` appended (remembered as an append: lib/appended.ts). */
function withPending(pending: readonly FleetEvent[], event: FleetEvent): FleetEvent[] {
  const next = appended(pending, event);
  carryIds(pending, next, 0, [event], idOfEvent);
  return next;
}

/** The caller's redelivery window (see "Exactly once"). */
interface Remembering {
  /** How long after its dispatch an event may come back; `DEFAULT_REDELIVERY_MS` by default. */
  rememberMs?: number;
}

function windowOf(options: Remembering): number {
  return options.rememberMs ?? DEFAULT_REDELIVERY_MS;
}

export interface AddOptions extends Remembering {
  /** The event is silenced or in maintenance: keep incident bookkeeping, do not notify it. */
  muted?: boolean;
}

/** Adds one event; returns the new state (the input is not modified). */
export function addEvent(
  state: GroupState,
  event: FleetEvent,
  now: number,
  match: RouteMatch,
  options: AddOptions = {},
): GroupState {
  if (holds(state, event)) return state;
  const incident = incidentOf(event.type);
  // A map left unchanged is the same object: one the store need not write.
  let incidents = state.incidents;
  let unannounced = false;
  let closesAnnounced = false;
  // The one incident this event changes, when it changes one (see `carryEarliestDue`).
  let changedId: string | undefined;
  if (incident?.role === 'fires') {
    const id = incidentId(event.subject, incident.key);
    changedId = id;
    const open = incidents.get(id);
    incidents = incidents.set(
      id,
      open
        ? { ...open, event }
        : {
            subject: event.subject,
            key: incident.key,
            openedAt: now,
            event,
            reminders: 0,
            ...(options.muted ? { dueAt: now } : {}),
          },
    );
  } else if (incident?.role === 'resolves') {
    const id = incidentId(event.subject, incident.key);
    changedId = id;
    unannounced = incidents.has(id) && !announcedOrWaiting(state, id);
    closesAnnounced = incidents.get(id)?.firstNotifiedAt !== undefined;
    incidents = incidents.delete(id);
  } else if (REMOVED_TYPES.has(event.type)) {
    incidents = withoutSubject(incidents, event.subject);
  }
  if (changedId !== undefined) carryEarliestDue(state.incidents, incidents, changedId);
  const next: GroupState = { ...state, ...timingOf(match), incidents };
  const dropped =
    (options.muted === true && !closesAnnounced) ||
    unannounced ||
    (incident?.role === 'resolves' && !match.sendResolved);
  if (dropped) return { ...next, ...remember(state, [event.id], now, windowOf(options)) };
  const added: GroupState = {
    ...next,
    pending: withPending(state.pending, event),
    pendingSince: state.pendingSince ?? now,
  };
  return closesAnnounced ? { ...added, closing: appended(state.closing ?? [], event.id) } : added;
}

/** The incident id an event fires, if it fires one. */
function firedIncident(event: FleetEvent): string | undefined {
  const incident = incidentOf(event.type);
  return incident?.role === 'fires' ? incidentId(event.subject, incident.key) : undefined;
}

/** The incident was announced, or its firing event waits in `pending` to be. */
function announcedOrWaiting(state: GroupState, id: string): boolean {
  return (
    state.incidents.get(id)?.firstNotifiedAt !== undefined ||
    state.pending.some((event) => firedIncident(event) === id)
  );
}

/** Adds events in order (one state write for a batch). */
export function addEvents(
  state: GroupState,
  events: readonly FleetEvent[],
  now: number,
  match: RouteMatch,
  options: AddOptions = {},
): GroupState {
  return events.reduce((current, event) => addEvent(current, event, now, match, options), state);
}

/** When the pending events are due to be flushed, or undefined when nothing is pending. */
export function dueAt(state: GroupState): number | undefined {
  if (state.pending.length === 0 || state.pendingSince === undefined) return undefined;
  const afterWait = state.pendingSince + state.groupWait;
  const due =
    state.lastFlushAt === undefined
      ? afterWait
      : Math.max(afterWait, state.lastFlushAt + state.groupInterval);
  return state.recheckAt === undefined ? due : Math.max(due, state.recheckAt);
}

/** True when `flush` would produce a notification now. */
export function due(state: GroupState, now: number): boolean {
  const at = dueAt(state);
  return at !== undefined && now >= at;
}

/** The earliest time `flush` or `reminders` has work: when to schedule the group's next look. */
export function nextWakeAt(state: GroupState): number | undefined {
  const flush = dueAt(state);
  const incidents = earliestDueOf(state.incidents);
  if (flush === undefined) return incidents;
  return incidents === undefined ? flush : Math.min(flush, incidents);
}

/**
 * The earliest `dueAt` of each incident map seen, and how many incidents have it (undefined: none
 * has one). Incident maps are immutable, so the answer stays true; it spares walking a group of
 * thousands for every event (`carryEarliestDue`).
 */
const earliestDue = new WeakMap<Incidents, [number, number] | undefined>();

function earliestOf(incidents: Incidents): [number, number] | undefined {
  if (earliestDue.has(incidents)) return earliestDue.get(incidents);
  let earliest: [number, number] | undefined;
  incidents.forEach(({ dueAt: due }) => {
    if (due === undefined) return;
    if (earliest === undefined || due < earliest[0]) earliest = [due, 1];
    else if (due === earliest[0]) earliest[1] += 1;
  });
  earliestDue.set(incidents, earliest);
  return earliest;
}

function earliestDueOf(incidents: Incidents): number | undefined {
  return earliestOf(incidents)?.[0];
}

/**
 * `next` is a copy of `previous` in which only incident `id` changed (or went): its earliest due
 * time follows from `previous`'s without a walk, unless the changed incident alone held it.
 */
function carryEarliestDue(previous: Incidents, next: Incidents, id: string): void {
  if (next === previous || !earliestDue.has(previous)) return;
  let earliest = earliestDue.get(previous);
  const was = previous.get(id)?.dueAt;
  if (earliest !== undefined && was === earliest[0]) {
    if (earliest[1] === 1) return;
    earliest = [earliest[0], earliest[1] - 1];
  }
  const now = next.get(id)?.dueAt;
  if (now !== undefined) {
    if (earliest === undefined || now < earliest[0]) earliest = [now, 1];
    else if (now === earliest[0]) earliest = [now, earliest[1] + 1];
  }
  earliestDue.set(next, earliest);
}

/** Nothing pending and no open incident: the caller may drop the state (keep it `group_interval` longer to keep dedup). */
export function isIdle(state: GroupState): boolean {
  return state.pending.length === 0 && state.incidents.size === 0;
}

function byTime(events: readonly FleetEvent[]): FleetEvent[] {
  return events
    .map((event, index) => ({ event, index, time: Date.parse(event.time) }))
    .sort((a, b) =>
      a.time === b.time || Number.isNaN(a.time - b.time) ? a.index - b.index : a.time - b.time,
    )
    .map(({ event }) => event);
}

function highest(events: readonly FleetEvent[]): Severity {
  return events.reduce<Severity>((max, event) => maxSeverity(max, severityOf(event)), 'info');
}

function omit<T extends object, K extends keyof T>(value: T, ...keys: K[]): Omit<T, K> {
  const copy = { ...value };
  for (const key of keys) delete copy[key];
  return copy;
}

export interface FlushOptions extends Remembering {
  id?: NotificationIdFn;
  /** Whether a pending event is muted now (it is then kept out: see the muting paragraph above). */
  muted?: (event: FleetEvent) => boolean;
  /** Whether a pending event cannot be judged yet: the flush then waits (see "Waiting" above). */
  waits?: (event: FleetEvent) => boolean;
}

export interface FlushResult {
  notification?: Notification;
  state: GroupState;
  /** Pending events this flush kept out because they are muted now. */
  muted: FleetEvent[];
}

/** Drops the muted events from `pending`; an incident they opened stays open, unannounced. */
function dropMuted(
  state: GroupState,
  muted: readonly FleetEvent[],
  now: number,
  options: Remembering,
): GroupState {
  if (muted.length === 0) return state;
  const ids = new Set(muted.map((event) => event.id));
  const pending = state.pending.filter((event) => !ids.has(event.id));
  let incidents = state.incidents;
  for (const event of muted) {
    const id = firedIncident(event);
    const open = id === undefined ? undefined : incidents.get(id);
    if (id !== undefined && open && open.firstNotifiedAt === undefined && open.dueAt === undefined) {
      incidents = incidents.set(id, { ...open, dueAt: now });
    }
  }
  const next: GroupState = {
    ...omit(state, 'pendingSince'),
    pending,
    incidents,
    ...remember(state, [...ids], now, windowOf(options)),
  };
  return pending.length > 0 && state.pendingSince !== undefined
    ? { ...next, pendingSince: state.pendingSince }
    : next;
}

/**
 * When due, keeps out the pending events that are muted now; then, unless one of the others is
 * waiting, turns every pending event into one notification (oldest first; `resolved` only when every
 * event resolves an incident; the highest severity) and marks the incidents it announces. When
 * not due, returns the state unchanged and no notification.
 */
export function flush(state: GroupState, now: number, options: FlushOptions = {}): FlushResult {
  if (!due(state, now)) return { state, muted: [] };
  const closing = new Set(state.closing);
  const judged = state.pending.filter((event) => !closing.has(event.id));
  const muted = options.muted ? judged.filter(options.muted) : [];
  const kept = dropMuted(state, muted, now, options);
  const waiting = options.waits
    ? judged.filter((event) => !muted.includes(event) && options.waits?.(event))
    : [];
  if (waiting.length > 0) {
    return { state: { ...kept, recheckAt: now + recheckDelay(now, waiting) }, muted };
  }
  const result = flushAll(omit(kept, 'recheckAt', 'closing'), now, options);
  return { ...result, muted };
}

function flushAll(state: GroupState, now: number, options: FlushOptions): Omit<FlushResult, 'muted'> {
  if (state.pending.length === 0) return { state };
  const events = byTime(state.pending);
  const sequence = state.sequence + 1;
  const notification: Notification = {
    id: (options.id ?? notificationId)(state.key, state.createdAt, sequence),
    receiver: state.receiver,
    groupKey: state.key,
    groupLabels: { ...state.labels },
    status: events.every((event) => incidentOf(event.type)?.role === 'resolves') ? 'resolved' : 'firing',
    severity: highest(events),
    events,
    createdAt: new Date(now).toISOString(),
  };
  let incidents = state.incidents;
  for (const event of events) {
    const incident = incidentOf(event.type);
    if (incident?.role !== 'fires') continue;
    const id = incidentId(event.subject, incident.key);
    const open = incidents.get(id);
    if (!open) continue;
    incidents = incidents.set(id, {
      ...open,
      firstNotifiedAt: open.firstNotifiedAt ?? now,
      lastNotifiedAt: now,
      // An acknowledgement standing now holds the first reminder until it ends, and no longer.
      dueAt: acknowledgedUntil(open, now) || now + state.repeatInterval,
    });
  }
  return {
    notification,
    state: {
      ...omit(state, 'pendingSince'),
      sequence,
      pending: [],
      lastFlushAt: now,
      incidents,
      ...remember(
        state,
        events.map((event) => event.id),
        now,
        windowOf(options),
      ),
    },
  };
}

export interface ReminderOptions {
  id?: NotificationIdFn;
  /**
   * Whether an incident's latest event is muted now (silenced, in maintenance, inhibited). A muted
   * incident is looked at again `group_interval` later. Pass it whenever muting exists: without
   * it, an incident opened muted is announced at the next call.
   */
  muted?: (event: FleetEvent) => boolean;
  /** Whether an incident opened muted cannot be announced yet (see "Waiting"): looked at again soon. */
  waits?: (event: FleetEvent) => boolean;
}

/**
 * One notification repeating the incidents still open whose notice is due (`repeat_interval` since
 * the last one), with their latest firing events. `reminder.count` is the highest reminder number
 * among them and `firstNotifiedAt` the earliest first notice. Incidents opened while muted and now
 * unmuted are announced here too (a plain firing notification when there is nothing to remind).
 */
export function reminders(
  state: GroupState,
  now: number,
  options: ReminderOptions = {},
): { notification?: Notification; state: GroupState } {
  const waiting = new Set<string>();
  for (const event of state.pending) {
    const incident = incidentOf(event.type);
    if (incident?.role === 'fires') waiting.add(incidentId(event.subject, incident.key));
  }
  const dueNow: [string, IncidentState][] = [];
  state.incidents.forEach((incident, id) => {
    if (incident.dueAt !== undefined && incident.dueAt <= now && !waiting.has(id))
      dueNow.push([id, incident]);
  });
  let incidents = state.incidents;
  const chosen: [string, IncidentState][] = [];
  for (const [id, incident] of dueNow) {
    const until = acknowledgedUntil(incident, now);
    if (until > now) {
      incidents = incidents.set(id, { ...incident, dueAt: until });
      continue;
    }
    if (options.muted?.(incident.event)) {
      incidents = incidents.set(id, { ...incident, dueAt: now + state.groupInterval });
      continue;
    }
    if (incident.firstNotifiedAt === undefined && options.waits?.(incident.event)) {
      incidents = incidents.set(id, { ...incident, dueAt: now + recheckDelay(now, [incident.event]) });
      continue;
    }
    chosen.push([id, incident]);
  }
  if (chosen.length === 0) return { state: incidents === state.incidents ? state : { ...state, incidents } };

  const sequence = state.sequence + 1;
  const events = byTime(chosen.map(([, incident]) => incident.event));
  const announced = chosen
    .map(([, incident]) => incident)
    .filter((incident) => incident.firstNotifiedAt !== undefined);
  const notification: Notification = {
    id: (options.id ?? notificationId)(state.key, state.createdAt, sequence),
    receiver: state.receiver,
    groupKey: state.key,
    groupLabels: { ...state.labels },
    status: 'firing',
    severity: highest(events),
    events,
    createdAt: new Date(now).toISOString(),
  };
  if (announced.length > 0) {
    // A loop, not Math.min(...all): a storm's group holds more incidents than a call takes arguments.
    let first = Number.POSITIVE_INFINITY;
    let count = 0;
    for (const incident of announced) {
      first = Math.min(first, incident.firstNotifiedAt ?? now);
      count = Math.max(count, incident.reminders + 1);
    }
    notification.reminder = { firstNotifiedAt: new Date(first).toISOString(), count };
  }
  for (const [id, incident] of chosen) {
    const wasAnnounced = incident.firstNotifiedAt !== undefined;
    incidents = incidents.set(id, {
      ...incident,
      firstNotifiedAt: incident.firstNotifiedAt ?? now,
      lastNotifiedAt: now,
      reminders: wasAnnounced ? incident.reminders + 1 : incident.reminders,
      dueAt: now + state.repeatInterval,
    });
  }
  return { notification, state: { ...state, sequence, incidents } };
}

/** When the incident's acknowledgement ends; 0 when it has none that stands at `now`. */
export function acknowledgedUntil(incident: Pick<IncidentState, 'ack'>, now: number): number {
  const until = incident.ack?.until ?? 0;
  return until > now ? until : 0;
}

export interface AcknowledgeOptions extends Remembering {
  /** Whether the incident's firing event is muted now: the acknowledgement is then kept quiet too. */
  muted?: (firing: FleetEvent) => boolean;
}

/**
 * Records an `incident.acknowledged` event in the group if it holds the incident (`data.entity`,
 * `data.key`): the incident keeps the acknowledgement and its reminders wait until `data.until`;
 * the event is pending for the next flush (unless the incident is muted). Returns the state
 * unchanged when the group does not hold the incident, or already took the event.
 */
export function acknowledge(
  state: GroupState,
  event: FleetEvent,
  now: number,
  options: AcknowledgeOptions = {},
): GroupState {
  if (holds(state, event)) return state;
  const { entity, key, by, comment, until } = event.data;
  if (typeof entity !== 'string' || typeof key !== 'string') return state;
  const id = incidentId(entity, key);
  const open = state.incidents.get(id);
  const untilMs = typeof until === 'string' ? Date.parse(until) : Number.NaN;
  if (!open || !Number.isFinite(untilMs)) return state;
  const ack = { by: String(by ?? ''), comment: String(comment ?? ''), until: untilMs };
  const incidents = state.incidents.set(id, {
    ...open,
    ack,
    // The next reminder is due when the acknowledgement ends, also before the repeat_interval
    // would have made it due: an acknowledgement stops reminders for a while, it never postpones
    // them beyond its end (acknowledging again replaces it, so a short one ends it sooner).
    ...(open.dueAt === undefined ? {} : { dueAt: untilMs > now ? untilMs : open.dueAt }),
  });
  if (options.muted?.(open.event)) {
    return { ...state, incidents, ...remember(state, [event.id], now, windowOf(options)) };
  }
  return {
    ...state,
    incidents,
    pending: withPending(state.pending, event),
    pendingSince: state.pendingSince ?? now,
  };
}

/** Closes every open incident of a subject (e.g. on `vehicle.removed` routed to another group). */
export function closeSubject(state: GroupState, subject: string): GroupState {
  const incidents = withoutSubject(state.incidents, subject);
  return incidents === state.incidents ? state : { ...state, incidents };
}

/** The incidents without those of `subject` (the same map when it has none). */
function withoutSubject(incidents: Incidents, subject: string): Incidents {
  const ids: string[] = [];
  incidents.forEach((incident, id) => {
    if (incident.subject === subject) ids.push(id);
  });
  return ids.reduce((map, id) => map.delete(id), incidents);
}

/**
 * The route settings a group keeps in its state: how an event that is not routed to the group
 * (a resolution following its incident, after a reload moved the route) is added to it.
 */
export function routeOf(state: GroupState): RouteMatch {
  return {
    routeId: state.routeId,
    receiver: state.receiver,
    groupBy: Object.keys(state.labels),
    groupWait: state.groupWait,
    groupInterval: state.groupInterval,
    repeatInterval: state.repeatInterval,
    sendResolved: state.sendResolved,
  };
}
