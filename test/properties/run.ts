import fc from 'fast-check';
import { catalogueEntry, fleetEventSchema, isFleetEventType } from '../../src/events/catalogue.js';
import { toFleetEvent } from '../../src/events/cloud-event.js';
import type { EventDraft, Observation } from '../../src/events/types.js';
import { T0 } from '../events/helpers.js';
import {
  detectorOptions,
  failedObservation,
  malformedObservation,
  successfulObservation,
} from './arbitraries.js';
import type { AnyDetector, DetectorCase } from './cases.js';

/** One poll as a detector sees it: the observation, and the caller's clock when it is judged. */
export interface Step {
  observation: unknown;
  now: number;
}

export function detect(detector: AnyDetector, previous: unknown, step: Step, options: unknown) {
  return detector(previous, step.observation as Observation<unknown>, { now: step.now, options });
}

/** A JSON round trip, as the state takes through Redis between polls. */
export function throughJson<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Runs steps from no state, passing the state through JSON between them. */
export function runSequence(kase: DetectorCase, steps: readonly Step[], options: unknown) {
  let state: unknown;
  const events: EventDraft[][] = [];
  for (const step of steps) {
    const result = detect(kase.detector, throughJson(state), step, options);
    state = result.state;
    events.push(result.events);
  }
  return { state, events };
}

/** The state a detector starts from (what it makes of no previous state). */
export function initialState(detector: AnyDetector): unknown {
  return detector(undefined, null as unknown as Observation<unknown>, { now: T0, options: undefined }).state;
}

/**
 * Observation times that move forward by up to 15 minutes a poll (sometimes standing still or
 * going back a little, as clocks of several replicas do), judged up to 2 minutes later.
 */
export function timeline(length: fc.Arbitrary<number>): fc.Arbitrary<{ at: string; now: number }[]> {
  return length.chain((n) =>
    fc
      .array(fc.tuple(fc.integer({ min: -5, max: 900 }), fc.integer({ min: 0, max: 120 })), {
        minLength: n,
        maxLength: n,
      })
      .map((gaps) => {
        let ms = T0;
        return gaps.map(([gap, lag]) => {
          ms += gap * 1000;
          return { at: new Date(ms).toISOString(), now: ms + lag * 1000 };
        });
      }),
  );
}

/** What a poll can turn into: a reading, a failure, an unusable value, or not an observation at all. */
export function observationAt(kase: DetectorCase, at: string): fc.Arbitrary<unknown> {
  const time = fc.constant(at);
  return fc.oneof(
    { weight: 6, arbitrary: successfulObservation(kase.value, time) },
    { weight: 3, arbitrary: failedObservation(time) },
    { weight: 1, arbitrary: successfulObservation(kase.invalid ?? kase.value, time) },
    { weight: 1, arbitrary: malformedObservation },
  );
}

/** A sequence of polls with thresholds small enough (1..4) for incidents to fire and resolve. */
export function sequence(kase: DetectorCase, maxLength = 30) {
  return fc.record({
    options: detectorOptions(4).map(kase.options),
    steps: timeline(fc.integer({ min: 0, max: maxLength })).chain((times) =>
      fc.tuple(
        ...times.map(({ at, now }) =>
          observationAt(kase, at).map((observation): Step => ({ observation, now })),
        ),
      ),
    ),
  });
}

/** A state the detector can really be in: where a sequence of polls left it. */
export function reachableState(kase: DetectorCase): fc.Arbitrary<unknown> {
  return sequence(kase, 12).map(({ options, steps }) => runSequence(kase, steps, options).state);
}

/** Problems with drafts as the store would publish them: known type, subject form, data per the catalogue. */
export function draftProblems(events: readonly EventDraft[]): string[] {
  return events.flatMap((draft) => {
    if (!isFleetEventType(draft.type)) return [`unknown event type ${String(draft.type)}`];
    const kind = catalogueEntry(draft.type).subject;
    let event: unknown;
    try {
      event = toFleetEvent(draft, {
        id: 'evt-1',
        source: 'fleetwatch/properties',
        time: new Date(T0).toISOString(),
        entityId: `${kind}-under-test`,
      });
    } catch (error) {
      return [`${draft.type}: ${(error as Error).message}`];
    }
    const issues = fleetEventSchema(draft.type).safeParse(event).error?.issues ?? [];
    return issues.map((issue) => `${draft.type}: ${issue.path.join('.')}: ${issue.message}`);
  });
}

/**
 * Where `value` is not plain JSON (null, booleans, finite numbers, strings, dense arrays and plain
 * objects of those), by path. -0 passes: JSON writes it as 0, which reads back the same to every
 * detector.
 */
export function jsonProblems(value: unknown, path = '$'): string[] {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return [];
  if (typeof value === 'number') return Number.isFinite(value) ? [] : [`${path}: ${value}`];
  if (typeof value !== 'object') return [`${path}: ${typeof value}`];
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return [`${path}: not a plain array`];
    return Array.from(value.keys()).flatMap((index) =>
      index in value ? jsonProblems(value[index], `${path}[${index}]`) : [`${path}[${index}]: hole`],
    );
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return [`${path}: not a plain object`];
  if (Object.getOwnPropertySymbols(value).length > 0) return [`${path}: symbol keys`];
  return Object.entries(Object.getOwnPropertyDescriptors(value)).flatMap(([key, property]) => {
    if (!('value' in property) || !property.enumerable) return [`${path}.${key}: not a plain property`];
    return jsonProblems(property.value, `${path}.${key}`);
  });
}
