import { z } from 'zod';
import { draft, EVENT } from '../catalogue.js';
import { DEFAULT_DETECTOR_OPTIONS, type RobotHealthOptions, readOptions } from '../detector-options.js';
import type { DetectorResult, EventDraft, ObservationError } from '../types.js';
import { defineDetector, errorRef } from './define.js';
import {
  alertingSince,
  stepThreshold,
  type ThresholdState,
  thresholdStateSchema,
  transitionData,
} from './threshold.js';

/**
 * A robot's health check (GET /v2/health, or /v2/uuid on older robots). Any successful
 * observation is a good check, whatever its value; any failed observation (time-out, 5xx,
 * gateway error, unparseable body) is a failed check.
 *
 * `robot.health.down` after `failureThreshold` consecutive failed checks, `robot.health.up` after
 * `successThreshold` consecutive good ones, with the duration. A robot first seen healthy is
 * silent; one failing from the start is reported once the threshold is met (`previous: null`).
 */

export interface RobotHealthState {
  v: 1;
  health: ThresholdState | null;
}

const stateSchema = z.object({ v: z.literal(1), health: thresholdStateSchema.nullable() });

/** One check: a good one may resolve the incident, a failed one (with its error) may fire it. */
function onCheck(
  state: RobotHealthState,
  check: { good: true } | { good: false; error: ObservationError },
  at: number,
  options: RobotHealthOptions,
): DetectorResult<RobotHealthState> {
  const step = stepThreshold(state.health, check.good, at, options);
  const { transition } = step;
  const events: EventDraft[] = [];
  if (transition?.kind === 'resolved')
    events.push(draft(EVENT.robotHealthUp, transitionData(transition, 'up', 'down')));
  if (transition?.kind === 'fired' && !check.good) {
    events.push(
      draft(EVENT.robotHealthDown, {
        ...transitionData(transition, 'up', 'down'),
        consecutiveFailures: transition.count,
        lastError: errorRef(check.error),
      }),
    );
  }
  return { state: { v: 1, health: step.state }, events };
}

export const robotHealthDetector = defineDetector<RobotHealthState, unknown, RobotHealthOptions>({
  initial: () => ({ v: 1, health: null }),
  state: stateSchema,
  options: (raw) => readOptions(raw, DEFAULT_DETECTOR_OPTIONS.robotHealth),
  onValue: (state, _value, clock, options) => onCheck(state, { good: true }, clock.at, options),
  onError: (state, error, clock, options) => onCheck(state, { good: false, error }, clock.at, options),
  seeds: { health: (state, incident) => ({ ...state, health: alertingSince(incident.since) }) },
});
