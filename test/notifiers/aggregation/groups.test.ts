import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FleetEvent } from '../../../src/events/types.js';
import { PersistentMap } from '../../../src/lib/persistent-map.js';
import {
  acknowledge,
  addEvent,
  addEvents,
  closeSubject,
  due,
  dueAt,
  flush,
  type GroupState,
  type IncidentState,
  isIdle,
  nextWakeAt,
  openGroup,
  RECHECK_MAX_MS,
  RECHECK_MS,
  recheckDelay,
  reminders,
} from '../../../src/notifiers/aggregation/groups.js';
import type { Notification } from '../../../src/notifiers/notifier.js';
import { groupFor } from '../../../src/notifiers/routing/labels.js';
import type { RouteMatch } from '../../../src/notifiers/routing/router.js';
import {
  fleetEvent,
  HOUR,
  roundTrip as jsonRoundTrip,
  MINUTE,
  routeMatch,
  SECOND,
  T0,
  vpnBack,
  vpnLost,
} from '../routing/helpers.js';

/**
 * Through JSON and back, as the store keeps a group: plain JSON but for the incidents, which come
 * back as a map built anew (sharing nothing with the one written).
 */
function roundTrip(state: GroupState): GroupState {
  const plain = jsonRoundTrip(state) as unknown as Omit<GroupState, 'incidents'> & {
    incidents: Record<string, IncidentState>;
  };
  return { ...plain, incidents: PersistentMap.from(Object.entries(plain.incidents)) };
}

function newGroup(match: RouteMatch = routeMatch(), now = T0, first: FleetEvent = vpnLost('x')): GroupState {
  return openGroup(groupFor(first, {}, match), match, now);
}

/** Adds and round-trips through JSON, as the caller does through Redis. */
function add(
  state: GroupState,
  event: FleetEvent,
  now: number,
  match = routeMatch(),
  muted = false,
): GroupState {
  return roundTrip(addEvent(state, event, now, match, { muted }));
}

function flushed(state: GroupState, now: number): { notification: Notification; state: GroupState } {
  const result = flush(state, now);
  if (!result.notification) throw new Error(`nothing to flush at +${(now - T0) / 1000}s`);
  return { notification: result.notification, state: roundTrip(result.state) };
}

