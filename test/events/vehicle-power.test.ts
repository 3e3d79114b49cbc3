import { describe, expect, it } from 'vitest';
import { EVENT } from '../../src/events/catalogue.js';
import { DEFAULT_DETECTOR_OPTIONS, type VehiclePowerOptions } from '../../src/events/detector-options.js';
import { vehiclePowerDetector } from '../../src/events/detectors/vehicle-power.js';
import type { PowerStatus } from '../../src/upstream/schemas/v1.js';
import { at, Script, typesOf } from './helpers.js';

const power = (options: Partial<VehiclePowerOptions> = {}) =>
  new Script(vehiclePowerDetector, {
    ...DEFAULT_DETECTOR_OPTIONS.vehiclePower,
    stuckAfterMs: 300_000,
    staleAfterMs: 900_000,
    ...options,
  });

/** A fresh report (updated at the observation time) unless `updatedAt` is given. */
function status(
  seconds: number,
  state: PowerStatus['state'],
  pending: 'on' | 'off' | null = null,
  updatedAt: string | null = at(seconds),
): PowerStatus {
  return { state, pendingCommand: pending === null ? null : { state: pending }, updatedAt };
}

describe('vehicle power: state and commands', () => {
  it('sets the baseline silently, including a command already pending', () => {
    const script = power();
    expect(script.ok(0, status(0, 'off', 'on'))).toEqual([]);
    expect(script.ok(10, status(10, 'off', 'on'))).toEqual([]);
  });

  it('reports each state change once', () => {
    const script = power();
    script.ok(0, status(0, 'off'));
    expect(script.ok(10, status(10, 'on'))).toEqual([
      {
        type: EVENT.powerChanged,
        data: { severity: 'info', previous: 'off', current: 'on', updatedAt: at(10) },
      },
    ]);
    script.ok(20, status(20, 'on'));
    script.ok(30, status(30, 'unknown'));
    expect(script.count(EVENT.powerChanged)).toBe(2);
  });

  it('follows a command from pending to completed, with how long it took', () => {
    const script = power();
    script.ok(0, status(0, 'off'));
    expect(script.ok(10, status(10, 'off', 'on'))).toEqual([
      {
        type: EVENT.powerCommandPending,
        data: {
          severity: 'info',
          requested: 'on',
          previous: null,
          current: 'on',
          state: 'off',
          pendingSince: at(10),
        },
      },
    ]);
    expect(script.ok(20, status(20, 'off', 'on'))).toEqual([]);
    expect(script.ok(70, status(70, 'on'))).toEqual([
      {
        type: EVENT.powerChanged,
        data: { severity: 'info', previous: 'off', current: 'on', updatedAt: at(70) },
      },
      {
        type: EVENT.powerCommandCompleted,
        data: { severity: 'info', requested: 'on', current: 'on', pendingSince: at(10), durationMs: 60_000 },
      },
    ]);
    expect(script.ok(80, status(80, 'on'))).toEqual([]);
  });

  it('reports a command that clears with the other state as failed', () => {
    const script = power();
    script.ok(0, status(0, 'on'));
    script.ok(10, status(10, 'on', 'off'));
    expect(script.ok(40, status(40, 'on'))).toEqual([
      {
        type: EVENT.powerCommandFailed,
        data: {
          severity: 'warning',
          requested: 'off',
          current: 'on',
          pendingSince: at(10),
          durationMs: 30_000,
        },
      },
    ]);
  });

  it('times a command first seen on the baseline from that observation', () => {
    const script = power();
    script.ok(0, status(0, 'off', 'on'));
    const events = script.ok(30, status(30, 'on'));
    expect(typesOf(events)).toEqual([EVENT.powerChanged, EVENT.powerCommandCompleted]);
    expect(events[1]?.data.durationMs).toBe(30_000);
  });

  it('reports a command replaced by one for the other target as a new pending command', () => {
    const script = power();
    script.ok(0, status(0, 'off'));
    script.ok(10, status(10, 'off', 'on'));
    expect(script.ok(20, status(20, 'off', 'off'))).toEqual([
      {
        type: EVENT.powerCommandPending,
        data: {
          severity: 'info',
          requested: 'off',
          previous: 'on',
          current: 'off',
          state: 'off',
          pendingSince: at(20),
        },
      },
    ]);
    expect(typesOf(script.ok(30, status(30, 'off')))).toEqual([EVENT.powerCommandCompleted]);
    expect(script.all.at(-1)?.data.durationMs).toBe(10_000);
  });
});

