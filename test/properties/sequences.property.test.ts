import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { catalogueEntry, FLEET_EVENT_TYPES, isFleetEventType } from '../../src/events/catalogue.js';
import type { EventDraft } from '../../src/events/types.js';
import {
  detectorOptions,
  failedObservation,
  malformedObservation,
  successfulObservation,
} from './arbitraries.js';
import { CASES, type DetectorCase } from './cases.js';
import { detect, draftProblems, runSequence, type Step, sequence, throughJson, timeline } from './run.js';

/**
 * Long runs of polls of every kind, fed the way the store feeds them (state through JSON), from
 * no state. Every change becomes exactly one event (ARCHITECTURE.md, guarantee 1): an incident's firing
 * and resolving events alternate, a membership's discoveries and removals too, and each change of
 * a tracked reading is reported once, from the last reading to the new one.
 */

/** The role each incident event plays, grouped by incident: `fires`/`resolves` in order. */
function incidentRoles(events: readonly EventDraft[]): Map<string, string[]> {
  const roles = new Map<string, string[]>();
  for (const event of events) {
    const incident = isFleetEventType(event.type) ? catalogueEntry(event.type).incident : null;
    if (incident === null) continue;
    roles.set(incident.key, [...(roles.get(incident.key) ?? []), incident.role]);
  }
  return roles;
}

describe.each(CASES)('$name over a sequence of polls', (kase) => {
  it('emits valid drafts, and the firing and resolving events of an incident alternate', () => {
    fc.assert(
      fc.property(sequence(kase), ({ options, steps }) => {
        const events = runSequence(kase, steps, options).events.flat();
        expect(draftProblems(events)).toEqual([]);
        for (const roles of incidentRoles(events).values()) {
          roles.forEach((role, index) => {
            expect(role).toBe(index % 2 === 0 ? 'fires' : 'resolves');
          });
        }
      }),
      { numRuns: 60 },
    );
  });
});

/** Readings, failures and non-observations: every reading's value is one the detector tracks. */
function readingsAndFailures(kase: DetectorCase) {
  return fc.record({
    options: detectorOptions(4).map(kase.options),
    steps: timeline(fc.integer({ min: 0, max: 30 })).chain((times) =>
      fc.tuple(
        ...times.map(({ at, now }) =>
          fc
            .oneof(
              { weight: 4, arbitrary: successfulObservation(kase.value, fc.constant(at)) },
              { weight: 2, arbitrary: failedObservation(fc.constant(at)) },
              { weight: 1, arbitrary: malformedObservation },
            )
            .map((observation): Step => ({ observation, now })),
        ),
      ),
    ),
  });
}

describe.each(CASES.filter((kase) => kase.tracked !== undefined))('$name tracked values', (kase) => {
  const tracked = kase.tracked!;

  it('reports every change of a reading exactly once, from the last reading to this one, and nothing else', () => {
    fc.assert(
      fc.property(readingsAndFailures(kase), ({ options, steps }) => {
        const known = new Map<string, unknown>();
        let state: unknown;
        for (const step of steps) {
          const result = detect(kase.detector, throughJson(state), step, options);
          state = result.state;
          const expected: { key: string; previous: unknown; current: unknown }[] = [];
          const observation = step.observation as { ok?: unknown; value?: unknown } | null;
          if (observation?.ok === true) {
            for (const [key, current] of Object.entries(tracked.read(observation.value))) {
              if (known.has(key) && known.get(key) !== current)
                expected.push({ key, previous: known.get(key), current });
              known.set(key, current);
            }
          }
          const reported = result.events
            .filter((event) => event.type === tracked.type)
            .map((event) => ({
              key: tracked.keyOf(event),
              previous: event.data.previous,
              current: event.data.current,
            }));
          expect(reported).toEqual(expected);
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe.each(CASES.filter((kase) => kase.name.endsWith('membership')))(
  '$name over a sequence of lists',
  (kase) => {
    it('discovers and removes each entity alternately', () => {
      fc.assert(
        fc.property(sequence(kase), ({ options, steps }) => {
          const lastKind = new Map<string, string>();
          for (const event of runSequence(kase, steps, options).events.flat()) {
            const id = String(event.data.vehicleId ?? event.data.deviceId);
            expect(lastKind.get(id)).not.toBe(event.type);
            lastKind.set(id, event.type);
          }
        }),
        { numRuns: 60 },
      );
    });
  },
);

describe('the sequence generators', () => {
  it('cover every detector of the catalogue', () => {
    // `receiver/…` events come from delivery, `store/…` from the store guard, `incident/…` from
    // operators: not from a detector.
    const notDetected = new Set(['receiver', 'store', 'incident']);
    const detected = FLEET_EVENT_TYPES.filter((type) => !notDetected.has(catalogueEntry(type).subject));
    expect(CASES.flatMap((kase) => kase.types).sort()).toEqual([...detected].sort());
  });

  it('reach every event type each detector can emit, so the properties above are not vacuous', () => {
    const missing = CASES.flatMap((kase) => {
      const seen = new Set<string>();
      for (const { options, steps } of fc.sample(sequence(kase), { numRuns: 80, seed: 20250301 })) {
        for (const event of runSequence(kase, steps, options).events.flat()) seen.add(event.type);
      }
      return kase.types.filter((type) => !seen.has(type)).map((type) => `${kase.name}: ${type}`);
    });
    expect(missing).toEqual([]);
  });
});