describe('grouping', () => {
  it('turns a burst of 40 VPN losses into one notification', () => {
    const match = routeMatch();
    let state = newGroup(match);
    for (let i = 0; i < 40; i += 1) {
      state = add(
        state,
        vpnLost(`veh-${String(i).padStart(3, '0')}`, { time: T0 + i * 100 }),
        T0 + i * 500,
        match,
      );
    }
    expect(flush(state, T0 + 29 * SECOND).notification).toBeUndefined();
    const { notification, state: after } = flushed(state, T0 + 30 * SECOND);
    expect(notification).toMatchObject({
      receiver: 'ops',
      groupKey: state.key,
      groupLabels: { type: 'vehicle.vpn.disconnected' },
      status: 'firing',
      severity: 'warning',
      createdAt: new Date(T0 + 30 * SECOND).toISOString(),
    });
    expect(notification.events).toHaveLength(40);
    expect(notification.events.map((event) => event.subject)[0]).toBe('vehicle/veh-000');
    expect(notification.reminder).toBeUndefined();
    expect(after.pending).toEqual([]);
    expect([...after.incidents.keys()]).toHaveLength(40);
    expect(flush(after, T0 + HOUR).notification).toBeUndefined();
  });

  it('takes a redelivered event once however many are pending, from any version of the state', () => {
    // Enough pending events that their ids are kept in a set handed from version to version.
    const match = routeMatch();
    const events = Array.from({ length: 100 }, (_, i) => vpnLost(`veh-${i}`, { time: T0 + i }));
    const versions = [newGroup(match)];
    for (const event of events) versions.push(addEvent(versions.at(-1)!, event, T0, match));
    const last = versions.at(-1)!;
    expect(last.pending).toHaveLength(100);
    for (const event of [events[0]!, events[50]!, events[99]!]) {
      expect(addEvent(last, event, T0, match)).toBe(last);
    }
    // An older version (a retried change starts from one) knows its own pending events only.
    const older = versions[60]!;
    expect(addEvent(older, events[40]!, T0, match)).toBe(older);
    expect(addEvent(older, events[80]!, T0, match).pending).toHaveLength(older.pending.length + 1);
    expect(addEvent(last, vpnLost('veh-new'), T0, match).pending).toHaveLength(101);
    expect(addEvent(roundTrip(last), events[70]!, T0, match).pending).toHaveLength(100);
  });

  it('orders events oldest first by event time', () => {
    let state = newGroup();
    state = add(state, vpnLost('b', { time: T0 + 2 * SECOND }), T0);
    state = add(state, vpnLost('a', { time: T0 + SECOND }), T0 + 1);
    expect(flushed(state, T0 + MINUTE).notification.events.map((event) => event.subject)).toEqual([
      'vehicle/a',
      'vehicle/b',
    ]);
  });

  it('waits group_wait after the first event, then group_interval after the last flush', () => {
    let state = newGroup();
    expect(dueAt(state)).toBeUndefined();
    state = add(state, vpnLost('a'), T0);
    state = add(state, vpnLost('b'), T0 + 20 * SECOND);
    expect(dueAt(state)).toBe(T0 + 30 * SECOND);
    expect(due(state, T0 + 30 * SECOND - 1)).toBe(false);
    expect(due(state, T0 + 30 * SECOND)).toBe(true);
    ({ state } = flushed(state, T0 + 30 * SECOND));

    // Ten seconds later: due group_interval after that flush, not group_wait after the event.
    state = add(state, vpnLost('c'), T0 + 40 * SECOND);
    expect(dueAt(state)).toBe(T0 + 30 * SECOND + 5 * MINUTE);
    const second = flushed(state, T0 + 30 * SECOND + 5 * MINUTE);
    expect(second.notification.events.map((event) => event.subject)).toEqual(['vehicle/c']);
    state = second.state;

    // A burst starting just before the interval ends is still given group_wait to gather.
    const flushedAt = T0 + 30 * SECOND + 5 * MINUTE;
    state = add(state, vpnLost('d'), flushedAt + 5 * MINUTE - 10 * SECOND);
    expect(dueAt(state)).toBe(flushedAt + 5 * MINUTE + 20 * SECOND);

    // After a long quiet the next event waits group_wait only.
    let quiet = flushed(state, flushedAt + HOUR).state;
    quiet = add(quiet, vpnLost('e'), flushedAt + 2 * HOUR);
    expect(dueAt(quiet)).toBe(flushedAt + 2 * HOUR + 30 * SECOND);
  });

  it('flushes resolutions as a resolved notification, mixed ones as firing', () => {
    let state = newGroup();
    state = add(state, vpnLost('a'), T0);
    state = add(state, vpnLost('b'), T0);
    ({ state } = flushed(state, T0 + MINUTE));

    state = add(state, vpnBack('a'), T0 + 2 * MINUTE);
    state = add(state, vpnBack('b'), T0 + 3 * MINUTE);
    const resolved = flushed(state, T0 + 10 * MINUTE);
    expect(resolved.notification).toMatchObject({ status: 'resolved', severity: 'info' });
    expect(resolved.notification.events.map((event) => event.type)).toEqual([
      'vehicle.vpn.connected',
      'vehicle.vpn.connected',
    ]);
    expect(resolved.state.incidents.size).toBe(0);
    expect(isIdle(resolved.state)).toBe(true);

    state = add(resolved.state, vpnBack('c'), T0 + 11 * MINUTE);
    state = add(state, vpnLost('d'), T0 + 11 * MINUTE);
    expect(flushed(state, T0 + 20 * MINUTE).notification).toMatchObject({
      status: 'firing',
      severity: 'warning',
    });
  });

  it('keeps a flap inside one window in one notification and closes its incident', () => {
    let state = newGroup();
    state = add(state, vpnLost('a'), T0);
    state = add(state, vpnBack('a'), T0 + 10 * SECOND);
    expect(state.incidents.size).toBe(0);
    const { notification } = flushed(state, T0 + 30 * SECOND);
    expect(notification.status).toBe('firing');
    expect(notification.events.map((event) => event.type)).toEqual([
      'vehicle.vpn.disconnected',
      'vehicle.vpn.connected',
    ]);
  });

  it('drops resolutions with send_resolved: false, but still closes the incident', () => {
    const match = routeMatch({ sendResolved: false });
    let state = newGroup(match);
    state = add(state, vpnLost('a'), T0, match);
    ({ state } = flushed(state, T0 + MINUTE));
    state = add(state, vpnBack('a'), T0 + 2 * MINUTE, match);
    expect(state.pending).toEqual([]);
    expect(state.incidents.size).toBe(0);
    expect(flush(state, T0 + HOUR).notification).toBeUndefined();
    expect(reminders(state, T0 + 10 * HOUR).notification).toBeUndefined();
  });

  it('sends a resolution it never saw fire (state lost, firing silenced)', () => {
    let state = newGroup();
    state = add(state, vpnBack('a'), T0);
    expect(flushed(state, T0 + MINUTE).notification.status).toBe('resolved');
  });

  it('ignores an event it already has or has flushed (redelivery)', () => {
    const event = vpnLost('a', { id: 'e-1' });
    let state = newGroup();
    state = add(state, event, T0);
    expect(add(state, event, T0 + 1)).toEqual(state);
    ({ state } = flushed(state, T0 + MINUTE));
    expect(add(state, { ...event }, T0 + 2 * MINUTE)).toEqual(state);
  });

  it('gives notifications stable ids: the same flush twice has the same id, the next one another', () => {
    let state = newGroup();
    state = add(state, vpnLost('a'), T0);
    const first = flush(state, T0 + MINUTE);
    const again = flush(roundTrip(state), T0 + MINUTE + 5 * SECOND);
    expect(first.notification?.id).toBe(again.notification?.id);
    expect(first.notification?.id).toMatch(new RegExp(`^${state.key}~[0-9a-z]+~1$`));
    expect(first.notification?.id).not.toContain(':');

    let next = add(first.state, vpnLost('b'), T0 + 2 * MINUTE);
    const second = flushed(next, T0 + 10 * MINUTE);
    expect(second.notification.id).toMatch(/~2$/);

    // A group created again under the same key (after an idle one was dropped) never reuses an id.
    next = add(newGroup(routeMatch(), T0 + HOUR), vpnLost('a'), T0 + HOUR);
    expect(flushed(next, T0 + 2 * HOUR).notification.id).not.toBe(first.notification?.id);
  });

  it('keeps its state JSON (incidents as an object) at every step', () => {
    const match = routeMatch();
    const plain = (state: GroupState) => expect(roundTrip(state)).toStrictEqual(state);
    let state = newGroup(match);
    plain(state);
    state = addEvent(state, vpnLost('a'), T0, match);
    state = addEvent(state, fleetEvent('vehicle.ip.changed', 'vehicle/a'), T0, match, { muted: true });
    plain(state);
    state = flush(state, T0 + MINUTE).state;
    plain(state);
    state = reminders(state, T0 + 5 * HOUR).state;
    plain(state);
    state = addEvent(state, vpnBack('a'), T0 + 6 * HOUR, match);
    plain(state);
    expect(nextWakeAt(state)).toBe(T0 + 6 * HOUR + 30 * SECOND);
  });

  it('refreshes timing from the route on every event (config reloads)', () => {
    let state = newGroup();
    state = add(state, vpnLost('a'), T0, routeMatch({ groupWait: 5 * SECOND }));
    expect(dueAt(state)).toBe(T0 + 5 * SECOND);
  });
});