describe('vehicle power: stuck commands', () => {
  it('fires once when pending longer than stuck_after, and resolves with the outcome when it completes', () => {
    const script = power({ stuckAfterMs: 300_000 });
    script.ok(0, status(0, 'off'));
    script.ok(60, status(60, 'off', 'on'));
    expect(script.ok(360, status(360, 'off', 'on'))).toEqual([]); // exactly 5m: not longer than
    expect(script.ok(361, status(361, 'off', 'on'))).toEqual([
      {
        type: EVENT.powerCommandStuck,
        data: {
          severity: 'warning',
          requested: 'on',
          current: 'off',
          pendingSince: at(60),
          pendingForMs: 301_000,
          stuckAfterMs: 300_000,
        },
      },
    ]);
    for (let s = 400; s < 1000; s += 100) expect(script.ok(s, status(s, 'off', 'on'))).toEqual([]);
    expect(script.ok(1060, status(1060, 'on'))).toEqual([
      {
        type: EVENT.powerChanged,
        data: { severity: 'info', previous: 'off', current: 'on', updatedAt: at(1060) },
      },
      {
        type: EVENT.powerCommandCompleted,
        data: {
          severity: 'info',
          requested: 'on',
          current: 'on',
          pendingSince: at(60),
          durationMs: 1_000_000,
        },
      },
      {
        type: EVENT.powerCommandUnstuck,
        data: {
          severity: 'info',
          requested: 'on',
          current: 'on',
          outcome: 'completed',
          since: at(60),
          durationMs: 1_000_000,
        },
      },
    ]);
    expect(script.count(EVENT.powerCommandStuck)).toBe(1);
    expect(script.count(EVENT.powerCommandUnstuck)).toBe(1);
  });

  it('measures the age against context.now', () => {
    const script = power({ stuckAfterMs: 60_000 });
    script.ok(0, status(0, 'off', 'on'));
    expect(typesOf(script.ok(10, status(10, 'off', 'on', at(100)), 100))).toEqual([EVENT.powerCommandStuck]);
  });

  it('resolves a stuck command that failed or was superseded, and times the new one afresh', () => {
    const script = power({ stuckAfterMs: 60_000 });
    script.ok(0, status(0, 'off', 'on'));
    script.ok(100, status(100, 'off', 'on'));
    const superseded = script.ok(110, status(110, 'off', 'off'));
    expect(typesOf(superseded)).toEqual([EVENT.powerCommandUnstuck, EVENT.powerCommandPending]);
    expect(superseded[0]?.data.outcome).toBe('superseded');
    expect(script.ok(150, status(150, 'off', 'off'))).toEqual([]);
    expect(typesOf(script.ok(171, status(171, 'on', 'off')))).toEqual([
      EVENT.powerChanged,
      EVENT.powerCommandStuck,
    ]);
    const failed = script.ok(200, status(200, 'on'));
    expect(typesOf(failed)).toEqual([EVENT.powerCommandFailed, EVENT.powerCommandUnstuck]);
    expect(failed[1]?.data).toMatchObject({ outcome: 'failed', since: at(110), durationMs: 90_000 });
  });
});

