import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FleetEvent } from '../../../src/events/types.js';
import {
  addEvent,
  addEvents,
  DEFAULT_REDELIVERY_MS,
  flush,
  type GroupState,
  openGroup,
  RECENT_IDS,
  RECENT_IDS_KEPT,
  RECENT_IDS_MAX,
} from '../../../src/notifiers/aggregation/groups.js';
import { groupFor } from '../../../src/notifiers/routing/labels.js';
import { roundTrip, routeMatch, SECOND, T0, vpnLost } from '../routing/helpers.js';

// Guarantee 1: a group recognises an event it took for as long as the event can come back.

const match = routeMatch({ groupWait: 0, groupInterval: 0 });

function newGroup(now = T0): GroupState {
  return openGroup(groupFor(vpnLost('x'), {}, match), match, now);
}

function storm(size: number, tag: string): FleetEvent[] {
  return Array.from({ length: size }, (_, i) => vpnLost(`${tag}-${i}`, { id: `${tag}-${i}` }));
}

/** The group takes `events` at `now` and flushes them in one notification. */
function flushAt(
  state: GroupState,
  events: readonly FleetEvent[],
  now: number,
  rememberMs?: number,
): GroupState {
  const options = rememberMs === undefined ? {} : { rememberMs };
  const result = flush(addEvents(state, events, now, match, options), now, options);
  expect(result.notification?.events).toHaveLength(events.length);
  return result.state;
}

/** Adding the event again changes nothing: the group recognises it. */
function recognises(state: GroupState, event: FleetEvent, now: number): boolean {
  return addEvent(state, event, now, match) === state;
}

describe('recent ids', () => {
  it('recognises every event of a storm redelivered within the redelivery window', () => {
    const events = storm(2_000, 'storm');
    // The storm, then more flushes within the window: each one could push old ids out.
    const first = flushAt(newGroup(), events, T0);
    let state = first;
    const after: FleetEvent[] = [];
    for (let minute = 1; minute <= 4; minute += 1) {
      const more = storm(10, `m${minute}`);
      after.push(...more);
      state = flushAt(state, more, T0 + minute * 60_000);
    }
    const later = T0 + DEFAULT_REDELIVERY_MS - SECOND;
    expect([...events, ...after].filter((event) => !recognises(state, event, later))).toEqual([]);
    // An older version (a retried change starts from one) knows its own ids, not later ones.
    expect(recognises(first, events[1_999]!, later)).toBe(true);
    expect(recognises(first, after[0]!, later)).toBe(false);
    // Also as the store hands it back: through JSON, without the set the last version carried.
    const stored = roundTrip(state) as unknown as GroupState;
    const read = { ...stored, incidents: state.incidents };
    expect(recognises(read, events[0]!, later)).toBe(true);
    expect(recognises(read, vpnLost('new-one'), later)).toBe(false);
  });

  it('forgets them once the window has passed, but for the last 512', () => {
    const events = storm(2_000, 'old');
    let state = flushAt(newGroup(), events, T0);
    const within = flushAt(state, [vpnLost('a')], T0 + DEFAULT_REDELIVERY_MS - SECOND);
    expect(within.recentIds).toHaveLength(2_001);
    // A sixteenth of the window later than the window itself, every storm id has expired.
    const past = T0 + DEFAULT_REDELIVERY_MS + Math.ceil(DEFAULT_REDELIVERY_MS / 16) + 1;
    state = flushAt(state, [vpnLost('b', { id: 'b' })], past);
    expect(state.recentIds).toHaveLength(RECENT_IDS);
    expect(state.recentIds.at(-1)).toBe('b');
    expect(recognises(state, events.at(-1)!, past)).toBe(true);
    expect(recognises(state, events[0]!, past)).toBe(false);
    // Only the ids still within the window keep a time.
    expect(state.recentMarks).toEqual([[expect.any(Number), 1]]);
  });

  it('keeps at most RECENT_IDS_MAX: past it the oldest go down to RECENT_IDS_KEPT, at once', () => {
    const ids = Array.from({ length: RECENT_IDS_MAX }, (_, i) => `full-${i}`);
    const full: GroupState = { ...newGroup(), recentIds: ids, recentMarks: [[T0 + SECOND, RECENT_IDS_MAX]] };
    const state = flushAt(full, [vpnLost('one', { id: 'one' })], T0);
    const dropped = RECENT_IDS_MAX + 1 - RECENT_IDS_KEPT;
    expect(state.recentIds).toHaveLength(RECENT_IDS_KEPT);
    expect(state.recentIds[0]).toBe(`full-${dropped}`);
    expect(state.recentIds.at(-1)).toBe('one');
    const event = (i: number) => vpnLost(`full-${i}`, { id: `full-${i}` });
    expect(recognises(state, event(dropped - 1), T0)).toBe(false);
    expect(recognises(state, event(dropped), T0)).toBe(true);
    // Every id kept is within the window: the marks still cover each one.
    expect((state.recentMarks ?? []).reduce((sum, [, count]) => sum + count, 0)).toBe(RECENT_IDS_KEPT);
    // The next ones are taken without dropping any until the list is full again.
    const next = flushAt(state, [vpnLost('two', { id: 'two' })], T0);
    expect(next.recentIds).toHaveLength(RECENT_IDS_KEPT + 1);
    expect(next.recentIds[0]).toBe(`full-${dropped}`);
  });

  it('reads a group stored before the marks: its ids count as taken long ago', () => {
    const ids = Array.from({ length: 600 }, (_, i) => `legacy-${i}`);
    const { recentMarks: _marks, ...legacy } = { ...newGroup(), recentIds: ids };
    const state = flushAt(legacy as GroupState, [vpnLost('new', { id: 'new' })], T0);
    expect(state.recentIds).toHaveLength(RECENT_IDS);
    expect(state.recentIds.slice(-2)).toEqual(['legacy-599', 'new']);
    expect(state.recentMarks).toEqual([[expect.any(Number), 1]]);
  });

  it('always recognises what it took within the window, and what it took last (model)', () => {
    const WINDOW = 10 * SECOND;
    const step = fc.record({
      // Time since the previous flush, up to three windows.
      gap: fc.integer({ min: 0, max: 3 * WINDOW }),
      size: fc.integer({ min: 1, max: 400 }),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 8 }), (steps) => {
        let state = newGroup();
        let now = T0;
        const taken: Array<{ event: FleetEvent; at: number }> = [];
        for (const [index, { gap, size }] of steps.entries()) {
          now += gap;
          const events = storm(size, `s${index}`);
          state = flushAt(state, events, now, WINDOW);
          for (const event of events) taken.push({ event, at: now });
          const inWindow = taken.filter(({ at }) => at > now - WINDOW);
          const last = taken.slice(-RECENT_IDS);
          for (const { event } of [...inWindow, ...last]) {
            if (addEvent(state, event, now, match, { rememberMs: WINDOW }) !== state) return false;
          }
          // Nothing beyond the window's sixteenth is kept longer than the last RECENT_IDS need.
          const kept = taken.filter(({ at }) => at > now - WINDOW - WINDOW / 16 - 1).length;
          if (state.recentIds.length > Math.max(RECENT_IDS, kept)) return false;
          // Never an id it did not take, and the order is the order taken.
          const order = taken.map(({ event }) => event.id);
          if (state.recentIds.join() !== order.slice(order.length - state.recentIds.length).join())
            return false;
        }
        return true;
      }),
      { numRuns: 60 },
    );
  });
});
