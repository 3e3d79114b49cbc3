import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CATALOGUE, EVENT } from '../../src/events/catalogue.js';
import { T0 } from '../events/helpers.js';
import { detectorOptions, failedObservation, garbage, successfulObservation } from './arbitraries.js';
import { CASES, type DetectorCase } from './cases.js';
import { detect, initialState, reachableState, throughJson } from './run.js';

/**
 * ARCHITECTURE.md, guarantee 2: a failed poll is not a state change. A failure may only feed the
 * reachability rules; a reading the detector cannot use is no observation at all.
 */

/**
 * What a failure may announce: the reachability incidents it feeds (catalogue incident keys
 * `reachability` and `health`), and `vehicle.power.unsupported`, because a 404 is the service's
 * answer about the vehicle, not a failed poll.
 */
const ALLOWED_ON_FAILURE = new Set<string>([
  ...CATALOGUE.filter(
    (entry) => entry.incident?.role === 'fires' && ['reachability', 'health'].includes(entry.incident.key),
  ).map((entry) => entry.type),
  EVENT.powerUnsupported,
]);

/** A previous state as the store hands it over: one a run left behind (through JSON), or nothing. */
function storedState(kase: DetectorCase): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 4, arbitrary: reachableState(kase).map(throughJson) }, fc.constant(undefined));
}

/** Options from a valid config, and a clock in the hours after the polls of `reachableState`. */
const context = (kase: DetectorCase) =>
  fc.record({
    now: fc.integer({ min: 0, max: 4 * 3_600 }).map((seconds) => T0 + seconds * 1000),
    options: detectorOptions().map(kase.options),
  });

describe.each(CASES)('$name detector', (kase) => {
  it('turns a failed observation into reachability events at most, leaving the observed world alone', () => {
    fc.assert(
      fc.property(
        storedState(kase),
        failedObservation(),
        context(kase),
        (previous, observation, { now, options }) => {
          const before = previous ?? initialState(kase.detector);
          const result = detect(kase.detector, previous, { observation, now }, options);
          for (const event of result.events) expect(ALLOWED_ON_FAILURE).toContain(event.type);
          expect(kase.world(result.state)).toStrictEqual(kase.world(before));
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe.each(CASES.filter((kase) => kase.invalid !== null))('$name detector', (kase) => {
  it('ignores a successful observation whose value it cannot use', () => {
    fc.assert(
      fc.property(
        storedState(kase),
        successfulObservation(kase.invalid ?? garbage),
        context(kase),
        (previous, observation, { now, options }) => {
          const result = detect(kase.detector, previous, { observation, now }, options);
          expect(result.events).toEqual([]);
          expect(result.state).toStrictEqual(previous ?? initialState(kase.detector));
        },
      ),
      { numRuns: 100 },
    );
  });
});
