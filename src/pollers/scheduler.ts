import type { Logger } from 'pino';
import type { PollerName, PollersConfig } from './config.js';
import { type PollJobData, type PollQueues, pollJobId, pollShardId } from './poll-queue.js';
import { laneOf, type Poller, type PollLane } from './poller.js';
import { POLLER_NAMES, POLLERS } from './registry.js';

/**
 * Turns the clock into poll jobs.
 *
 * A timer beats on each second of the wall clock. On each beat, for every enabled poller, the tick
 * number is `Math.floor(now / interval)`: clock-aligned, so every replica computes the same number
 * for the same stretch of time whatever second it started in. When a poller's tick number has
 * moved on since this replica last enqueued it, the tick's jobs are planned and added to the
 * poll queue of the poller's lane (`poll-fleet`, `poll-robots`: see `POLL_LANES`) in one `addBulk`, with job ids `poll-<poller>-<tick>-<shard>of<shards>`:
 * however many replicas do this, BullMQ keeps one job per id, so one set of jobs exists per tick.
 * The current tick is enqueued at start too (a duplicate of what another replica added is
 * ignored).
 *
 * A shard has at most one job waiting or running: each job carries the shard's deduplication id
 * (`pollShardId`), and while an earlier tick's job of the shard is still in the queue or under
 * way, BullMQ adds none for it (reported by `onEnqueued`). A poller behind its interval then polls
 * every shard in turn, each as often as the workers manage, and its queue stays one job per shard
 * long. (Before, every tick added every shard and a job that had waited a whole interval was
 * dropped: with the workers short of the pace, the same last shards of every tick were dropped
 * every time, and their entities went unpolled for as long as the shortfall lasted.)
 *
 * If Redis is away the beat logs once, keeps the tick pending and tries again on the next beat
 * (a tick that ended meanwhile is skipped: the next one polls everything anyway).
 *
 * A `local` poller (the `upstream` poller) is not enqueued: each replica runs its tick's jobs
 * itself when they are due (`runLocal`), so it never waits behind the poll queues' jobs; the
 * job's lease lets one replica run it, the others find it held.
 */

export interface ScheduledPoller {
  name: PollerName;
  intervalMs: number;
  /** Delay of the tick's jobs (the `upstream` poller waits for every replica's counts). */
  delayMs?: number;
  /** Run here by `runLocal` instead of enqueued (see `Poller.local`). */
  local?: boolean;
  /** The lane whose queue takes its jobs (see `laneOf`). */
  lane: PollLane;
}

/** The enabled pollers of the config, in tick order, with their intervals and job delays. */
export function scheduledPollers(settings: PollersConfig): ScheduledPoller[] {
  return POLLER_NAMES.filter((name) => settings[name].enabled).map((name) => {
    const intervalMs = settings[name].interval;
    const poller: Poller = POLLERS[name];
    return {
      name,
      intervalMs,
      ...(poller.delayMs ? { delayMs: poller.delayMs(intervalMs) } : {}),
      ...(poller.local ? { local: true } : {}),
      lane: laneOf(poller),
    };
  });
}

/** How one tick's shards found the poll queue. */
export interface TickPace {
  /** Jobs planned. */
  shards: number;
  /** Shards not added: a job of theirs from an earlier tick was still queued or running. */
  coalesced: number;
  /**
   * Of those, the shards whose earlier job had not started: no worker took it for a whole
   * interval. A job still running is not counted: one slow poll (an entity's time-outs and
   * retries) is the upstream's, and the shard's other jobs are not held up by it. Undefined when
   * the queue could not be asked.
   */
  waiting: number | undefined;
}

/** States of a job that no worker has taken yet. */
const NOT_STARTED: ReadonlySet<string> = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children']);

export interface PollSchedulerOptions {
  /** The poll queue of each lane. */
  queues: PollQueues;
  /** The jobs of one tick (see `PollRunner.plan`). */
  plan(poller: PollerName, tick: number): Promise<PollJobData[]>;
  pollers: readonly ScheduledPoller[];
  logger?: Logger;
  now?: () => number;
  /** Runs one job of a `local` poller here (see `PollRunner.runJob`); must not throw. */
  runLocal?(data: PollJobData): Promise<unknown>;
  /** A tick was enqueued, and how its shards found the queue (see `PollRunner.tickEnqueued`). Not awaited; must not reject. */
  onEnqueued?(poller: PollerName, tick: number, pace: TickPace): unknown;
}

export class PollScheduler {
  readonly #options: PollSchedulerOptions;
  readonly #now: () => number;
  readonly #logger: Logger | undefined;
  readonly #last = new Map<PollerName, number>();
  #beatTimer: NodeJS.Timeout | undefined;
  #beat: Promise<number> | undefined;
  /** Local jobs waiting for their time. */
  readonly #localTimers = new Set<NodeJS.Timeout>();
  /** Local jobs running, and `onEnqueued` reports under way: `stop` waits for them. */
  readonly #running = new Set<Promise<unknown>>();
  #failing = false;
  #stopped = false;

