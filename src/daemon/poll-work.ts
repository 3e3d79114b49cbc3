import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { RedisClient } from '../lib/redis-connection.js';
import { closeWorker, settlesWithin } from '../lib/shutdown.js';
import type { PollQueues } from '../pollers/poll-queue.js';
import { createPollWorker, type PollWorker } from '../pollers/poll-worker.js';
import { POLL_LANES } from '../pollers/poller.js';
import type { PollRunner } from '../pollers/runner.js';
import { PollScheduler, scheduledPollers } from '../pollers/scheduler.js';

/**
 * The part of the daemon that makes polls happen: the scheduler (clock-aligned ticks → poll jobs
 * on each lane's queue) and one BullMQ worker per lane running `worker.concurrency` jobs through
 * the runner. The daemon runs it on its own event loop or on the poll thread (poll-thread.ts);
 * either way it is built and stopped here, the same way.
 */

export interface PollWorkOptions {
  config: Config;
  runner: PollRunner;
  queues: PollQueues;
  /** The workers' blocking connection; shared, closed by the caller. */
  connection: RedisClient;
  logger: Logger;
  now: () => number;
  /** A poll job threw (`fleetwatch_poll_jobs_total{result="error"}`). */
  onJobFailed: (poller: unknown) => void;
  /** Aborted when polls under way outlast the grace: their upstream reads stop. */
  abort: AbortController;
}

export interface PollWork {
  readonly scheduler: PollScheduler;
  /** Starts the lanes' workers, then the ticks. */
  start(): void;
  /**
   * Stops ticking, then the workers: polls under way get `graceMs`, then their reads are aborted.
   * Says whether every poll finished in time.
   */
  stop(graceMs: number): Promise<'graceful' | 'forced'>;
}

export function buildPollWork(options: PollWorkOptions): PollWork {
  const { config, runner, logger } = options;
  const takeover = config.worker.takeover_after;
  // One worker per lane: an upstream that hangs holds only its own lane's jobs (see POLL_LANES).
  const workers: PollWorker[] = POLL_LANES.map((lane) =>
    createPollWorker({
      connection: options.connection,
      prefix: config.redis.prefix,
      lane,
      runner,
      concurrency: config.worker.concurrency,
      lockDuration: takeover,
      stalledInterval: takeover,
      logger,
      autorun: false,
    }),
  );
  for (const worker of workers) worker.on('failed', (job) => options.onJobFailed(job?.data?.poller));
  const scheduler = new PollScheduler({
    queues: options.queues,
    plan: (poller, tick) => runner.plan(poller, tick),
    pollers: scheduledPollers(config.pollers),
    // What the poll worker does with a job, minus the queue: a throw is logged, never raised.
    runLocal: (data) =>
      runner.runJob(data, { skipStaleTicks: true }).catch((error: unknown) => {
        options.onJobFailed(data.poller);
        logger.warn({ poller: data.poller, err: (error as Error).message }, 'poll job failed');
      }),
    onEnqueued: (poller, tick, pace) => runner.tickEnqueued(poller, tick, pace),
    logger,
    now: options.now,
  });
  return {
    scheduler,
    start() {
      for (const worker of workers) {
        worker.run().catch((error: unknown) => worker.emit('error', error as Error));
      }
      scheduler.start();
    },
    async stop(graceMs) {
      const started = Date.now();
      // A beat under way may wait on a Redis that stopped answering (paused, refusing credentials).
      await settlesWithin(scheduler.stop(), 2_000);
      const closed = await Promise.all(
        workers.map((worker) =>
          closeWorker(worker, {
            name: worker.name,
            graceMs: Math.max(0, graceMs - (Date.now() - started)),
            onForce: () => options.abort.abort(new Error('fleetwatch is shutting down')),
            logger,
          }),
        ),
      );
      return closed.includes('forced') ? 'forced' : 'graceful';
    },
  };
}
