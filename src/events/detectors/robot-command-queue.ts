import { z } from 'zod';
import { draft, EVENT } from '../catalogue.js';
import {
  atLeastOne,
  DEFAULT_DETECTOR_OPTIONS,
  type RobotCommandQueueOptions,
  readOptions,
} from '../detector-options.js';
import type { EventDraft } from '../types.js';
import { defineDetector, elapsed, isoOf, isRecord, storedTimeSchema } from './define.js';

/**
 * A robot's command queue (GET /v2/command-queue), by its length.
 *
 * `robot.command_queue.backlog` when the queue grows from fewer than `backlogThreshold` queued
 * commands to at least that many; the backlog stays open until the queue is empty, which is
 * `robot.command_queue.drained` with its duration. A queue that shrinks without emptying and grows
 * again is the same backlog. The first reading is the baseline, silent even when it is long. A
 * value without a whole, non-negative `length` is ignored; a failed observation changes nothing.
 */

export interface CommandQueueValue {
  /** Queued commands. */
  length: number;
}

export interface RobotCommandQueueState {
  v: 1;
  /** Queued commands at the last reading; null before the first. */
  length: number | null;
  /** While a backlog is open: when it started (epoch ms). */
  backlogSince: number | null;
}

const stateSchema = z
  .object({
    v: z.literal(1),
    length: z.number().int().nonnegative().nullable(),
    backlogSince: storedTimeSchema.nullable(),
  })
  // An open backlog was seen with commands queued: any other state was not written by this detector.
  .refine((state) => state.backlogSince === null || (state.length ?? 0) > 0);

function lengthOf(value: unknown): number | undefined {
  const length = isRecord(value) ? value.length : undefined;
  return typeof length === 'number' && Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

export const robotCommandQueueDetector = defineDetector<
  RobotCommandQueueState,
  CommandQueueValue,
  RobotCommandQueueOptions
>({
  initial: () => ({ v: 1, length: null, backlogSince: null }),
  state: stateSchema,
  options: (raw) => readOptions(raw, DEFAULT_DETECTOR_OPTIONS.robotCommandQueue),
  onValue: (state, value, clock, options) => {
    const length = lengthOf(value);
    if (length === undefined) return { state, events: [] };
    const previous = state.length;
    const threshold = atLeastOne(options.backlogThreshold);
    let backlogSince = state.backlogSince;
    const events: EventDraft[] = [];
    if (previous !== null && backlogSince === null && previous < threshold && length >= threshold) {
      backlogSince = clock.at;
      events.push(draft(EVENT.robotCommandQueueBacklog, { previous, current: length, threshold }));
    } else if (previous !== null && backlogSince !== null && length === 0) {
      events.push(
        draft(EVENT.robotCommandQueueDrained, {
          previous,
          current: 0,
          since: isoOf(backlogSince),
          durationMs: elapsed(backlogSince, clock.at),
        }),
      );
      backlogSince = null;
    }
    return { state: { v: 1, length, backlogSince }, events };
  },
  // The length it fired at: the backlog stays open until a reading of 0 drains it.
  seeds: {
    backlog: (_state, incident) => ({
      v: 1,
      length: Math.max(1, lengthOf({ length: incident.data.current }) ?? 1),
      backlogSince: incident.since,
    }),
  },
});
