import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import {
  type DetectorOptions,
  type DetectorOptionsConfig,
  toDetectorOptions,
} from '../events/detector-options.js';
import { naming } from '../events/detectors/define.js';
import { pollPaceDetector } from '../events/detectors/poll-pace.js';
import type { EntityKind } from '../events/types.js';
import type { LeaseRef, PollLeases } from '../store/poll-lease.js';
import type { SnapshotStore } from '../store/snapshot-store.js';
import type { HttpLimits } from '../upstream/config.js';
import type { PollerName, PollersConfig } from './config.js';
import { DegradedUpstreams } from './degraded-upstreams.js';
import { MembershipView, targetsOf } from './membership-view.js';
import { ObservationPipeline, type PipelineResult } from './observation-pipeline.js';
import { observe } from './observe.js';
import { emptyOutcome, type PollHooks, type PollOutcome } from './outcome.js';
import { paceRef } from './pace.js';
import { type PollJobData, pollerPhase, pollJobId, shardOffset } from './poll-queue.js';
import { kindOfLane, laneOf, type PollContext, type Poller, type PollUpstream } from './poller.js';
import { ENTITY_FACETS, POLLER_NAMES, POLLERS } from './registry.js';
import type { TickPace } from './scheduler.js';
import type { PollerSettings } from './settings.js';
import type { UpstreamWindows } from './upstream-windows.js';

/**
 * Runs poll jobs: the part of a poll that is the same for every poller.
 *
 * - **Planning** (`plan`): a tick of a list poller is one job; a tick of a per-entity poller is
 *   one job per `batch_size` entities, taken from the membership snapshot of its kind (the ids
 *   known and not currently missing from the list, sorted), each job carrying its ids.
 * - **Leases** (`runJob`): before polling, the job takes a poll lease per entity (list pollers:
 *   one for the list), TTL = interval + request time-out, renewed every third of that while the
 *   job runs, released at the end. An entity whose lease another poll holds is skipped and counted
 *   (`leaseHeld`): a poll that runs past its interval makes the next tick skip the entity rather
 *   than poll it twice at once.
 * - **Dispatch** to the poller named by the job, with a context whose `commit` is the observation
 *   pipeline (see pipeline.ts).
 *
 * `runTick` plans a tick and runs its jobs right here, without BullMQ: one deterministic poll,
 * for tests and tools.
 */

/**
 * The parts of the config file polling reads. The daemon passes the whole `Config`, which has
 * them all; tests may pass just these.
 */
export interface PollConfig {
  pollers: PollersConfig;
  detectors: DetectorOptionsConfig;
  upstream: { http: Pick<HttpLimits, 'max_in_flight' | 'request_timeout'> };
  worker: { concurrency: number; spread: number };
}

export interface PollRunnerOptions {
  config: PollConfig;
  upstream: PollUpstream;
  store: SnapshotStore;
  leases: PollLeases;
  windows: UpstreamWindows;
  logger: Logger;
  hooks?: PollHooks;
  /** Clock (epoch ms) for ticks, observation times and detectors; `Date.now` by default. */
  now?: () => number;
  /** Aborts upstream reads under way (shutdown after the grace period). */
  signal?: AbortSignal;
  /** Upstream reads one job makes at once; default `ceil(max_in_flight / worker.concurrency)`. */
  fetchConcurrency?: number;
  /** Lease owner prefix, unique per process; default `<hostname>-<pid>-<random>`. */
  owner?: string;
  /** Replaces the poller table (tests). */
  pollers?: Readonly<Record<PollerName, Poller>>;
}

export interface RunJobOptions {
  /**
   * Skip the job when its tick is more than one interval behind the clock: for the `local` pollers
   * the scheduler runs on timers (a loop that stalled that long runs the current tick instead).
   * Queued jobs never skip: a later tick coalesces into a shard's waiting job (`PollScheduler`).
   */
  skipStaleTicks?: boolean;
  /** For the lease owner token and logs; default the job id derived from the data. */
  jobId?: string;
}

export { targetsOf };

/** Splits sorted ids into shards of at most `batchSize`. */
export function shard(ids: readonly string[], batchSize: number): string[][] {
  const size = Math.max(1, Math.floor(batchSize));
  const shards: string[][] = [];
  for (let start = 0; start < ids.length; start += size) shards.push(ids.slice(start, start + size));
  return shards;
}

