import type { Counter, Histogram } from 'prom-client';
import type { ObservationErrorInfo, PollHooks, PollOutcome } from '../pollers/outcome.js';
import { isPollerName } from '../pollers/registry.js';

/**
 * Poll metrics, fed by the runner's `PollHooks` (one `jobFinished` per job, one
 * `observationError` per failed observation) and by the poll worker's `failed` event (`jobFailed`:
 * a job that threw, so `jobFinished` never came).
 *
 * Result of a job: `skipped` (a `local` poller's tick was long past when its timer fired), `upstream_degraded` (not the sample polled
 * while its upstream is degraded), `lease_held` (another poll held every
 * target), `failed` (every observation failed), `partial` (some did), `ok`, or `error` (threw).
 * Lag: the job's start minus its tick's start (`tick × interval`, plus the deliberate delay of the
 * `upstream` poller). Overrun: the job finished after its poller's next tick began.
 */

export type PollResult =
  | 'ok'
  | 'partial'
  | 'failed'
  | 'lease_held'
  | 'skipped'
  | 'upstream_degraded'
  | 'error';
export const POLL_RESULTS: readonly PollResult[] = [
  'ok',
  'partial',
  'failed',
  'lease_held',
  'skipped',
  'upstream_degraded',
  'error',
];

export interface PollTiming {
  intervalMs: number;
  /** How long after its tick's start a job is meant to start (the `upstream` poller waits). */
  delayMs?: number;
}

export interface PollMetricsOptions {
  duration: Histogram<'poller'>;
  lag: Histogram<'poller'>;
  jobs: Counter<'poller' | 'result'>;
  overrun: Counter<'poller'>;
  coalesced: Counter<'poller'>;
  observations: Counter<'poller'>;
  observationErrors: Counter<'poller' | 'code'>;
  /** Per poller; lag and overrun are measured only for pollers listed here. */
  timings: Readonly<Partial<Record<string, PollTiming>>>;
  now: () => number;
}

export interface PollMetricHooks extends Required<PollHooks> {
  /** A poll job threw (the BullMQ worker's `failed` event). */
  jobFailed(poller: unknown): void;
}

export function resultOf(outcome: PollOutcome): PollResult {
  if (outcome.skipped === 'upstream-degraded') return 'upstream_degraded';
  if (outcome.skipped) return 'skipped';
  if (outcome.targets > 0 && outcome.leaseHeld >= outcome.targets) return 'lease_held';
  if (outcome.failed > 0) return outcome.failed >= outcome.observed ? 'failed' : 'partial';
  return 'ok';
}

export function createPollHooks(options: PollMetricsOptions): PollMetricHooks {
  const { now, timings } = options;
  return {
    observationError(info: ObservationErrorInfo) {
      options.observationErrors.inc({ poller: info.poller, code: info.error.code });
    },
    jobFinished(outcome: PollOutcome, durationMs: number, at?: number) {
      const poller = outcome.poller;
      options.duration.observe({ poller }, Math.max(0, durationMs) / 1000);
      options.jobs.inc({ poller, result: resultOf(outcome) });
      if (outcome.observed > 0) options.observations.inc({ poller }, outcome.observed);
      const timing = timings[poller];
      if (!timing || !(timing.intervalMs > 0)) return;
      const finishedAt = at ?? now();
      const tickStart = outcome.tick * timing.intervalMs + (timing.delayMs ?? 0);
      const startedAt = finishedAt - Math.max(0, durationMs);
      options.lag.observe({ poller }, Math.max(0, startedAt - tickStart - outcome.offsetMs) / 1000);
      if (finishedAt > tickStart + timing.intervalMs) options.overrun.inc({ poller });
    },
    shardsCoalesced(poller, shards) {
      options.coalesced.inc({ poller }, shards);
    },
    jobFailed(poller: unknown) {
      // A malformed job names no poller (or any string): keep the label bounded.
      options.jobs.inc({ poller: isPollerName(poller) ? poller : 'unknown', result: 'error' });
    },
  };
}