describe('vehicle power: stale reports', () => {
  it('fires when updatedAt is null, once, and resolves when a fresh report arrives', () => {
    const script = power();
    script.ok(0, status(0, 'on'));
    expect(script.ok(10, status(10, 'on', null, null))).toEqual([
      {
        type: EVENT.powerReportStale,
        data: { severity: 'warning', updatedAt: null, ageMs: null, staleAfterMs: 900_000, current: 'on' },
      },
    ]);
    expect(script.ok(20, status(20, 'on', null, null))).toEqual([]);
    expect(script.ok(70, status(70, 'on', null, at(65)))).toEqual([
      {
        type: EVENT.powerReportFresh,
        data: { severity: 'info', updatedAt: at(65), current: 'on', since: at(10), durationMs: 60_000 },
      },
    ]);
  });

  it('fires when updatedAt is older than stale_after relative to now', () => {
    const script = power({ staleAfterMs: 900_000 });
    script.ok(0, status(0, 'on', null, at(0)));
    expect(script.ok(900, status(900, 'on', null, at(0)))).toEqual([]);
    const events = script.ok(901, status(901, 'on', null, at(0)));
    expect(typesOf(events)).toEqual([EVENT.powerReportStale]);
    expect(events[0]?.data.ageMs).toBe(901_000);
    expect(script.ok(2000, status(2000, 'on', null, at(0)))).toEqual([]);
    expect(script.count(EVENT.powerReportStale)).toBe(1);
  });

  it('reports a report already stale on the first observation (an incident, not a change)', () => {
    const script = power();
    expect(typesOf(script.ok(0, status(0, 'unknown', null, null)))).toEqual([EVENT.powerReportStale]);
  });

  it('treats an unreadable updatedAt as stale', () => {
    const script = power();
    script.ok(0, status(0, 'on'));
    expect(typesOf(script.ok(10, status(10, 'on', null, 'yesterday')))).toEqual([EVENT.powerReportStale]);
  });
});

describe('vehicle power: reachability', () => {
  it('turns a 503 storm into one vehicle.unreachable and nothing else', () => {
    const script = power({ failureThreshold: 3 });
    script.ok(0, status(0, 'on'));
    for (let s = 10; s <= 200; s += 10) script.fail(s, 'service_unavailable', 503);
    expect(script.all).toEqual([
      {
        type: EVENT.vehicleUnreachable,
        data: {
          severity: 'warning',
          previous: 'reachable',
          current: 'unreachable',
          since: at(10),
          consecutiveFailures: 3,
          lastError: { code: 'service_unavailable', status: 503 },
        },
      },
    ]);
  });

  it('resolves with the outage duration, then diffs against the last good reading', () => {
    const script = power({ failureThreshold: 2, successThreshold: 2 });
    script.ok(0, status(0, 'off'));
    script.fail(10, 'timeout');
    script.fail(20, 'network');
    expect(script.ok(30, status(30, 'on'))).toEqual([
      {
        type: EVENT.powerChanged,
        data: { severity: 'info', previous: 'off', current: 'on', updatedAt: at(30) },
      },
    ]);
    expect(script.ok(40, status(40, 'on'))).toEqual([
      {
        type: EVENT.vehicleReachable,
        data: {
          severity: 'info',
          previous: 'unreachable',
          current: 'reachable',
          since: at(10),
          durationMs: 20_000,
        },
      },
    ]);
  });

  it('ignores failures under the threshold and recognises codes and statuses from the option lists', () => {
    const script = power({ failureThreshold: 3 });
    script.ok(0, status(0, 'on'));
    script.fail(10, 'bad_gateway', 502);
    script.fail(20, 'gateway_timeout', 504);
    script.ok(30, status(30, 'on'));
    script.fail(40, 'service_unavailable');
    script.fail(50, 'unexpected_status', 503);
    expect(script.all).toEqual([]);
    expect(typesOf(script.fail(60, 'timeout'))).toEqual([EVENT.vehicleUnreachable]);
  });

  it('neither counts nor resets on errors outside the list (500, invalid payload, 401)', () => {
    const script = power({ failureThreshold: 3 });
    script.ok(0, status(0, 'on'));
    script.fail(10, 'timeout');
    script.fail(20, 'internal_server_error', 500);
    script.fail(30, 'invalid_payload');
    script.fail(40, 'unauthorized', 401);
    script.fail(50, 'timeout');
    expect(script.all).toEqual([]);
    expect(typesOf(script.fail(60, 'timeout'))).toEqual([EVENT.vehicleUnreachable]);
  });

  it('reports a vehicle that never answered with previous null', () => {
    const script = power({ failureThreshold: 2 });
    script.fail(0, 'timeout');
    const events = script.fail(10, 'timeout');
    expect(events[0]?.data.previous).toBeNull();
    expect(typesOf(script.ok(20, status(20, 'on')))).toEqual([EVENT.vehicleReachable]);
    expect(script.state?.reading).toEqual({ state: 'on', pending: null, updatedAt: at(20) });
  });

  it('never emits a state-change event on a failed observation', () => {
    const script = power({ failureThreshold: 1, stuckAfterMs: 0, staleAfterMs: 0 });
    script.ok(0, status(0, 'off', 'on'));
    const failures = [
      'timeout',
      'network',
      'internal_server_error',
      'invalid_payload',
      'not_found',
      'forbidden',
    ];
    const allowed = new Set<string>([EVENT.vehicleUnreachable, EVENT.powerUnsupported]);
    for (const [i, code] of failures.entries()) {
      for (const type of typesOf(script.fail(1000 + i, code, undefined, 5000)))
        expect(allowed).toContain(type);
    }
  });
});

