import { describe, expect, it } from 'vitest';
import { catalogueEntry, EVENT, FLEET_EVENT_TYPES } from '../../src/events/catalogue.js';
import { DEFAULT_DETECTOR_OPTIONS } from '../../src/events/detector-options.js';
import { robotConfigDetector } from '../../src/events/detectors/robot-config.js';
import { normalizeFeedback, robotFeedbackDetector } from '../../src/events/detectors/robot-feedback.js';
import { robotHealthDetector } from '../../src/events/detectors/robot-health.js';
import { robotLeaseDetector } from '../../src/events/detectors/robot-lease.js';
import { robotMembershipDetector } from '../../src/events/detectors/robot-membership.js';
import { upstreamHealthDetector } from '../../src/events/detectors/upstream-health.js';
import { vehicleLinkDetector } from '../../src/events/detectors/vehicle-link.js';
import { vehicleMembershipDetector } from '../../src/events/detectors/vehicle-membership.js';
import { vehiclePowerDetector } from '../../src/events/detectors/vehicle-power.js';
import type { Detector, EventDraft, Observation } from '../../src/events/types.js';
import { at, expectPlainJson, expectValidDrafts, Random, T0 } from './helpers.js';

/**
 * Seeded random-input checks (fast-check is not installed; these stand in for property tests):
 * garbage states, values, observations and options never make a detector throw, every state is
 * plain JSON, every draft matches the catalogue, the same input gives the same output, and a
 * failed observation only ever yields reachability/health events.
 */

type AnyDetector = Detector<unknown, unknown, unknown>;

interface Case {
  name: string;
  detector: AnyDetector;
  options: unknown;
  /** A plausible value for a successful observation. */
  value(random: Random): unknown;
}

const ids = ['a', 'b', 'c', 'd', '__proto__'];

const CASES: Case[] = [
  {
    name: 'vehicle-membership',
    detector: vehicleMembershipDetector as AnyDetector,
    options: { removeAfter: 2 },
    value: (r) => ids.filter(() => r.chance(0.6)),
  },
  {
    name: 'robot-membership',
    detector: robotMembershipDetector as AnyDetector,
    options: { removeAfter: 1 },
    value: (r) => ids.filter(() => r.chance(0.6)).map((id) => (r.chance(0.5) ? id : { deviceId: id })),
  },
  {
    name: 'vehicle-link',
    detector: vehicleLinkDetector as AnyDetector,
    options: { failureThreshold: 2, successThreshold: 1 },
    value: (r) => ({
      id: 'v-1',
      vpnConnected: r.chance(0.5),
      ...(r.chance(0.7) ? { ipAddress: r.pick(['10.0.0.1', '10.0.0.2']) } : {}),
    }),
  },
  {
    name: 'vehicle-power',
    detector: vehiclePowerDetector as AnyDetector,
    options: {
      ...DEFAULT_DETECTOR_OPTIONS.vehiclePower,
      stuckAfterMs: 30_000,
      staleAfterMs: 60_000,
      failureThreshold: 2,
    },
    value: (r) => ({
      state: r.pick(['on', 'off', 'unknown']),
      pendingCommand: r.chance(0.5) ? null : { state: r.pick(['on', 'off']) },
      updatedAt: r.chance(0.2) ? null : at(r.int(-200, 200)),
    }),
  },
  {
    name: 'robot-health',
    detector: robotHealthDetector as AnyDetector,
    options: { failureThreshold: 2, successThreshold: 2 },
    value: () => ({ status: 'ok' }),
  },
  {
    name: 'robot-feedback',
    detector: robotFeedbackDetector as AnyDetector,
    options: undefined,
    value: (r) =>
      normalizeFeedback({
        cortex_status: r.chance(0.8)
          ? { status: r.int(0, 4), status_text: r.pick(['A', 'B', undefined]) }
          : undefined,
        navigation_feedback: { nav2_goal_status: { status: r.chance(0.8) ? r.int(0, 6) : undefined } },
        vehicle_feedback: { state: r.pick(['PARKED', 'DRIVING', undefined]) },
      }),
  },
  {
    name: 'robot-lease',
    detector: robotLeaseDetector as AnyDetector,
    options: undefined,
    value: (r) => (r.chance(0.5) ? { holderId: r.pick(['alice', 'bob']), expiresAt: at(60) } : {}),
  },
  {
    name: 'robot-config',
    detector: robotConfigDetector as AnyDetector,
    options: undefined,
    value: (r) => ({
      activeSite: r.chance(0.7) ? r.json(3) : undefined,
      loadedRoute: r.chance(0.7) ? { name: r.pick(['a', 'b']), speed: r.int(1, 2) } : undefined,
      loadedZoneSet: r.chance(0.3) ? null : undefined,
    }),
  },
  {
    name: 'upstream-health',
    detector: upstreamHealthDetector as AnyDetector,
    options: { ...DEFAULT_DETECTOR_OPTIONS.upstreamHealth, failureThreshold: 1, successThreshold: 1 },
    value: (r) => ({
      requests: r.int(0, 40),
      authFailures: r.int(0, 6),
      serverErrors: r.int(0, 20),
      timeouts: r.int(0, 10),
    }),
  },
];