  constructor(options: PollSchedulerOptions) {
    for (const poller of options.pollers) {
      if (!Number.isInteger(poller.intervalMs) || poller.intervalMs < 1)
        throw new RangeError(`interval of poller ${poller.name} must be a positive integer`);
    }
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#logger = options.logger?.child({ component: 'scheduler' });
  }

  /** The tick most recently enqueued per poller. */
  get enqueued(): ReadonlyMap<PollerName, number> {
    return this.#last;
  }

  /**
   * Beats at once and then on each second of the wall clock. A plain timer, not a node-cron task:
   * node-cron reads the time of each beat through `Intl.DateTimeFormat`, which maps ICU's calendar
   * data into the process, about 5 MB of an idle daemon's memory for a beat that needs no calendar.
   */
  start(): void {
    if (this.#beatTimer || this.#stopped) return;
    const next = (): void => {
      this.#beatTimer = setTimeout(
        () => {
          if (this.#stopped) return;
          void this.tick();
          next();
        },
        1_000 - (Date.now() % 1_000),
      );
    };
    next();
    void this.tick();
  }

  /** Stops the beat and waits for an enqueue under way. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#beatTimer);
    this.#beatTimer = undefined;
    await this.#beat?.catch(() => 0);
    for (const timer of this.#localTimers) clearTimeout(timer);
    this.#localTimers.clear();
    await Promise.allSettled([...this.#running]);
  }

  #track(work: unknown): void {
    const run = Promise.resolve(work).catch(() => undefined);
    this.#running.add(run);
    void run.finally(() => this.#running.delete(run));
  }

  /** One beat: enqueues every poller whose tick moved on. Resolves with the number of jobs added. */
  tick(): Promise<number> {
    this.#beat ??= this.#tick().finally(() => {
      this.#beat = undefined;
    });
    return this.#beat;
  }

  async #tick(): Promise<number> {
    let added = 0;
    let failure: unknown;
    for (const poller of this.#options.pollers) {
      if (this.#stopped) break;
      const tick = Math.floor(this.#now() / poller.intervalMs);
      if (this.#last.get(poller.name) === tick) continue;
      try {
        added += await this.#enqueue(poller, tick);
        this.#last.set(poller.name, tick);
      } catch (error) {
        failure = error;
      }
    }
    if (failure !== undefined && !this.#failing) {
      this.#failing = true;
      this.#logger?.warn(
        { err: (failure as Error).message },
        'could not enqueue poll jobs; retrying every second',
      );
    } else if (failure === undefined && this.#failing) {
      this.#failing = false;
      this.#logger?.info('enqueuing poll jobs again');
    }
    return added;
  }

  async #enqueue(poller: ScheduledPoller, tick: number): Promise<number> {
    const jobs = await this.#options.plan(poller.name, tick);
    if (jobs.length === 0) return 0;
    const tickStart = tick * poller.intervalMs + (poller.delayMs ?? 0);
    const now = this.#now();
    const { runLocal } = this.#options;
    if (poller.local && runLocal) {
      for (const data of jobs) {
        const timer = setTimeout(
          () => {
            this.#localTimers.delete(timer);
            if (this.#stopped) return;
            this.#track(runLocal(data));
          },
          Math.max(0, tickStart + (data.offsetMs ?? 0) - now),
        );
        timer.unref();
        this.#localTimers.add(timer);
      }
      this.#logger?.debug({ poller: poller.name, tick, jobs: jobs.length }, 'local poll tick planned');
      return jobs.length;
    }
    const ids = jobs.map(pollJobId);
    const added = await this.#options.queues[poller.lane].addBulk(
      jobs.map((data, i) => {
        // Measured from the tick's start: a replica that enqueues late does not push shards later.
        const delay = Math.max(0, tickStart + (data.offsetMs ?? 0) - now);
        const opts = { jobId: ids[i], deduplication: { id: pollShardId(data) } };
        return { name: data.poller, data, opts: delay > 0 ? { ...opts, delay } : opts };
      }),
    );
    // BullMQ answers a deduplicated add with the id of the job that holds the shard: an earlier tick's.
    const holders = added.flatMap((job, i) => (job.id !== ids[i] && job.id ? [job.id] : []));
    const coalesced = holders.length;
    const { onEnqueued } = this.#options;
    if (onEnqueued) {
      const queue = this.#options.queues[poller.lane];
      this.#track(
        Promise.all(holders.map((id) => queue.getJobState(id)))
          .then(
            (states) => states.filter((state) => NOT_STARTED.has(state)).length,
            () => undefined,
          )
          .then((waiting) => onEnqueued(poller.name, tick, { shards: jobs.length, coalesced, waiting })),
      );
    }
    if (coalesced > 0) {
      this.#logger?.debug(
        { poller: poller.name, tick, coalesced },
        'poll shards still queued or running from an earlier tick: this tick adds no job for them',
      );
    }
    this.#logger?.debug({ poller: poller.name, tick, jobs: jobs.length - coalesced }, 'poll tick enqueued');
    return jobs.length - coalesced;
  }
}
