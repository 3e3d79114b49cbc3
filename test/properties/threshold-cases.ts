import fc from 'fast-check';
import { EVENT, type FleetEventType } from '../../src/events/catalogue.js';
import type { DetectorOptions } from '../../src/events/detector-options.js';
import { robotHealthDetector } from '../../src/events/detectors/robot-health.js';
import { upstreamHealthDetector } from '../../src/events/detectors/upstream-health.js';
import { vehicleLinkDetector } from '../../src/events/detectors/vehicle-link.js';
import { vehiclePowerDetector } from '../../src/events/detectors/vehicle-power.js';
import { detectorOptions, wellFormedError } from './arbitraries.js';
import type { AnyDetector } from './cases.js';
import { timeline } from './run.js';

/**
 * The four detectors built on the consecutive-threshold rule (ARCHITECTURE.md, guarantee 4), with
 * observations labelled by construction: good and bad ones count towards resolving and firing,
 * neutral ones (failures that are not about reachability, unusable values, skipped windows, not
 * an observation at all) must count for nothing.
 */

export type Verdict = 'good' | 'bad' | 'neutral';

export interface LabelledStep {
  verdict: Verdict;
  observation: unknown;
  now: number;
  /** Epoch ms of `observation.at`. */
  atMs: number;
}

interface Settings {
  options: unknown;
  failureThreshold: number;
  successThreshold: number;
}

export interface ThresholdCase {
  name: string;
  detector: AnyDetector;
  fires: FleetEventType;
  resolves: FleetEventType;
  /** `data.previous` of the firing event when the entity was seen healthy before. */
  healthyWord: string;
  run: fc.Arbitrary<{ settings: Settings; steps: LabelledStep[] }>;
}

type Draw = fc.Arbitrary<{ verdict: Verdict; observation: Record<string, unknown> }>;

const good = (value: fc.Arbitrary<unknown>): Draw =>
  value.map((v) => ({ verdict: 'good', observation: { ok: true, value: v } }));
const bad = (value: fc.Arbitrary<unknown>): Draw =>
  value.map((v) => ({ verdict: 'bad', observation: { ok: true, value: v } }));
const badFailure = (error: fc.Arbitrary<unknown>): Draw =>
  error.map((e) => ({ verdict: 'bad', observation: { ok: false, error: e } }));
const ignored = (value: fc.Arbitrary<unknown>): Draw =>
  value.map((v) => ({ verdict: 'neutral', observation: { ok: true, value: v } }));
const ignoredFailure = (error: fc.Arbitrary<unknown>): Draw =>
  error.map((e) => ({ verdict: 'neutral', observation: { ok: false, error: e } }));
/** Not an observation (`ok` is not a boolean). */
const notAnObservation: Draw = fc
  .record({ ok: fc.constantFrom('true', 1, null, undefined), value: fc.jsonValue({ maxDepth: 1 }) })
  .map((observation) => ({ verdict: 'neutral', observation }));

function build(
  name: string,
  detector: AnyDetector,
  pick: (all: DetectorOptions) => Settings,
  draw: (settings: Settings) => Draw,
  events: Pick<ThresholdCase, 'fires' | 'resolves' | 'healthyWord'>,
): ThresholdCase {
  const run = detectorOptions(4)
    .map(pick)
    .chain((settings) =>
      timeline(fc.integer({ min: 0, max: 40 })).chain((times) =>
        fc.tuple(...times.map(() => draw(settings))).map((draws) => ({
          settings,
          steps: draws.map(({ verdict, observation }, index): LabelledStep => {
            const { at, now } = times[index]!;
            return { verdict, observation: { ...observation, at }, now, atMs: Date.parse(at) };
          }),
        })),
      ),
    );
  return { name, detector, run, ...events };
}

const thresholdsOf = (options: { failureThreshold: number; successThreshold: number }) => ({
  options,
  failureThreshold: options.failureThreshold,
  successThreshold: options.successThreshold,
});

const powerReading = fc.record({
  state: fc.constantFrom('on', 'off', 'unknown'),
  pendingCommand: fc.constantFrom(null, { state: 'on' }, { state: 'off' }),
  updatedAt: fc.constantFrom(null, '2025-03-01T12:00:00.000Z'),
});