/** Events a failed observation may produce: reachability and capability, never a state change. */
const ALLOWED_ON_FAILURE = new Set<string>([
  EVENT.vehicleUnreachable,
  EVENT.robotHealthDown,
  EVENT.powerUnsupported,
]);

const CODES = [
  'timeout',
  'network',
  'service_unavailable',
  'not_found',
  'internal_server_error',
  'invalid_payload',
];

function observation(random: Random, kase: Case, seconds: number): unknown {
  const roll = random.next();
  if (roll < 0.55) return { ok: true, at: at(seconds), value: kase.value(random) };
  if (roll < 0.85) {
    const code = random.pick(CODES);
    return {
      ok: false,
      at: at(seconds),
      error: { code, status: random.pick([undefined, 404, 500, 503]), message: code },
    };
  }
  if (roll < 0.95) return { ok: true, at: random.pick([at(seconds), 'garbage', 42]), value: random.json() };
  return random.json();
}

function run(kase: Case, previous: unknown, obs: unknown, now: number, options: unknown) {
  return kase.detector(previous, obs as Observation<unknown>, { now, options });
}

describe.each(CASES)('$name on random input', (kase) => {
  it('never throws on garbage previous state, values, observations or options', () => {
    const random = new Random(0xf1ee7 ^ kase.name.length);
    const first = { ok: true, at: at(0), value: kase.value(random) };
    const fresh = run(kase, undefined, first, T0, kase.options);
    for (const previous of [null, 42, 'x', [], [1, 2], { x: 1 }, { v: 1 }, { v: 2 }, true]) {
      expect(
        run(kase, previous, first, T0, kase.options),
        'an unusable previous state is treated as absent',
      ).toEqual(fresh);
    }
    for (let i = 0; i < 300; i += 1) {
      const context = random.chance(0.9) ? { now: T0, options: kase.options } : random.json();
      expect(() =>
        kase.detector(
          random.json(2),
          random.json(2) as Observation<unknown>,
          context as { now: number; options: unknown },
        ),
      ).not.toThrow();
      const result = run(
        kase,
        random.json(2),
        observation(random, kase, i),
        T0 + i * 1000,
        random.chance(0.2) ? random.json() : kase.options,
      );
      expectPlainJson(result.state);
      expectValidDrafts(result.events);
    }
  });

  it('keeps its invariants over long random sequences', () => {
    let produced = 0;
    for (let seed = 1; seed <= 12; seed += 1) {
      const random = new Random(seed * 7919);
      let state: unknown;
      for (let i = 0; i < 60; i += 1) {
        const obs = observation(random, kase, i * 10);
        const now = T0 + i * 10_000 + random.int(0, 5_000);
        const result = run(kase, state, obs, now, kase.options);
        const again = run(kase, state, obs, now, kase.options);
        expect(again, 'deterministic').toEqual(result);
        expectPlainJson(result.state);
        expectValidDrafts(result.events);
        const failed = (obs as { ok?: unknown } | null)?.ok === false;
        if (failed) for (const event of result.events) expect(ALLOWED_ON_FAILURE).toContain(event.type);
        produced += result.events.length;
        state = JSON.parse(JSON.stringify(result.state));
      }
    }
    expect(produced, 'the sequences exercise the detector').toBeGreaterThan(0);
  });
});

describe('random sequences', () => {
  it('produce every event type somewhere (the generators reach the whole catalogue)', () => {
    const seen = new Set<string>();
    for (const kase of CASES) {
      for (let seed = 1; seed <= 25; seed += 1) {
        const random = new Random(seed);
        let state: unknown;
        for (let i = 0; i < 100; i += 1) {
          const result = run(kase, state, observation(random, kase, i * 10), T0 + i * 10_000, kase.options);
          for (const event of result.events as EventDraft[]) seen.add(event.type);
          state = result.state;
        }
      }
    }
    // `receiver/…` events come from delivery, not from a detector.
    const detected = FLEET_EVENT_TYPES.filter((type) => catalogueEntry(type).subject !== 'receiver');
    expect(detected.filter((type) => !seen.has(type))).toEqual([]);
  });
});
