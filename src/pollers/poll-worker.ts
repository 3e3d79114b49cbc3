import { type Job, UnrecoverableError, Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { RedisClient } from '../lib/redis-connection.js';
import { pollQueueName } from '../queues/names.js';
import { logWorkerEvents } from '../queues/worker-log.js';
import { bullPrefix, DEFAULT_PREFIX } from '../store/keys.js';
import type { PollOutcome } from './outcome.js';
import type { PollJobData } from './poll-queue.js';
import type { PollLane } from './poller.js';
import { isPollerName } from './registry.js';
import type { PollRunner } from './runner.js';

export type PollWorker = Worker<PollJobData, PollOutcome, string>;

export interface PollWorkerOptions {
  /** A worker connection (`maxRetriesPerRequest: null`); shared, not closed by the worker. */
  connection: RedisClient;
  prefix?: string;
  /** Whose poll queue it works (`poll-<lane>`). */
  lane: PollLane;
  runner: PollRunner;
  /** Poll jobs of its lane run at once (`worker.concurrency`). */
  concurrency: number;
  logger?: Logger;
  /** Extra BullMQ worker settings (tests shorten lock and stalled intervals). */
  lockDuration?: number;
  stalledInterval?: number;
  /** Do not start consuming until `worker.run()`; default false. */
  autorun?: boolean;
}

function checkData(data: unknown): PollJobData {
  const job = data as Partial<PollJobData> | null;
  if (
    !job ||
    !isPollerName(job.poller) ||
    !Number.isInteger(job.tick) ||
    !Number.isInteger(job.shard) ||
    !Number.isInteger(job.shards) ||
    (job.ids !== undefined && !(Array.isArray(job.ids) && job.ids.every((id) => typeof id === 'string')))
  ) {
    throw new UnrecoverableError('malformed poll job');
  }
  return job as PollJobData;
}

/**
 * The BullMQ worker of one lane's poll queue (`poll-fleet` or `poll-robots`): `worker.concurrency`
 * jobs at once, each dispatched to the poller its data names (`PollRunner.runJob`). Each lane has
 * its own, so a hanging robot gateway holds only the robot pollers' jobs: the fleet API's polls
 * keep their pace, and its own outage is still counted and judged in time. A job runs however
 * long it waited: it is its shard's only one (later ticks coalesce into it, see `PollScheduler`),
 * so its entities are the ones polled longest ago. A failed job is not retried (the next tick polls again); errors are logged and the worker keeps going, through
 * Redis outages too.
 */
export function createPollWorker(options: PollWorkerOptions): PollWorker {
  const logger = options.logger?.child({ component: 'poll-worker' });
  const worker: PollWorker = new Worker<PollJobData, PollOutcome, string>(
    pollQueueName(options.lane),
    async (job: Job<PollJobData, PollOutcome, string>) =>
      options.runner.runJob(checkData(job.data), { jobId: job.id }),
    {
      connection: options.connection,
      prefix: bullPrefix(options.prefix ?? DEFAULT_PREFIX),
      concurrency: options.concurrency,
      autorun: options.autorun ?? true,
      ...(options.lockDuration === undefined ? {} : { lockDuration: options.lockDuration }),
      ...(options.stalledInterval === undefined ? {} : { stalledInterval: options.stalledInterval }),
    },
  );
  logWorkerEvents(worker, logger, { worker: `poll worker (${options.lane})`, job: 'poll job' });
  return worker;
}