describe('incidents and reminders', () => {
  it('reminds a group of 250,000 open incidents in one notification', () => {
    // More incidents than a call takes arguments: nothing about them may be spread into one.
    const size = 250_000;
    const firstNotifiedAt = T0 - HOUR;
    const incidents = PersistentMap.from(
      Array.from({ length: size }, (_, i): [string, IncidentState] => {
        const event = vpnLost(`v${i}`, { id: `e${i}` });
        const incident = { subject: event.subject, key: 'vpn', openedAt: firstNotifiedAt, event };
        return [
          `${event.subject}#vpn`,
          { ...incident, reminders: i % 3, firstNotifiedAt: firstNotifiedAt + i, dueAt: T0 },
        ];
      }),
    );
    const { notification } = reminders({ ...newGroup(), incidents }, T0);
    expect(notification?.events).toHaveLength(size);
    expect(notification?.reminder).toEqual({
      firstNotifiedAt: new Date(firstNotifiedAt).toISOString(),
      count: 3,
    });
    // A quarter of a million incidents take seconds to build and remind on a slow or busy machine.
  }, 60_000);

  it('opens an incident per (subject, key) on firing and closes it on resolution', () => {
    let state = newGroup();
    state = add(state, vpnLost('a'), T0);
    expect(state.incidents.get('vehicle/a#vpn')).toMatchObject({
      subject: 'vehicle/a',
      key: 'vpn',
      openedAt: T0,
    });
    expect(state.incidents.get('vehicle/a#vpn')?.firstNotifiedAt).toBeUndefined();
    ({ state } = flushed(state, T0 + MINUTE));
    expect(state.incidents.get('vehicle/a#vpn')).toMatchObject({
      firstNotifiedAt: T0 + MINUTE,
      lastNotifiedAt: T0 + MINUTE,
      dueAt: T0 + MINUTE + 4 * HOUR,
    });
    state = add(state, vpnBack('a'), T0 + 2 * MINUTE);
    expect(state.incidents.size).toBe(0);
  });

  it("closes a removed entity's incidents", () => {
    const match = routeMatch({ groupBy: [] });
    let state = newGroup(match);
    state = add(state, vpnLost('a'), T0, match);
    state = add(state, fleetEvent('vehicle.unreachable', 'vehicle/a'), T0, match);
    state = add(state, vpnLost('b'), T0, match);
    state = add(state, fleetEvent('vehicle.removed', 'vehicle/a'), T0 + SECOND, match);
    expect([...state.incidents.keys()]).toEqual(['vehicle/b#vpn']);
    expect([...closeSubject(state, 'vehicle/b').incidents.keys()]).toEqual([]);
    expect(closeSubject(state, 'vehicle/zzz')).toBe(state);
  });

  it('reminds of incidents still firing every repeat_interval, counting', () => {
    let state = newGroup();
    const firstA = vpnLost('a', { time: T0 });
    state = add(state, firstA, T0);
    state = add(state, vpnLost('b'), T0);
    state = add(state, vpnLost('c'), T0);
    const flushedAt = T0 + 30 * SECOND;
    ({ state } = flushed(state, flushedAt));
    state = add(state, vpnBack('c'), T0 + HOUR);
    ({ state } = flushed(state, T0 + 2 * HOUR));

    expect(reminders(state, flushedAt + 4 * HOUR - 1).notification).toBeUndefined();
    expect(nextWakeAt(state)).toBe(flushedAt + 4 * HOUR);
    const first = reminders(state, flushedAt + 4 * HOUR);
    expect(first.notification).toMatchObject({
      status: 'firing',
      severity: 'warning',
      reminder: { firstNotifiedAt: new Date(flushedAt).toISOString(), count: 1 },
    });
    expect(first.notification?.events.map((event) => event.subject)).toEqual(['vehicle/a', 'vehicle/b']);
    state = roundTrip(first.state);
    expect(reminders(state, flushedAt + 5 * HOUR).notification).toBeUndefined();

    // A newer firing event for the same incident is what the reminder repeats.
    const secondA = vpnLost('a', { time: T0 + 6 * HOUR });
    state = add(state, secondA, T0 + 6 * HOUR);
    ({ state } = flushed(state, T0 + 7 * HOUR));
    const second = reminders(state, flushedAt + 8 * HOUR);
    expect(second.notification?.events.map((event) => event.subject)).toEqual(['vehicle/b']);
    expect(second.notification?.reminder?.count).toBe(2);
    const third = reminders(roundTrip(second.state), T0 + 11 * HOUR);
    expect(third.notification?.events).toEqual([secondA]);
    expect(third.notification?.reminder?.count).toBe(2);
    expect(third.notification?.id).not.toBe(second.notification?.id);
  });

  it('holds a muted event back and announces its incident once unmuted, if it still fires', () => {
    let state = newGroup();
    state = add(state, vpnLost('a'), T0, routeMatch(), true);
    state = add(state, vpnLost('b'), T0, routeMatch(), true);
    state = add(state, fleetEvent('vehicle.ip.changed', 'vehicle/a'), T0, routeMatch(), true);
    expect(state.pending).toEqual([]);
    expect(dueAt(state)).toBeUndefined();
    expect(nextWakeAt(state)).toBe(T0);

    // Still in maintenance: looked at again group_interval later, nothing sent.
    const during = reminders(state, T0 + MINUTE, { muted: () => true });
    expect(during.notification).toBeUndefined();
    expect(nextWakeAt(during.state)).toBe(T0 + 6 * MINUTE);

    // b comes back during maintenance (muted too): nothing to say about it, ever.
    state = add(roundTrip(during.state), vpnBack('b'), T0 + 2 * MINUTE, routeMatch(), true);
    const after = reminders(state, T0 + HOUR, { muted: () => false });
    expect(after.notification?.events.map((event) => event.subject)).toEqual(['vehicle/a']);
    expect(after.notification?.reminder).toBeUndefined();
    expect(after.state.incidents.get('vehicle/a#vpn')).toMatchObject({
      firstNotifiedAt: T0 + HOUR,
      reminders: 0,
      dueAt: T0 + 5 * HOUR,
    });
    expect(reminders(after.state, T0 + 5 * HOUR).notification?.reminder).toEqual({
      firstNotifiedAt: new Date(T0 + HOUR).toISOString(),
      count: 1,
    });
  });

  it('keeps out at flush an event that is muted by then, opening its incident unannounced', () => {
    let state = newGroup();
    const a = vpnLost('a');
    const b = vpnLost('b');
    state = add(state, a, T0);
    state = add(state, b, T0);
    const result = flush(state, T0 + MINUTE, { muted: (event) => event.id === a.id });
    expect(result.muted).toEqual([a]);
    expect(result.notification?.events).toEqual([b]);
    expect(result.state.recentIds).toContain(a.id);
    expect(result.state.incidents.get('vehicle/a#vpn')).toMatchObject({ dueAt: T0 + MINUTE });
    expect(result.state.incidents.get('vehicle/a#vpn')?.firstNotifiedAt).toBeUndefined();
    // Announced once no longer muted, like an event muted on arrival.
    const later = reminders(roundTrip(result.state), T0 + 2 * MINUTE, { muted: () => false });
    expect(later.notification?.events).toEqual([a]);
  });

  it('makes the whole flush wait while an event cannot be judged, then sends the burst as one', () => {
    let state = newGroup();
    const a = vpnLost('a');
    const b = vpnLost('b');
    state = add(state, a, T0);
    state = add(state, b, T0);
    const waiting = flush(state, T0 + 30 * SECOND, { waits: (event) => event.id === a.id });
    expect(waiting.notification).toBeUndefined();
    expect(waiting.state.pending).toEqual([a, b]);
    // Waited 30 s: looked at again a quarter of that later, at most RECHECK_MAX_MS.
    expect(waiting.state.recheckAt).toBe(T0 + 35 * SECOND);
    expect(dueAt(waiting.state)).toBe(T0 + 35 * SECOND);
    expect(flush(waiting.state, T0 + 34_500, { waits: () => false }).notification).toBeUndefined();
    const sent = flush(roundTrip(waiting.state), T0 + 35 * SECOND, { waits: () => false });
    expect(sent.notification?.events).toEqual([a, b]);
    expect(sent.state.recheckAt).toBeUndefined();
  });

  it('looks at a waiting group again sooner the less its oldest waiting event has waited', () => {
    const at = (ms: number) => vpnLost('a', { time: T0 + ms });
    expect(recheckDelay(T0, [at(0)])).toBe(RECHECK_MS);
    expect(recheckDelay(T0 + 3 * SECOND, [at(0)])).toBe(RECHECK_MS);
    expect(recheckDelay(T0 + 12 * SECOND, [at(0)])).toBe(3 * SECOND);
    expect(recheckDelay(T0 + 12 * SECOND, [at(8 * SECOND), at(0)])).toBe(3 * SECOND);
    expect(recheckDelay(T0 + HOUR, [at(0)])).toBe(RECHECK_MAX_MS);
    // A time in the future (another clock) or none at all: the shortest.
    expect(recheckDelay(T0, [at(MINUTE)])).toBe(RECHECK_MS);
    expect(recheckDelay(T0, [{ ...vpnLost('a'), time: 'not a time' }])).toBe(RECHECK_MS);
    expect(recheckDelay(T0, [])).toBe(RECHECK_MS);
    // A 60 s wait: about twenty looks instead of sixty, none more than 5 s apart.
    let looks = 0;
    for (let t = 0; t < MINUTE; t += recheckDelay(T0 + t, [at(0)])) looks += 1;
    expect(looks).toBeGreaterThan(15);
    expect(looks).toBeLessThan(25);
  });

  it('makes the announcement of an incident opened muted wait while it cannot be judged', () => {
    let state = newGroup();
    state = add(state, vpnLost('a'), T0, routeMatch(), true);
    const waiting = reminders(state, T0 + MINUTE, { muted: () => false, waits: () => true });
    expect(waiting.notification).toBeUndefined();
    expect(nextWakeAt(waiting.state)).toBe(T0 + MINUTE + RECHECK_MAX_MS);
    const announced = reminders(waiting.state, T0 + MINUTE + RECHECK_MAX_MS, {
      muted: () => false,
      waits: () => false,
    });
    expect(announced.notification?.events.map((event) => event.subject)).toEqual(['vehicle/a']);
    // An announced incident's reminders are never waiting.
    const reminder = reminders(announced.state, T0 + 10 * HOUR, { waits: () => true });
    expect(reminder.notification?.reminder?.count).toBe(1);
  });

  it('sends the resolution of an incident it announced, muted or not', () => {
    let state = newGroup();
    state = add(state, vpnLost('a'), T0);
    ({ state } = flushed(state, T0 + MINUTE));
    const back = vpnBack('a');
    state = add(state, back, T0 + 2 * MINUTE, routeMatch(), true);
    expect(state.pending).toEqual([back]);
    // Muted again at flush, or not judged yet: said all the same.
    const result = flush(state, T0 + 10 * MINUTE, { muted: () => true, waits: () => true });
    expect(result.muted).toEqual([]);
    expect(result.notification?.events).toEqual([back]);
    expect(result.notification?.status).toBe('resolved');
    expect(result.state.closing).toBeUndefined();
  });

  it('does not send the resolution of an incident nobody was told about', () => {
    let state = newGroup();
    state = add(state, vpnLost('a'), T0, routeMatch(), true);
    state = add(state, vpnBack('a'), T0 + MINUTE);
    expect(state.pending).toEqual([]);
    expect(state.incidents.size).toBe(0);
    // Firing and resolution both pending: both are said, in one notification.
    state = add(state, vpnLost('b'), T0 + 2 * MINUTE);
    state = add(state, vpnBack('b'), T0 + 2 * MINUTE + SECOND);
    expect(flushed(state, T0 + 3 * MINUTE).notification.events.map((event) => event.type)).toEqual([
      'vehicle.vpn.disconnected',
      'vehicle.vpn.connected',
    ]);
  });

  it('does not remind of an incident whose newer firing event is waiting to be flushed', () => {
    let state = newGroup();
    state = add(state, vpnLost('a'), T0);
    ({ state } = flushed(state, T0 + MINUTE));
    state = add(state, vpnLost('a'), T0 + 4 * HOUR);
    expect(reminders(state, T0 + 4 * HOUR + MINUTE).notification).toBeUndefined();
  });
});

