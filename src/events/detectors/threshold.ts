import { z } from 'zod';
import { atLeastOne, type ThresholdOptions } from '../detector-options.js';
import type { EventDraft } from '../types.js';
import { isoOf, storedTimeSchema } from './define.js';

/**
 * The one consecutive-threshold state machine behind every fire/resolve pair (VPN, reachability,
 * robot health, upstream health).
 *
 * An incident fires after `failureThreshold` consecutive bad observations and resolves after
 * `successThreshold` consecutive good ones; anything in between resets the opposing streak, so a
 * flap shorter than the threshold produces nothing. The incident starts at the first bad
 * observation of the streak that fired and ends at the first good observation of the streak that
 * resolved it; that span is the reported duration.
 *
 * Baseline: the first good observation settles "healthy" silently. A first observation that is
 * bad counts towards the threshold like any other, so a vehicle already offline when fleetwatch
 * starts is reported once the threshold is met (with `previousKnown: false`, since it was never
 * seen healthy); until then a good observation settles "healthy" silently.
 */

export interface ThresholdState {
  /** Whether the incident is open; null until the first good observation or the first firing. */
  alerting: boolean | null;
  /** Consecutive observations against the settled status (bad while not alerting, good while alerting). */
  streak: number;
  /** Observation time (epoch ms) of the streak's first observation; null when `streak` is 0. */
  streakSince: number | null;
  /** While alerting: when the incident started (epoch ms). */
  incidentSince: number | null;
}

export const thresholdStateSchema = z.object({
  alerting: z.boolean().nullable(),
  streak: z.number().int().nonnegative(),
  streakSince: storedTimeSchema.nullable(),
  incidentSince: storedTimeSchema.nullable(),
});

export interface Fired {
  kind: 'fired';
  /** When the incident started. */
  since: number;
  /** Consecutive bad observations that fired it. */
  count: number;
  /** False when no good observation was ever seen (the condition predates the baseline). */
  previousKnown: boolean;
}

export interface Resolved {
  kind: 'resolved';
  since: number;
  until: number;
  durationMs: number;
}

export type ThresholdTransition = Fired | Resolved;

export interface ThresholdStep {
  state: ThresholdState;
  transition: ThresholdTransition | null;
}

const SETTLED_HEALTHY: ThresholdState = {
  alerting: false,
  streak: 0,
  streakSince: null,
  incidentSince: null,
};

export function stepThreshold(
  previous: ThresholdState | null,
  good: boolean,
  at: number,
  options: ThresholdOptions,
): ThresholdStep {
  const failureThreshold = atLeastOne(options.failureThreshold);
  const successThreshold = atLeastOne(options.successThreshold);
  const state = previous ?? { alerting: null, streak: 0, streakSince: null, incidentSince: null };
  const streakSince = state.streak === 0 ? at : (state.streakSince ?? at);

  if (state.alerting === true) {
    if (!good) return { state: { ...state, streak: 0, streakSince: null }, transition: null };
    const streak = state.streak + 1;
    if (streak < successThreshold) return { state: { ...state, streak, streakSince }, transition: null };
    const since = state.incidentSince ?? streakSince;
    const durationMs = Math.max(0, Math.round(streakSince - since));
    return {
      state: { ...SETTLED_HEALTHY },
      transition: { kind: 'resolved', since, until: streakSince, durationMs },
    };
  }

  if (good) return { state: { ...SETTLED_HEALTHY }, transition: null };
  const streak = state.streak + 1;
  if (streak < failureThreshold) {
    return {
      state: { alerting: state.alerting, streak, streakSince, incidentSince: null },
      transition: null,
    };
  }
  return {
    state: { alerting: true, streak: 0, streakSince: null, incidentSince: streakSince },
    transition: { kind: 'fired', since: streakSince, count: streak, previousKnown: state.alerting === false },
  };
}

/** The state of an incident open since `since` (epoch ms), as if it had just fired: for seeding. */
export function alertingSince(since: number): ThresholdState {
  return { alerting: true, streak: 0, streakSince: null, incidentSince: since };
}

/**
 * The data a transition's event starts with (see the catalogue's `thresholdIncident`), given the
 * incident's good and bad status: firing goes from the good status (null when it was never seen)
 * to the bad one, since the bad run began; resolving goes back, since when and for how long.
 */
export function transitionData<Good extends string, Bad extends string>(
  fired: Fired,
  good: Good,
  bad: Bad,
): { previous: Good | null; current: Bad; since: string };
export function transitionData<Good extends string, Bad extends string>(
  resolved: Resolved,
  good: Good,
  bad: Bad,
): { previous: Bad; current: Good; since: string; durationMs: number };
export function transitionData(transition: ThresholdTransition, good: string, bad: string) {
  const since = isoOf(transition.since);
  return transition.kind === 'fired'
    ? { previous: transition.previousKnown ? good : null, current: bad, since }
    : { previous: bad, current: good, since, durationMs: transition.durationMs };
}

/**
 * One observation of a monitor incident judged by the threshold rule, with its two events: the
 * step, and the firing event (`fired`: the transition's data plus what the detector adds) or the
 * resolving one (`resolved`), worded between the incident's good and bad status: each detector
 * says only what counts as bad and what its firing event carries (the pace and list detectors).
 */
export function judgeIncident<Good extends string, Bad extends string>(
  previous: ThresholdState | null,
  good: boolean,
  at: number,
  options: ThresholdOptions,
  [goodStatus, badStatus]: readonly [Good, Bad],
  events: {
    fired(data: { previous: Good | null; current: Bad; since: string }, count: number): EventDraft;
    resolved(data: { previous: Bad; current: Good; since: string; durationMs: number }): EventDraft;
  },
): { state: ThresholdState; events: EventDraft[] } {
  const step = stepThreshold(previous, good, at, options);
  const { transition } = step;
  if (transition?.kind === 'fired') {
    return {
      state: step.state,
      events: [events.fired(transitionData(transition, goodStatus, badStatus), transition.count)],
    };
  }
  if (transition?.kind === 'resolved') {
    return {
      state: step.state,
      events: [events.resolved(transitionData(transition, goodStatus, badStatus))],
    };
  }
  return { state: step.state, events: [] };
}
