import { type Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { FleetEvent } from '../events/types.js';
import { QUEUE_NAMES } from '../queues/names.js';
import { bullPrefix, DEFAULT_PREFIX } from '../store/keys.js';

export type EventsWorker = Worker<FleetEvent, void, string>;

export interface EventsWorkerOptions {
  /** A worker connection (`maxRetriesPerRequest: null`); shared, not closed by the worker. */
  connection: Redis;
  prefix?: string;
  concurrency?: number;
  logger?: Logger;
  /**
   * The notification step's dispatcher (routing, grouping, silences). Idempotent per event, so a
   * redelivered job is safe; when it throws, the job fails and BullMQ retries it with back-off.
   */
  dispatch?: (event: FleetEvent) => Promise<unknown>;
  /** Called per event once dispatched (tests). */
  onEvent?: (event: FleetEvent) => void | Promise<void>;
  /** BullMQ job lock and stalled-job check (default 30 s each): how soon a dead replica's job moves. */
  lockDuration?: number;
  stalledInterval?: number;
}

/**
 * The consumer of the `events` queue: hands each event to the notification dispatcher (which
 * groups it; the flusher sends), then marks the job done. Errors are logged and the worker keeps
 * going, through Redis outages too.
 */
export function createEventsWorker(options: EventsWorkerOptions): EventsWorker {
  const logger = options.logger?.child({ component: 'events-worker' });
  const worker: EventsWorker = new Worker<FleetEvent, void, string>(
    QUEUE_NAMES.events,
    async (job: Job<FleetEvent, void, string>) => {
      const event = job.data;
      logger?.debug({ id: event.id, type: event.type, subject: event.subject }, 'event');
      await options.dispatch?.(event);
      await options.onEvent?.(event);
    },
    {
      connection: options.connection,
      prefix: bullPrefix(options.prefix ?? DEFAULT_PREFIX),
      concurrency: options.concurrency ?? 16,
      // Dispatching an event is idempotent, so a job whose replica died under it is simply run
      // again; BullMQ's default (fail it after its second stall) would drop its notification.
      maxStalledCount: 1_000,
      ...(options.lockDuration === undefined ? {} : { lockDuration: options.lockDuration }),
      ...(options.stalledInterval === undefined ? {} : { stalledInterval: options.stalledInterval }),
    },
  );
  let failing = false;
  worker.on('error', (error: Error) => {
    if (failing) return;
    failing = true;
    logger?.warn({ err: error.message }, 'events worker error; it keeps retrying');
  });
  worker.on('completed', () => {
    failing = false;
  });
  worker.on('failed', (job, error) => {
    logger?.warn({ job: job?.id, err: error.message }, 'event job failed');
  });
  return worker;
}
