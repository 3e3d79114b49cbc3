import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventDraft } from '../../src/events/types.js';
import { detect, throughJson } from './run.js';
import { type LabelledStep, THRESHOLD_CASES, type ThresholdCase } from './threshold-cases.js';

/**
 * ARCHITECTURE.md, guarantee 4 (flapping is not noise), against the rule as threshold.ts documents it:
 * an incident fires after `failure_threshold` consecutive bad observations and resolves after
 * `success_threshold` consecutive good ones; a good one while healthy, or a bad one while alerting,
 * resets the opposing streak; neutral observations count for nothing. The firing event carries
 * the first bad observation of its streak as `since`, and `previous: null` unless the entity was
 * seen healthy before; the resolving one carries the outage from that time to the first good
 * observation of the resolving streak.
 */

interface Expected {
  kind: 'fires' | 'resolves';
  since: number;
  durationMs?: number;
  previousKnown?: boolean;
}

/** The documented rule, replayed over the labels. */
function expectedTransitions(steps: readonly LabelledStep[], failures: number, successes: number) {
  let alerting = false;
  let seenHealthy = false;
  let streak = 0;
  let streakSince = 0;
  let incidentSince = 0;
  return steps.map((step): Expected | null => {
    if (step.verdict === 'neutral') return null;
    const againstSettled = alerting ? step.verdict === 'good' : step.verdict === 'bad';
    if (!againstSettled) {
      streak = 0;
      if (!alerting) seenHealthy = true;
      return null;
    }
    if (streak === 0) streakSince = step.atMs;
    streak += 1;
    if (!alerting && streak >= failures) {
      alerting = true;
      streak = 0;
      incidentSince = streakSince;
      return { kind: 'fires', since: streakSince, previousKnown: seenHealthy };
    }
    if (alerting && streak >= successes) {
      alerting = false;
      seenHealthy = true;
      streak = 0;
      return { kind: 'resolves', since: incidentSince, durationMs: Math.max(0, streakSince - incidentSince) };
    }
    return null;
  });
}

function describeEvent(kase: ThresholdCase, event: EventDraft | undefined): Expected | null {
  if (event === undefined) return null;
  const since = Date.parse(String(event.data.since));
  if (event.type === kase.fires) {
    return { kind: 'fires', since, previousKnown: event.data.previous === kase.healthyWord };
  }
  return { kind: 'resolves', since, durationMs: event.data.durationMs as number };
}

describe.each(THRESHOLD_CASES)('$name thresholds', (kase) => {
  it('fire and resolve exactly when the consecutive thresholds are met, with the documented times', () => {
    fc.assert(
      fc.property(kase.run, ({ settings, steps }) => {
        const expected = expectedTransitions(steps, settings.failureThreshold, settings.successThreshold);
        let state: unknown;
        steps.forEach((step, index) => {
          const result = detect(kase.detector, throughJson(state), step, settings.options);
          state = result.state;
          const incident = result.events.filter(
            (event) => event.type === kase.fires || event.type === kase.resolves,
          );
          expect(incident.length).toBeLessThanOrEqual(1);
          expect(describeEvent(kase, incident[0])).toEqual(expected[index]);
        });
      }),
      { numRuns: 80 },
    );
  });
});
