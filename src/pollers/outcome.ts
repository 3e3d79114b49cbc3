import type { PollerName } from './config.js';
import type { ObservationErrorInfo, ObservationHooks } from './observation-pipeline.js';

export type { ObservationErrorInfo };

/** What one poll job did. */
export interface PollOutcome {
  poller: PollerName;
  tick: number;
  shard: number;
  /** The job's planned start within its tick (see `PollJobData.offsetMs`). */
  offsetMs: number;
  /** Entities (or lists) the job was asked to poll. */
  targets: number;
  /** Skipped because another poll still held their lease. */
  leaseHeld: number;
  /** Skipped because they are not due (not power-capable vehicles between their rare polls). */
  notDue: number;
  /** Observations made (one per polled entity and facet). */
  observed: number;
  /** Of which failed (observation errors). */
  failed: number;
  /** Snapshots committed with a new version. */
  committed: number;
  /** Observations that changed nothing (recorded with `touch`). */
  unchanged: number;
  /** Events emitted. */
  events: number;
  /** Version conflicts retried (another writer committed first). */
  conflicts: number;
  /** Observations dropped because a newer one was already stored. */
  stale: number;
  /** Observations abandoned after too many conflicts. */
  gaveUp: number;
  /**
   * Why the job was skipped as a whole: its tick is too old, or the upstream it reads from is
   * degraded and this shard is not the sample (degraded-upstreams.ts).
   */
  skipped?: 'stale-tick' | 'upstream-degraded';
}

export function emptyOutcome(poller: PollerName, tick: number, shard: number, offsetMs = 0): PollOutcome {
  return {
    poller,
    tick,
    shard,
    offsetMs,
    targets: 0,
    leaseHeld: 0,
    notDue: 0,
    observed: 0,
    failed: 0,
    committed: 0,
    unchanged: 0,
    events: 0,
    conflicts: 0,
    stale: 0,
    gaveUp: 0,
  };
}

/**
 * Hooks for metrics (Prometheus later). Every hook is optional and must not throw (a throwing hook
 * is caught and logged).
 */
export interface PollHooks extends ObservationHooks {
  /**
   * Once per finished job. `finishedAt` (epoch ms) is given when the hook is told later than the
   * job finished (the poll thread's hooks arrive in batches); otherwise it is now.
   */
  jobFinished?(outcome: PollOutcome, durationMs: number, finishedAt?: number): void;
  /** A tick of `poller` added no job for `shards` of its shards: theirs from an earlier tick were still queued or running. */
  shardsCoalesced?(poller: PollerName, shards: number): void;
}

/** In-memory counters that implement `PollHooks`: what tests and the metrics endpoint read. */
export class PollCounters implements PollHooks {
  readonly observationErrors = new Map<string, number>();
  readonly totals = new Map<PollerName, Omit<PollOutcome, 'poller' | 'tick' | 'shard' | 'skipped'>>();
  jobs = 0;
  staleTicks = 0;

  observationError(info: ObservationErrorInfo): void {
    const key = `${info.poller}:${info.error.code}`;
    this.observationErrors.set(key, (this.observationErrors.get(key) ?? 0) + 1);
  }

  jobFinished(outcome: PollOutcome): void {
    this.jobs += 1;
    if (outcome.skipped === 'stale-tick') this.staleTicks += 1;
    const { poller, tick: _tick, shard: _shard, skipped: _skipped, ...counts } = outcome;
    const total = this.totals.get(poller);
    if (!total) {
      this.totals.set(poller, { ...counts });
      return;
    }
    for (const key of Object.keys(counts) as (keyof typeof counts)[]) total[key] += counts[key];
  }

  /** Observation errors of one poller (all codes), or of one poller and code. */
  errors(poller: string, code?: string): number {
    if (code !== undefined) return this.observationErrors.get(`${poller}:${code}`) ?? 0;
    let sum = 0;
    for (const [key, count] of this.observationErrors) if (key.startsWith(`${poller}:`)) sum += count;
    return sum;
  }
}

/** Calls every hook set, swallowing (and reporting) exceptions. */
export function combineHooks(
  hooks: ReadonlyArray<PollHooks | undefined>,
  onError: (error: unknown) => void = () => {},
): PollHooks {
  const list = hooks.filter((hook): hook is PollHooks => hook !== undefined);
  const safe = (fn: () => void) => {
    try {
      fn();
    } catch (error) {
      onError(error);
    }
  };
  return {
    observationError: (info) => {
      for (const hook of list) safe(() => hook.observationError?.(info));
    },
    jobFinished: (outcome, durationMs, finishedAt) => {
      for (const hook of list) safe(() => hook.jobFinished?.(outcome, durationMs, finishedAt));
    },
    shardsCoalesced: (poller, shards) => {
      for (const hook of list) safe(() => hook.shardsCoalesced?.(poller, shards));
    },
  };
}
