import { z } from 'zod';
import { draft, EVENT } from '../catalogue.js';
import { DEFAULT_DETECTOR_OPTIONS, type RobotHealthOptions, readOptions } from '../detector-options.js';
import type { EventDraft } from '../types.js';
import { defineDetector, errorRef, isoOf } from './define.js';
import { stepThreshold, type ThresholdState, thresholdStateSchema } from './threshold.js';

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

export const robotHealthDetector = defineDetector<RobotHealthState, unknown, RobotHealthOptions>({
  initial: () => ({ v: 1, health: null }),
  parseState: (raw) => {
    const parsed = stateSchema.safeParse(raw);
    return parsed.success ? parsed.data : undefined;
  },
  options: (raw) => readOptions(raw, DEFAULT_DETECTOR_OPTIONS.robotHealth),
  onValue: (state, _value, clock, options) => {
    const step = stepThreshold(state.health, true, clock.at, options);
    const events: EventDraft[] = [];
    if (step.transition?.kind === 'resolved') {
      events.push(
        draft(EVENT.robotHealthUp, {
          previous: 'down',
          current: 'up',
          since: isoOf(step.transition.since),
          durationMs: step.transition.durationMs,
        }),
      );
    }
    return { state: { v: 1, health: step.state }, events };
  },
  onError: (state, error, clock, options) => {
    const step = stepThreshold(state.health, false, clock.at, options);
    const events: EventDraft[] = [];
    if (step.transition?.kind === 'fired') {
      events.push(
        draft(EVENT.robotHealthDown, {
          previous: step.transition.previousKnown ? 'up' : null,
          current: 'down',
          since: isoOf(step.transition.since),
          consecutiveFailures: step.transition.count,
          lastError: errorRef(error),
        }),
      );
    }
    return { state: { v: 1, health: step.state }, events };
  },
});