describe('vehicle power: 404', () => {
  it('marks a vehicle without power control silently when it 404s from the start', () => {
    const script = power();
    expect(script.fail(0, 'not_found', 404)).toEqual([]);
    expect(script.state?.powerCapable).toBe(false);
    expect(script.fail(10, 'not_found', 404)).toEqual([]);
  });

  it('emits one vehicle.power.unsupported when a vehicle that answered starts to 404', () => {
    const script = power();
    script.ok(0, status(0, 'on'));
    expect(script.state?.powerCapable).toBe(true);
    expect(script.fail(10, 'not_found', 404)).toEqual([
      {
        type: EVENT.powerUnsupported,
        data: {
          severity: 'info',
          previous: 'supported',
          current: 'unsupported',
          error: { code: 'not_found', status: 404 },
        },
      },
    ]);
    expect(script.fail(20, 'not_found', 404)).toEqual([]);
    expect(script.state?.powerCapable).toBe(false);
    expect(script.state?.unsupportedSince).toBe(Date.parse(at(10)));
    // Answering again is said, and the reading is diffed against the one before the 404s.
    expect(typesOf(script.ok(30, status(30, 'off')))).toEqual([EVENT.powerSupported, EVENT.powerChanged]);
    expect(script.state?.powerCapable).toBe(true);
    expect(script.state).not.toHaveProperty('unsupportedSince');
  });

  it('emits one vehicle.power.supported when a vehicle without power control answers, with since when', () => {
    const script = power();
    script.fail(0, 'not_found', 404);
    script.fail(60, 'not_found', 404);
    expect(script.state?.unsupportedSince).toBe(Date.parse(at(0)));
    expect(script.ok(180, status(180, 'on'))).toEqual([
      {
        type: EVENT.powerSupported,
        data: { severity: 'info', previous: 'unsupported', current: 'supported', unsupportedSince: at(0) },
      },
    ]);
    expect(script.ok(190, status(180, 'on'))).toEqual([]);
  });

  it('starts the time without power control at the next 404 when an older state has none', () => {
    const script = power();
    script.fail(0, 'not_found', 404);
    const { unsupportedSince: _dropped, ...older } = script.state!;
    script.state = older;
    expect(script.fail(60, 'not_found', 404)).toEqual([]);
    expect(script.state?.unsupportedSince).toBe(Date.parse(at(60)));
    script.state = older;
    expect(script.ok(120, status(120, 'on'))).toEqual([
      {
        type: EVENT.powerSupported,
        data: { severity: 'info', previous: 'unsupported', current: 'supported', unsupportedSince: null },
      },
    ]);
  });
});

describe('vehicle power: input it cannot use', () => {
  it('ignores values that are not a power status', () => {
    const script = power();
    script.ok(0, status(0, 'on'));
    for (const value of [
      null,
      42,
      'on',
      { state: 'sideways' },
      { state: 'off', pendingCommand: { state: 'maybe' } },
    ]) {
      expect(script.ok(10, value as never)).toEqual([]);
    }
    expect(script.ok(20, status(20, 'on'))).toEqual([]);
  });

  it('reads a missing pendingCommand or updatedAt as null', () => {
    const script = power();
    script.ok(0, status(0, 'on'));
    expect(typesOf(script.ok(10, { state: 'on' } as never))).toEqual([EVENT.powerReportStale]);
  });
});
