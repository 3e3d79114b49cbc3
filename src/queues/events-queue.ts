import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { FleetEvent } from '../events/types.js';
import { bullPrefix, DEFAULT_PREFIX } from '../store/keys.js';
import { throttledWarn } from './connection.js';
import { EVENTS_JOB_OPTIONS, QUEUE_NAMES } from './names.js';

/** Job name = event type, data = the CloudEvent, job id = event id. */
export type EventsQueue = Queue<FleetEvent, unknown, string>;

export interface EventsQueueOptions {
  /** A producer connection (shared: the queue does not close it). */
  connection: Redis;
  prefix?: string;
  logger?: Logger;
}

/** The BullMQ `events` queue under `{<prefix>}`, with the events job defaults and an error listener. */
export function createEventsQueue(options: EventsQueueOptions): EventsQueue {
  const queue: EventsQueue = new Queue<FleetEvent, unknown, string>(QUEUE_NAMES.events, {
    connection: options.connection,
    prefix: bullPrefix(options.prefix ?? DEFAULT_PREFIX),
    defaultJobOptions: EVENTS_JOB_OPTIONS,
  });
  const warn = throttledWarn(options.logger);
  queue.on('error', (error: Error) => {
    warn({ err: error.message, queue: QUEUE_NAMES.events }, 'events queue error');
  });
  return queue;
}