/** `incident.acknowledged` of vehicle/<vehicle>'s VPN incident, until `until`. */
function acked(vehicle: string, at: number, until: number, comment = 'on it'): FleetEvent {
  const event = fleetEvent('incident.acknowledged', `incident/vpn-${vehicle}-00000000`, { time: at });
  return {
    ...event,
    data: {
      severity: 'info',
      incident: `vpn-${vehicle}-00000000`,
      entity: `vehicle/${vehicle}`,
      key: 'vpn',
      firing: 'vehicle.vpn.disconnected',
      since: new Date(T0).toISOString(),
      by: 'dana',
      comment,
      until: new Date(until).toISOString(),
    },
  };
}

describe('acknowledgements', () => {
  it('hold the reminders of the incident until they end, and show in the next notification', () => {
    let state = newGroup();
    state = add(state, vpnLost('a'), T0);
    state = add(state, vpnLost('b'), T0);
    ({ state } = flushed(state, T0 + 30 * SECOND));
    const ack = acked('a', T0 + HOUR, T0 + 10 * HOUR);
    state = roundTrip(acknowledge(state, ack, T0 + HOUR));
    expect(state.incidents.get('vehicle/a#vpn')).toMatchObject({
      ack: { by: 'dana', comment: 'on it', until: T0 + 10 * HOUR },
      dueAt: T0 + 10 * HOUR,
    });
    // The group's next notification carries the acknowledgement.
    const shown = flushed(state, T0 + HOUR + 5 * MINUTE);
    expect(shown.notification.events).toEqual([ack]);
    state = shown.state;

    // At repeat_interval only b is reminded of; a again once the acknowledgement has ended.
    const first = reminders(state, T0 + 30 * SECOND + 4 * HOUR);
    expect(first.notification?.events.map((event) => event.subject)).toEqual(['vehicle/b']);
    state = roundTrip(first.state);
    expect(reminders(state, T0 + 9 * HOUR).notification?.events.map((event) => event.subject)).toEqual([
      'vehicle/b',
    ]);
    expect(nextWakeAt(state)).toBe(T0 + 30 * SECOND + 8 * HOUR);
    const afterAck = reminders(state, T0 + 10 * HOUR);
    expect(afterAck.notification?.events.map((event) => event.subject)).toEqual(['vehicle/a', 'vehicle/b']);
  });

  it('let the reminders start again as soon as a short acknowledgement ends', () => {
    let state = newGroup();
    state = add(state, vpnLost('a'), T0);
    ({ state } = flushed(state, T0 + 30 * SECOND));
    // repeat_interval (4h) would remind at T0 + 4h 30s; acknowledged for 30 minutes at T0 + 1 min.
    state = roundTrip(acknowledge(state, acked('a', T0 + MINUTE, T0 + 31 * MINUTE), T0 + MINUTE));
    expect(state.incidents.get('vehicle/a#vpn')?.dueAt).toBe(T0 + 31 * MINUTE);
    // The group's next notification shows the acknowledgement; no reminder until it ends.
    ({ state } = flushed(state, T0 + 10 * MINUTE));
    expect(reminders(state, T0 + 30 * MINUTE).notification).toBeUndefined();
    const after = reminders(state, T0 + 31 * MINUTE);
    expect(after.notification?.events.map((event) => event.subject)).toEqual(['vehicle/a']);
    expect(after.notification?.reminder?.count).toBe(1);
    // Acknowledging again replaces it: a shorter one ends it sooner.
    let again = roundTrip(acknowledge(state, acked('a', T0 + 11 * MINUTE, T0 + 2 * HOUR), T0 + 11 * MINUTE));
    again = roundTrip(acknowledge(again, acked('a', T0 + 12 * MINUTE, T0 + 20 * MINUTE), T0 + 12 * MINUTE));
    expect(again.incidents.get('vehicle/a#vpn')?.dueAt).toBe(T0 + 20 * MINUTE);
  });

  it('are taken once, only by a group holding the incident, and kept quiet while it is muted', () => {
    let state = newGroup();
    state = add(state, vpnLost('a'), T0);
    const ack = acked('a', T0 + MINUTE, T0 + 2 * HOUR);
    const once = acknowledge(state, ack, T0 + MINUTE);
    expect(acknowledge(once, ack, T0 + MINUTE)).toBe(once);
    expect(once.pending.map((event) => event.type)).toEqual([
      'vehicle.vpn.disconnected',
      'incident.acknowledged',
    ]);
    // Announced with its firing event: the first reminder is due when the acknowledgement ends,
    // before repeat_interval would have made it due.
    const { state: after } = flushed(once, T0 + 30 * SECOND);
    expect(after.incidents.get('vehicle/a#vpn')?.dueAt).toBe(T0 + 2 * HOUR);
    const long = flushed(acknowledge(state, acked('a', T0, T0 + 9 * HOUR), T0), T0 + 30 * SECOND);
    expect(long.state.incidents.get('vehicle/a#vpn')?.dueAt).toBe(T0 + 9 * HOUR);

    expect(acknowledge(state, acked('zzz', T0, T0 + HOUR), T0)).toBe(state);
    const quiet = acknowledge(state, ack, T0 + MINUTE, { muted: () => true });
    expect(quiet.pending.map((event) => event.type)).toEqual(['vehicle.vpn.disconnected']);
    expect(quiet.incidents.get('vehicle/a#vpn')?.ack?.by).toBe('dana');
    expect(acknowledge(quiet, ack, T0 + MINUTE)).toBe(quiet);
  });
});

