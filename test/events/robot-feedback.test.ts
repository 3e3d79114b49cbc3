import { describe, expect, it } from 'vitest';
import { EVENT } from '../../src/events/catalogue.js';
import { normalizeFeedback, robotFeedbackDetector } from '../../src/events/detectors/robot-feedback.js';
import { Script, typesOf } from './helpers.js';

const platformFeedback = {
  timestamp_utc: { sec: 1740830400, nanosec: 0 },
  cortex_status: { status: 2, status_text: 'ACTIVE', description: 'autonomy engaged' },
  navigation_feedback: {
    nav2_goal_status: { goal_info: {}, status: 2, status_text: 'EXECUTING', text: '' },
    total_distance_remaining: 12.5,
  },
  vehicle_feedback: { state: 'DRIVING', description: '', data: [] },
  current_command_index: 3,
  number_commands_remaining: 2,
};

describe('normalizeFeedback', () => {
  const expected = {
    cortexStatus: 2,
    cortexText: 'ACTIVE',
    navStatus: 2,
    navText: 'EXECUTING',
    vehicleState: 'DRIVING',
  };

  it('reads the whole response, { platform_feedback } or the object itself', () => {
    expect(
      normalizeFeedback({ status: 'success', message: '', data: { platform_feedback: platformFeedback } }),
    ).toEqual(expected);
    expect(normalizeFeedback({ platform_feedback: platformFeedback })).toEqual(expected);
    expect(normalizeFeedback(platformFeedback)).toEqual(expected);
  });

  it('leaves out what is missing or of the wrong type, and accepts numeric strings', () => {
    expect(
      normalizeFeedback({
        cortex_status: { status: '3', status_text: 7 },
        navigation_feedback: { nav2_goal_status: { status: 1.5 } },
        vehicle_feedback: { state: '' },
      }),
    ).toEqual({ cortexStatus: 3 });
  });

  it('never throws', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('boom');
        },
        has() {
          throw new Error('boom');
        },
        getOwnPropertyDescriptor() {
          throw new Error('boom');
        },
      },
    );
    for (const payload of [
      undefined,
      null,
      0,
      'x',
      [],
      [platformFeedback],
      { data: null },
      { data: { platform_feedback: 5 } },
      hostile,
    ]) {
      expect(() => normalizeFeedback(payload)).not.toThrow();
    }
    expect(normalizeFeedback({ data: { platform_feedback: 5 } })).toEqual({});
  });
});

const feedback = () => new Script(robotFeedbackDetector, undefined);

describe('robot feedback', () => {
  it('sets the baseline silently', () => {
    const script = feedback();
    script.ok(0, normalizeFeedback(platformFeedback));
    script.ok(10, normalizeFeedback(platformFeedback));
    expect(script.all).toEqual([]);
  });

  it('reports autonomy, navigation and vehicle state changes, once per change', () => {
    const script = feedback();
    script.ok(0, {
      cortexStatus: 1,
      cortexText: 'IDLE',
      navStatus: 1,
      navText: 'ACCEPTED',
      vehicleState: 'PARKED',
    });
    expect(
      script.ok(10, { cortexStatus: 2, cortexText: 'ACTIVE', navStatus: 1, vehicleState: 'PARKED' }),
    ).toEqual([
      {
        type: EVENT.robotAutonomyChanged,
        data: {
          severity: 'info',
          previous: { status: 1, text: 'IDLE' },
          current: { status: 2, text: 'ACTIVE' },
        },
      },
    ]);
    expect(script.ok(20, { cortexStatus: 2, navStatus: 2, vehicleState: 'DRIVING' })).toEqual([
      {
        type: EVENT.robotNavigationChanged,
        data: {
          severity: 'info',
          previous: { status: 1, text: 'ACCEPTED' },
          current: { status: 2, text: 'executing' },
        },
      },
      { type: EVENT.robotStateChanged, data: { severity: 'info', previous: 'PARKED', current: 'DRIVING' } },
    ]);
    expect(script.ok(30, { cortexStatus: 2, navStatus: 2, vehicleState: 'DRIVING' })).toEqual([]);
    expect(script.count(EVENT.robotAutonomyChanged)).toBe(1);
    expect(script.count(EVENT.robotNavigationChanged)).toBe(1);
    expect(script.count(EVENT.robotStateChanged)).toBe(1);
  });

  it('raises an aborted navigation goal to warning', () => {
    const script = feedback();
    script.ok(0, { navStatus: 2 });
    const events = script.ok(10, { navStatus: 6, navText: 'ABORTED' });
    expect(events).toEqual([
      {
        type: EVENT.robotNavigationChanged,
        data: {
          severity: 'warning',
          previous: { status: 2, text: 'executing' },
          current: { status: 6, text: 'ABORTED' },
        },
      },
    ]);
    expect(script.ok(20, { navStatus: 4 })[0]?.data.severity).toBe('info');
  });

  it('does not trigger on missing fields, and keeps what was known', () => {
    const script = feedback();
    script.ok(0, { cortexStatus: 1, navStatus: 2, vehicleState: 'PARKED' });
    script.ok(10, {});
    script.ok(20, { cortexText: 'IDLE' });
    script.ok(30, { vehicleState: 'PARKED' });
    expect(script.all).toEqual([]);
    expect(typesOf(script.ok(40, { cortexStatus: 3 }))).toEqual([EVENT.robotAutonomyChanged]);
  });

  it('does not report a change of wording alone, but compares texts when there are no numbers', () => {
    const script = feedback();
    script.ok(0, { cortexStatus: 2, cortexText: 'ACTIVE' });
    expect(script.ok(10, { cortexStatus: 2, cortexText: 'Active' })).toEqual([]);
    const text = feedback();
    text.ok(0, { cortexText: 'IDLE' });
    expect(text.ok(10, { cortexText: 'idle' })).toEqual([]);
    expect(typesOf(text.ok(20, { cortexText: 'ACTIVE' }))).toEqual([EVENT.robotAutonomyChanged]);
  });

  it('ignores failed observations', () => {
    const script = feedback();
    script.ok(0, { cortexStatus: 1 });
    for (let i = 1; i < 5; i += 1) script.fail(i, 'timeout');
    script.ok(10, { cortexStatus: 1 });
    expect(script.all).toEqual([]);
  });
});
