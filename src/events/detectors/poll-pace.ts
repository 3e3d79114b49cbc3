import { z } from 'zod';
import { draft, EVENT } from '../catalogue.js';
import { DEFAULT_DETECTOR_OPTIONS, type PollPaceOptions, readOptions } from '../detector-options.js';
import { type Clock, defineDetector, isRecord } from './define.js';
import { alertingSince, judgeIncident, type ThresholdState, thresholdStateSchema } from './threshold.js';

/**
 * The monitor's own polling pace, one observation per tick of a queued poller: how many shards
 * (jobs) the tick has, how many of them the scheduler added no job for because the shard's job of
 * an earlier tick was still queued or running (coalesced, see pollers/scheduler.ts), and how many
 * of those had not even started: no worker took them for a whole interval. A tick with such a
 * waiting shard is behind: fleetwatch lacks the workers or the CPU for its pace. A shard whose job
 * is still running is not: one entity's time-outs and retries make a slow poll, which is the
 * upstream's trouble, not the monitor's (an offline robot would otherwise keep a small fleet
 * "behind" for as long as it is offline).
 *
 * `monitor.polling.behind` after `failureThreshold` consecutive ticks behind (one slow tick, a
 * pause of the collector, says nothing), `monitor.polling.caught_up` after `successThreshold`
 * ticks with no shard left waiting, with the duration. The subject is `poller/<name>`, supplied
 * by the caller.
 */

export interface PollPace {
  shards: number;
  coalesced: number;
  waiting: number;
  intervalMs: number;
}

export interface PollPaceState {
  v: 1;
  pace: ThresholdState | null;
}

const stateSchema = z.object({ v: z.literal(1), pace: thresholdStateSchema.nullable() });

function wholeOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

function paceOf(value: unknown): PollPace | undefined {
  if (!isRecord(value)) return undefined;
  const shards = wholeOf(value.shards);
  const coalesced = wholeOf(value.coalesced);
  const waiting = wholeOf(value.waiting);
  const intervalMs = wholeOf(value.intervalMs);
  if (shards === undefined || coalesced === undefined || waiting === undefined || intervalMs === undefined)
    return undefined;
  if (shards === 0 || coalesced > shards || waiting > coalesced || intervalMs === 0) return undefined;
  return { shards, coalesced, waiting, intervalMs };
}

function onTick(state: PollPaceState, value: unknown, clock: Clock, options: PollPaceOptions) {
  const pace = paceOf(value);
  if (pace === undefined) return { state, events: [] };
  const judged = judgeIncident(state.pace, pace.waiting === 0, clock.at, options, ['on_pace', 'behind'], {
    fired: (data, count) =>
      draft(EVENT.pollingBehind, {
        ...data,
        consecutiveTicks: count,
        shards: pace.shards,
        coalesced: pace.coalesced,
        waiting: pace.waiting,
        intervalMs: pace.intervalMs,
      }),
    resolved: (data) => draft(EVENT.pollingCaughtUp, data),
  });
  return { state: { v: 1 as const, pace: judged.state }, events: judged.events };
}

export const pollPaceDetector = defineDetector<PollPaceState, PollPace, PollPaceOptions>({
  initial: () => ({ v: 1, pace: null }),
  state: stateSchema,
  options: (raw) => readOptions(raw, DEFAULT_DETECTOR_OPTIONS.pollPace),
  onValue: onTick,
  seeds: { pace: (state, incident) => ({ ...state, pace: alertingSince(incident.since) }) },
});