describe('aggregation properties', () => {
  type Step = { kind: 'add'; vehicle: number; resolve: boolean; dt: number } | { kind: 'flush'; dt: number };
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({
      kind: fc.constant('add' as const),
      vehicle: fc.integer({ min: 0, max: 5 }),
      resolve: fc.boolean(),
      dt: fc.integer({ min: 0, max: 120_000 }),
    }),
    fc.record({ kind: fc.constant('flush' as const), dt: fc.integer({ min: 0, max: 600_000 }) }),
  );

  it('never loses an event: each added event is in exactly one flushed notification', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const match = routeMatch({ groupBy: [] });
        let state = newGroup(match);
        let now = T0;
        const added: string[] = [];
        const notified: string[] = [];
        const ids = new Set<string>();
        const take = (notification: Notification | undefined) => {
          if (!notification) return;
          expect(notification.events.length).toBeGreaterThan(0);
          expect(ids.has(notification.id)).toBe(false);
          ids.add(notification.id);
          notified.push(...notification.events.map((event) => event.id));
        };
        for (const action of steps) {
          now += action.dt;
          if (action.kind === 'add') {
            const event = (action.resolve ? vpnBack : vpnLost)(`veh-${action.vehicle}`, { time: now });
            added.push(event.id);
            state = roundTrip(addEvent(state, event, now, match));
          } else {
            const result = flush(state, now);
            take(result.notification);
            state = roundTrip(result.state);
            const reminded = reminders(state, now);
            if (reminded.notification) ids.add(reminded.notification.id);
            state = roundTrip(reminded.state);
          }
        }
        const final = flush(state, now + 10 * HOUR);
        take(final.notification);
        expect(notified.sort()).toEqual(added.sort());
      }),
      { numRuns: 300 },
    );
  });

  it('keeps an incident open exactly while its last event fires', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.boolean()), { maxLength: 40 }),
        (events) => {
          const match = routeMatch({ groupBy: [] });
          let state = newGroup(match);
          const last = new Map<number, boolean>();
          for (const [vehicle, resolve] of events) {
            state = addEvents(state, [(resolve ? vpnBack : vpnLost)(`v${vehicle}`)], T0, match);
            last.set(vehicle, resolve);
          }
          const open = [...last]
            .filter(([, resolve]) => !resolve)
            .map(([vehicle]) => `vehicle/v${vehicle}#vpn`);
          expect([...state.incidents.keys()].sort()).toEqual(open.sort());
        },
      ),
    );
  });

  it('knows the next wake time without walking the incidents, the same as a walk finds it', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 80 }), fc.boolean(), (steps, muted) => {
        // Without round trips: the states share their incident maps as the store's copies do.
        const match = routeMatch({ groupBy: [] });
        let state = newGroup(match);
        let now = T0;
        steps.forEach((action, index) => {
          now += action.dt;
          if (action.kind === 'add') {
            const event = (action.resolve ? vpnBack : vpnLost)(`veh-${action.vehicle}`, { time: now });
            state = addEvent(state, event, now, match, { muted: muted && index % 3 === 0 });
          } else {
            state = reminders(flush(state, now).state, now).state;
          }
          // A copy is a map never seen: its wake time comes from a walk.
          expect(nextWakeAt(state)).toBe(nextWakeAt(roundTrip(state)));
        });
      }),
      { numRuns: 300 },
    );
  });
});
