import type { PollerName } from '../config/schema.js';
import type { EntityKind, ObservationError } from '../events/types.js';
import type { SnapshotRef } from '../store/snapshot-store.js';

export type { PollerName };

/** Every poller, in the order the scheduler ticks them. */
export const POLLER_NAMES: readonly PollerName[] = [
  'vehicles',
  'power',
  'robots',
  'robot_health',
  'robot_feedback',
  'robot_lease',
  'robot_config',
  'upstream',
];

export function isPollerName(value: unknown): value is PollerName {
  return typeof value === 'string' && (POLLER_NAMES as readonly string[]).includes(value);
}

/**
 * One poll job: a shard of one poller's tick. `ids` lists the shard's entities for per-entity
 * pollers (fixed when the tick is planned, so every run of the job polls the same entities); list
 * pollers have a single shard and no ids.
 */
export interface PollJobData {
  poller: PollerName;
  /** `Math.floor(epochMs / interval)` when the tick was planned. */
  tick: number;
  /** 0-based. */
  shard: number;
  shards: number;
  ids?: string[];
  /**
   * When within its tick the job is meant to start (ms after the tick's start): a tick's shards
   * are spread over part of the interval (`worker.spread`) instead of all starting at once.
   */
  offsetMs?: number;
}

/**
 * Planned start of shard `shard` of `shards` within its tick: evenly over the first `spread` of
 * the interval, so a large fleet's requests (and the events they find) flow steadily rather than
 * as one burst per tick. One shard starts at once.
 */
export function shardOffset(shard: number, shards: number, intervalMs: number, spread: number): number {
  if (shards <= 1 || spread <= 0) return 0;
  return Math.floor((intervalMs * spread * shard) / shards);
}

/** BullMQ job id of a shard: `poll-<poller>-<tick>-<shard>of<shards>` (no `:`, never all digits). */
export function pollJobId(data: Pick<PollJobData, 'poller' | 'tick' | 'shard' | 'shards'>): string {
  return `poll-${data.poller}-${data.tick}-${data.shard}of${data.shards}`;
}

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
  /** Observations made (one per polled entity and signal). */
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
  /** True when the job was skipped as a whole (its tick is too old). */
  skipped?: 'stale-tick';
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

/** A failed observation, as reported to hooks (for metrics). */
export interface ObservationErrorInfo {
  poller: string;
  ref: SnapshotRef;
  error: ObservationError;
}

/**
 * Hooks for metrics (Prometheus later). Every hook is optional and must not throw (a throwing hook
 * is caught and logged).
 */
export interface PollHooks {
  observationError?(info: ObservationErrorInfo): void;
  /** Once per finished job. */
  jobFinished?(outcome: PollOutcome, durationMs: number): void;
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
    jobFinished: (outcome, durationMs) => {
      for (const hook of list) safe(() => hook.jobFinished?.(outcome, durationMs));
    },
  };
}

/** The membership snapshot of a kind: `{kind: 'fleet', id: <kind>, signal: 'membership'}`. */
export function membershipRef(kind: EntityKind): SnapshotRef {
  return { kind: 'fleet', id: kind, signal: 'membership' };
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Targets of per-entity pollers: ids known to the membership state and not currently missing. */
export function targetsOf(state: unknown): string[] {
  if (state === null || typeof state !== 'object') return [];
  const { known, missing } = state as { known?: unknown; missing?: unknown };
  if (!Array.isArray(known)) return [];
  const gone = new Set(
    Array.isArray(missing)
      ? missing.map((entry) => (entry as { id?: unknown } | null)?.id).filter((id) => typeof id === 'string')
      : [],
  );
  const ids = new Set(
    known.filter((id): id is string => typeof id === 'string' && id !== '' && !gone.has(id)),
  );
  return [...ids].sort(byCodeUnit);
}