function countInto(outcome: PollOutcome, result: PipelineResult): PipelineResult {
  outcome.observed += result.observed;
  outcome.failed += result.failed;
  outcome.committed += result.committed;
  outcome.unchanged += result.unchanged;
  outcome.events += result.events.length;
  outcome.conflicts += result.conflicts;
  outcome.stale += result.stale;
  outcome.gaveUp += result.gaveUp;
  return result;
}

/**
 * A job's lease refs and, back from the leases, its ids: loops, not per-item callbacks made per job
 * (ARCHITECTURE.md, *Hot paths*).
 */
function leaseRefs(kind: EntityKind, ids: readonly string[], poller: string): LeaseRef[] {
  const refs = new Array<LeaseRef>(ids.length);
  for (let i = 0; i < ids.length; i += 1) refs[i] = { kind, id: ids[i] as string, scope: poller };
  return refs;
}

function idsOf(refs: readonly LeaseRef[]): string[] {
  const ids = new Array<string>(refs.length);
  for (let i = 0; i < refs.length; i += 1) ids[i] = (refs[i] as LeaseRef).id;
  return ids;
}

export class PollRunner {
  readonly config: PollConfig;
  #detectors: DetectorOptions;
  readonly #options: PollRunnerOptions;
  readonly #pollers: Readonly<Record<PollerName, Poller>>;
  readonly #now: () => number;
  readonly #signal: AbortSignal;
  readonly #logger: Logger;
  readonly #owner: string;
  readonly #fetchConcurrency: number;
  readonly #membership: MembershipView;
  readonly #degraded: DegradedUpstreams;
  /** Each per-entity poller's `pollerPhase`, by its place in the table (the same on every replica). */
  readonly #phases: ReadonlyMap<PollerName, number>;
  #serial = 0;
  #paceFailing = false;

  constructor(options: PollRunnerOptions) {
    this.#options = options;
    this.config = options.config;
    this.#detectors = toDetectorOptions(options.config.detectors);
    this.#pollers = options.pollers ?? POLLERS;
    const perEntity = POLLER_NAMES.filter((name) => this.#pollers[name]?.targets);
    this.#phases = new Map(perEntity.map((name, index) => [name, pollerPhase(index, perEntity.length)]));
    this.#now = options.now ?? Date.now;
    this.#signal = options.signal ?? new AbortController().signal;
    this.#logger = options.logger.child({ component: 'poller' });
    this.#membership = new MembershipView(options.store);
    this.#degraded = new DegradedUpstreams({ store: options.store, logger: this.#logger, now: this.#now });
    this.#owner = options.owner ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    this.#fetchConcurrency =
      options.fetchConcurrency ??
      Math.max(1, Math.ceil(options.config.upstream.http.max_in_flight / options.config.worker.concurrency));
  }

  /** The detector options poll jobs judge with (`detectors:`). */
  get detectors(): DetectorOptions {
    return this.#detectors;
  }

  /**
   * New detector thresholds (a config reload): a job takes them when it starts, so one under way
   * finishes with the options it began with. Intervals, batches and concurrency are not changed
   * here: they shape the schedule and the workers, built once.
   */
  useDetectors(config: DetectorOptionsConfig): void {
    this.#detectors = toDetectorOptions(config);
  }

  intervalOf(poller: PollerName): number {
    return this.config.pollers[poller].interval;
  }

  /** The tick number of `at` for `poller`: `Math.floor(at / interval)`, the same on every replica. */
  tickAt(poller: PollerName, at: number = this.#now()): number {
    return Math.floor(at / this.intervalOf(poller));
  }

  /** How long a poll of `poller` may hold its leases before they lapse (renewed while it runs). */
  leaseTtlOf(poller: PollerName): number {
    return this.intervalOf(poller) + this.config.upstream.http.request_timeout;
  }

  #batchSize(poller: PollerName): number {
    const settings: PollerSettings = this.config.pollers[poller];
    return settings.batch_size ?? Number.POSITIVE_INFINITY;
  }

