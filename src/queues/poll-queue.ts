import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { PollJobData } from '../pollers/types.js';
import { bullPrefix, DEFAULT_PREFIX } from '../store/keys.js';
import { throttledWarn } from './connection.js';
import { POLL_JOB_OPTIONS, QUEUE_NAMES } from './names.js';

/** Job name = poller, data = the shard, job id = `poll-<poller>-<tick>-<shard>of<shards>`. */
export type PollQueue = Queue<PollJobData, unknown, string>;

export interface PollQueueOptions {
  /** A producer connection (shared: the queue does not close it). */
  connection: Redis;
  prefix?: string;
  logger?: Logger;
}

/** The BullMQ `poll` queue under `{<prefix>}`, with the poll job defaults and an error listener. */
export function createPollQueue(options: PollQueueOptions): PollQueue {
  const queue: PollQueue = new Queue<PollJobData, unknown, string>(QUEUE_NAMES.poll, {
    connection: options.connection,
    prefix: bullPrefix(options.prefix ?? DEFAULT_PREFIX),
    defaultJobOptions: POLL_JOB_OPTIONS,
  });
  const warn = throttledWarn(options.logger);
  queue.on('error', (error: Error) => {
    warn({ err: error.message, queue: QUEUE_NAMES.poll }, 'poll queue error');
  });
  return queue;
}
