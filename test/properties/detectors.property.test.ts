import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Observation } from '../../src/events/types.js';
import {
  anyAt,
  anyNow,
  detectorOptions,
  edgeDetectorOptions,
  failedObservation,
  garbage,
  malformedObservation,
  successfulObservation,
  wellFormedError,
} from './arbitraries.js';
import { CASES, type DetectorCase } from './cases.js';
import { mutated, withExtremeNumber } from './mutate.js';
import {
  detect,
  draftProblems,
  jsonProblems,
  observationAt,
  reachableState,
  type Step,
  timeline,
} from './run.js';

/**
 * The detector contract (types.ts): pure, never throws on any input, and its output is what the
 * store can keep and publish — a plain-JSON state and drafts that match the catalogue.
 */

function previousState(kase: DetectorCase): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 2, arbitrary: reachableState(kase) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: garbage },
  );
}

function anyObservation(kase: DetectorCase): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 3, arbitrary: successfulObservation(kase.value) },
    { weight: 1, arbitrary: successfulObservation(garbage) },
    { weight: 2, arbitrary: failedObservation() },
    { weight: 1, arbitrary: malformedObservation },
    { weight: 1, arbitrary: garbage },
  );
}

/** Options from a valid config file, mostly; sometimes whatever a caller might pass instead. */
function anyOptions(kase: DetectorCase): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 4, arbitrary: detectorOptions().map(kase.options) },
    { weight: 1, arbitrary: garbage },
  );
}

/** A poll as it comes after the polls of `reachableState`: near T0, with a readable clock. */
function nextStep(kase: DetectorCase): fc.Arbitrary<Step> {
  return timeline(fc.constant(1)).chain(([time]) =>
    observationAt(kase, time!.at).map((observation) => ({ observation, now: time!.now })),
  );
}

function anyStep(kase: DetectorCase): fc.Arbitrary<Step> {
  return fc.record({ observation: anyObservation(kase), now: anyNow });
}

/** A printout of anything, to compare before and after (values that throw when read print alike). */
function snapshot(value: unknown): string {
  try {
    return fc.stringify(value);
  } catch {
    return 'unreadable';
  }
}

/** True unless `value` is a state of the current version (`v: 1`), judged without tripping on hostile values. */
function notVersioned(value: unknown): boolean {
  try {
    return value === null || typeof value !== 'object' || (value as { v?: unknown }).v !== 1;
  } catch {
    return true;
  }
}

describe.each(CASES)('$name detector', (kase) => {
  it('never throws, keeps a plain-JSON state and emits only valid drafts of its own types', () => {
    fc.assert(
      fc.property(previousState(kase), anyStep(kase), anyOptions(kase), (previous, step, options) => {
        const result = detect(kase.detector, previous, step, options);
        expect(jsonProblems(result.state)).toEqual([]);
        expect(jsonProblems(result.events)).toEqual([]);
        expect(draftProblems(result.events)).toEqual([]);
        for (const event of result.events) expect(kase.types).toContain(event.type);
      }),
      { numRuns: 150 },
    );
  });

  it('copes with a snapshot of the right shape holding values it never wrote', () => {
    fc.assert(
      fc.property(
        fc.oneof(withExtremeNumber(reachableState(kase)), mutated(reachableState(kase))),
        nextStep(kase),
        detectorOptions().map(kase.options),
        (previous, step, options) => {
          const result = detect(kase.detector, previous, step, options);
          expect(jsonProblems(result.state)).toEqual([]);
          expect(draftProblems(result.events)).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('emits valid drafts with every option at a limit of the config schema', () => {
    fc.assert(
      fc.property(
        reachableState(kase),
        nextStep(kase),
        edgeDetectorOptions.map(kase.options),
        (previous, step, options) => {
          const result = detect(kase.detector, previous, step, options);
          expect(draftProblems(result.events)).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('emits valid drafts whatever the clocks say, in or out of the range a date can be written in', () => {
    fc.assert(
      fc.property(
        reachableState(kase),
        anyAt.chain((at) => observationAt(kase, String(at))),
        anyNow,
        detectorOptions(2).map(kase.options),
        (previous, observation, now, options) => {
          const result = detect(kase.detector, previous, { observation, now }, options);
          expect(draftProblems(result.events)).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('never throws whatever the context is', () => {
    fc.assert(
      fc.property(previousState(kase), anyObservation(kase), garbage, (previous, observation, context) => {
        const result = kase.detector(
          previous,
          observation as Observation<unknown>,
          context as { now: number; options: unknown },
        );
        expect(jsonProblems(result.state)).toEqual([]);
        expect(draftProblems(result.events)).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });

  it('is deterministic: the same input gives the same output', () => {
    fc.assert(
      fc.property(previousState(kase), anyStep(kase), anyOptions(kase), (previous, step, options) => {
        expect(detect(kase.detector, previous, step, options)).toStrictEqual(
          detect(kase.detector, previous, step, options),
        );
      }),
      { numRuns: 60 },
    );
  });

  it('leaves its inputs alone', () => {
    fc.assert(
      fc.property(
        reachableState(kase),
        nextStep(kase),
        detectorOptions().map(kase.options),
        (previous, step, options) => {
          const before = snapshot([previous, step, options]);
          detect(kase.detector, previous, step, options);
          expect(snapshot([previous, step, options])).toBe(before);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('never counts an access failure (no token, 401, 403) against the entity: nothing changes', () => {
    fc.assert(
      fc.property(
        reachableState(kase),
        wellFormedError.map((error) => ({ ...error, class: 'access' as const })),
        anyAt,
        anyNow,
        detectorOptions().map(kase.options),
        (previous, error, at, now, options) => {
          const access = detect(
            kase.detector,
            previous,
            { observation: { ok: false, at, error }, now },
            options,
          );
          const nothing = detect(kase.detector, previous, { observation: {}, now }, options);
          expect(access).toStrictEqual(nothing);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('treats a previous state that is not of its version as no previous state', () => {
    fc.assert(
      fc.property(
        garbage.filter(notVersioned),
        anyStep(kase),
        detectorOptions().map(kase.options),
        (previous, step, options) => {
          expect(detect(kase.detector, previous, step, options)).toStrictEqual(
            detect(kase.detector, undefined, step, options),
          );
        },
      ),
      { numRuns: 60 },
    );
  });
});