  /** The jobs of one tick of `poller`. */
  async plan(poller: PollerName, tick: number): Promise<PollJobData[]> {
    const definition = this.#pollers[poller];
    if (!definition.targets) return [{ poller, tick, shard: 0, shards: 1 }];
    const { ids } = await this.#membership.current(definition.targets);
    const shards = shard(ids, this.#batchSize(poller));
    const interval = this.intervalOf(poller);
    const spread = this.config.worker.spread;
    return shards.map((ids, index) => ({
      poller,
      tick,
      shard: index,
      shards: shards.length,
      ids,
      offsetMs: shardOffset(index, shards.length, interval, spread, this.#phases.get(poller)),
    }));
  }

  /** Plans one tick (default: the current one) and runs all its jobs here; resolves when all are done. */
  async runTick(poller: PollerName, tick: number = this.tickAt(poller)): Promise<PollOutcome[]> {
    const jobs = await this.plan(poller, tick);
    return Promise.all(jobs.map((job) => this.runJob(job)));
  }

  /** Runs one poll job: leases, the poller, release. */
  async runJob(data: PollJobData, options: RunJobOptions = {}): Promise<PollOutcome> {
    const started = performance.now();
    const definition = this.#pollers[data.poller];
    if (!definition) throw new TypeError(`unknown poller ${JSON.stringify(data.poller)}`);
    const outcome = emptyOutcome(data.poller, data.tick, data.shard, data.offsetMs);
    const jobId = options.jobId ?? pollJobId(data);

    if (options.skipStaleTicks && this.tickAt(data.poller) - data.tick > 1) {
      outcome.skipped = 'stale-tick';
      this.#logger.debug({ job: jobId }, 'skipped a poll job whose tick is long past');
      this.#finished(outcome, started);
      return outcome;
    }

    const kind = definition.targets;
    let ids = kind ? [...new Set(data.ids ?? [])] : undefined;
    if (kind && ids) {
      const sample = await this.#sampleWhileDegraded(kind);
      if (sample !== undefined && data.shard > 0) {
        outcome.skipped = 'upstream-degraded';
        this.#logger.debug(
          { job: jobId },
          'skipped a poll job: its upstream is degraded (only a sample is polled)',
        );
        this.#finished(outcome, started);
        return outcome;
      }
      if (sample !== undefined) ids = ids.slice(0, sample);
    }
    const refs: LeaseRef[] =
      kind && ids ? leaseRefs(kind, ids, data.poller) : [{ kind: 'fleet', id: data.poller, scope: 'poll' }];
    outcome.targets = refs.length;

    const { leases } = this.#options;
    const ttl = this.leaseTtlOf(data.poller);
    this.#serial += 1;
    const owner = `${this.#owner}/${jobId}/${this.#serial}`;
    const held = await leases.acquire(refs, ttl, owner);
    outcome.leaseHeld = refs.length - held.length;
    if (outcome.leaseHeld > 0) {
      this.#logger.debug(
        { job: jobId, skipped: outcome.leaseHeld },
        'entities skipped: a previous poll still holds them',
      );
    }
    if (held.length === 0) {
      this.#finished(outcome, started);
      return outcome;
    }

    const heartbeat = setInterval(
      () => {
        leases.extend(held, ttl, owner).catch((error: unknown) => {
          this.#logger.debug({ job: jobId, err: (error as Error).message }, 'could not renew poll leases');
        });
      },
      Math.max(100, Math.floor(ttl / 3)),
    );
    heartbeat.unref();
    try {
      const ctx = this.#context(data, outcome);
      await definition.poll(ctx, kind ? idsOf(held) : undefined);
    } finally {
      clearInterval(heartbeat);
      await leases.release(held, owner).catch((error: unknown) => {
        this.#logger.warn(
          { job: jobId, err: (error as Error).message },
          'could not release poll leases (they expire by themselves)',
        );
      });
    }
    this.#finished(outcome, started);
    return outcome;
  }

  /**
   * How many entities of a tick to poll while the upstream `kind` is read from (or the token
   * issuer) is degraded; undefined when it is not, or when `pollers.upstream.degraded_sample` is 0.
   */
  /** `#sampleWhileDegraded` when it needs no read; 'unknown' when it does. */
  #knownSample(kind: EntityKind): number | undefined | 'unknown' {
    const sample = this.config.pollers.upstream.degraded_sample;
    if (!this.config.pollers.upstream.enabled || sample === 0) return undefined;
    const degraded = this.#degraded.known(kind);
    if (degraded === undefined) return 'unknown';
    return degraded.length > 0 ? sample : undefined;
  }

  async #sampleWhileDegraded(kind: EntityKind): Promise<number | undefined> {
    const known = this.#knownSample(kind);
    if (known !== 'unknown') return known;
    const degraded = await this.#degraded.of(kind);
    return degraded.length > 0 ? this.config.pollers.upstream.degraded_sample : undefined;
  }

  /**
   * The scheduler enqueued tick `tick` of `poller`, and how its shards found the queue (`TickPace`).
   * The coalesced shards are counted, and the tick is judged as the poller's pace (pace.ts) —
   * except while the upstream the poller reads from (or the token issuer) is degraded or not
   * settled either way (a bad streak under way: it may be degraded within a window; a good one
   * while degraded): slow polls are then that incident's, and while degraded the runner polls only
   * a sample anyway. Never throws.
   */
  async tickEnqueued(
    poller: PollerName,
    tick: number,
    { shards, coalesced, waiting }: TickPace,
  ): Promise<void> {
    try {
      if (coalesced > 0) this.#options.hooks?.shardsCoalesced?.(poller, coalesced);
    } catch (error) {
      this.#logger.debug({ err: (error as Error).message }, 'poll hook failed');
    }
    if (shards === 0 || waiting === undefined) return;
    try {
      const definition = this.#pollers[poller];
      if (!definition || definition.local) return;
      const kind = definition.targets ?? kindOfLane(laneOf(definition));
      if ((await this.#degraded.unsettled(kind)).length > 0) return;
      const intervalMs = this.intervalOf(poller);
      await this.#pipeline().run(
        {
          poller,
          detector: naming(pollPaceDetector, 'poller', poller),
          options: this.detectors.pollPace,
          strictlyNewer: true,
        },
        [
          {
            ref: paceRef(poller),
            observation: {
              ok: true,
              at: new Date(tick * intervalMs).toISOString(),
              value: { shards, coalesced, waiting, intervalMs },
            },
          },
        ],
      );
      this.#paceFailing = false;
    } catch (error) {
      // Once per run of failures (Redis away fails every tick of every poller).
      if (!this.#paceFailing) {
        this.#logger.warn(
          { poller, tick, err: (error as Error).message },
          'could not judge the polling pace',
        );
      }
      this.#paceFailing = true;
    }
  }

  #finished(outcome: PollOutcome, started: number): void {
    const durationMs = Math.round(performance.now() - started);
    try {
      this.#options.hooks?.jobFinished?.(outcome, durationMs);
    } catch (error) {
      this.#logger.debug({ err: (error as Error).message }, 'poll hook failed');
    }
    this.#logger.debug({ ...outcome, durationMs }, 'poll job done');
  }

  /** The observation pipeline over this runner's store, clock, logger and hooks. */
  #pipeline(): ObservationPipeline {
    return new ObservationPipeline({
      store: this.#options.store,
      now: this.#now,
      logger: this.#logger,
      hooks: this.#options.hooks,
    });
  }

  #context(job: PollJobData, outcome: PollOutcome): PollContext {
    const now = this.#now;
    const signal = this.#signal;
    const logger = this.#logger;
    const pipeline = this.#pipeline();
    return {
      job,
      settings: this.config.pollers[job.poller],
      upstream: this.#options.upstream,
      store: this.#options.store,
      windows: this.#options.windows,
      detectors: this.detectors,
      entityFacets: ENTITY_FACETS,
      now,
      signal,
      logger,
      fetchConcurrency: this.#fetchConcurrency,
      membership: (kind) => this.#membership.current(kind),
      observe: (read) => observe(now, () => read(signal), signal),
      commit: async (spec, inputs) => countInto(outcome, await pipeline.run(spec, inputs)),
      commitStream: (spec) => {
        const stream = pipeline.stream(spec);
        return {
          add: (input) => stream.add(input),
          done: async () => countInto(outcome, await stream.done()),
        };
      },
      heldBack: (position) => {
        const kind = this.#pollers[job.poller]?.targets;
        if (!kind) return false;
        const held = (sample: number | undefined) =>
          sample !== undefined && (job.shard > 0 || position >= sample);
        const known = this.#knownSample(kind);
        return known === 'unknown' ? this.#sampleWhileDegraded(kind).then(held) : held(known);
      },
      notDue: (count) => {
        outcome.notDue += count;
      },
      countError: (ref, error) => {
        try {
          this.#options.hooks?.observationError?.({ poller: job.poller, ref, error });
        } catch (hookError) {
          logger.debug({ err: (hookError as Error).message }, 'observation error hook failed');
        }
      },
    };
  }
}