export const THRESHOLD_CASES: readonly ThresholdCase[] = [
  build(
    'robot-health',
    robotHealthDetector as AnyDetector,
    (all) => thresholdsOf(all.robotHealth),
    () =>
      fc.oneof(
        good(fc.jsonValue({ maxDepth: 2 })),
        // Whatever the error says (or fails to say), a failed check is a failed check.
        badFailure(fc.oneof(wellFormedError, fc.jsonValue({ maxDepth: 1 }))),
        notAnObservation,
      ),
    { fires: EVENT.robotHealthDown, resolves: EVENT.robotHealthUp, healthyWord: 'up' },
  ),
  build(
    'vehicle-link',
    vehicleLinkDetector as AnyDetector,
    (all) => thresholdsOf(all.vehicleLink),
    () =>
      fc.oneof(
        good(fc.constantFrom({ vpnConnected: true }, { vpnConnected: true, ipAddress: '10.0.0.1' })),
        bad(fc.constantFrom({ vpnConnected: false }, { vpnConnected: false, ipAddress: '10.0.0.2' })),
        ignored(fc.constantFrom({}, { vpnConnected: 'false' }, { vpnConnected: null }, [false])),
        ignoredFailure(wellFormedError),
        notAnObservation,
      ),
    { fires: EVENT.vpnDisconnected, resolves: EVENT.vpnConnected, healthyWord: 'connected' },
  ),
  build(
    'vehicle-power',
    vehiclePowerDetector as AnyDetector,
    (all) => ({ ...thresholdsOf(all.vehiclePower), options: all.vehiclePower }),
    (settings) => {
      const { unreachableCodes: codes, unreachableStatuses: statuses } =
        settings.options as DetectorOptions['vehiclePower'];
      // A 404 answers for the vehicle (no power control), whatever the lists say.
      const usableCodes = codes.filter((code) => code !== 'not_found');
      const usableStatuses = statuses.filter((status) => status !== 404);
      const otherCode = fc
        .string({ minLength: 1 })
        .filter((code) => !codes.includes(code) && code !== 'not_found');
      const otherStatus = fc.integer({ min: 100, max: 599 }).filter((status) => !statuses.includes(status));
      const unreachable: Draw[] = [];
      if (usableCodes.length > 0)
        unreachable.push(
          badFailure(fc.constantFrom(...usableCodes).map((code) => ({ code, message: code }))),
        );
      if (usableStatuses.length > 0)
        unreachable.push(
          badFailure(
            fc
              .record({ code: otherCode, status: fc.constantFrom(...usableStatuses) })
              .map((error) => ({ ...error, message: '' })),
          ),
        );
      return fc.oneof(
        good(powerReading),
        ...unreachable,
        ignoredFailure(
          fc.oneof(
            fc.record({ code: otherCode, status: otherStatus, message: fc.constant('') }),
            fc.constant({ code: 'not_found', status: 404, message: 'not found' }),
          ),
        ),
        ignored(fc.constantFrom({ state: 'maybe' }, { state: 'on', pendingCommand: 'x' }, null)),
        notAnObservation,
      );
    },
    { fires: EVENT.vehicleUnreachable, resolves: EVENT.vehicleReachable, healthyWord: 'reachable' },
  ),
  build(
    'upstream-health',
    upstreamHealthDetector as AnyDetector,
    (all) => ({ ...thresholdsOf(all.upstreamHealth), options: all.upstreamHealth }),
    (settings) => {
      const { minRequests, authFailures } = settings.options as DetectorOptions['upstreamHealth'];
      const enough = fc.integer({ min: Math.max(1, minRequests), max: Math.max(1, minRequests) + 50 });
      const fewAuth = fc.integer({ min: 0, max: Math.max(1, authFailures) - 1 });
      return fc.oneof(
        good(
          fc.record({
            requests: enough,
            authFailures: fewAuth,
            serverErrors: fc.constant(0),
            timeouts: fc.constant(0),
          }),
        ),
        // Every request failed: the ratio is 1, at or above any `error_ratio`.
        bad(enough.map((requests) => ({ requests, authFailures: 0, serverErrors: requests, timeouts: 0 }))),
        bad(
          fc.record({
            requests: fc.nat(50),
            authFailures: fc.integer({ min: Math.max(1, authFailures), max: Math.max(1, authFailures) + 5 }),
          }),
        ),
        // A window without requests says nothing.
        ignored(fewAuth.map((auth) => ({ requests: 0, authFailures: auth }))),
        ignored(fc.constantFrom(null, { requests: 'many' }, { requests: -1 })),
        ignoredFailure(wellFormedError),
        notAnObservation,
      );
    },
    { fires: EVENT.upstreamDegraded, resolves: EVENT.upstreamRecovered, healthyWord: 'healthy' },
  ),
];
