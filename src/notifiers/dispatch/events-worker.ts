import { DelayedError, type Job, Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { FleetEvent } from '../../events/types.js';
import type { RedisClient } from '../../lib/redis-connection.js';
import { QUEUE_NAMES } from '../../queues/names.js';
import { logWorkerEvents } from '../../queues/worker-log.js';
import { bullPrefix, DEFAULT_PREFIX } from '../../store/keys.js';
import type { EntityOrder, OrderVerdict } from './entity-order.js';

export type EventsWorker = Worker<FleetEvent, void, string>;

/** The verdict without an order to keep: every event goes at once. */
const GO: OrderVerdict = { go: true, skipped: 0 };

export interface EventsWorkerOptions {
  /** A worker connection (`maxRetriesPerRequest: null`); shared, not closed by the worker. */
  connection: RedisClient;
  prefix?: string;
  concurrency?: number;
  logger?: Logger;
  /**
   * The notification step's dispatcher (routing, grouping, silences). Idempotent per event, so a
   * redelivered job is safe; when it throws, the job fails and BullMQ retries it with back-off.
   * With `order`, it is called at once with the order check as `gate`: it may read meanwhile, and
   * writes nothing unless the gate lets the event go. A wrapper must pass `gate` on: one that
   * drops it type-checks, and dispatches every event ahead of the earlier ones it should wait for.
   */
  dispatch?: (event: FleetEvent, gate?: Promise<boolean>) => Promise<unknown>;
  /** Called per event once dispatched (tests). */
  onEvent?: (event: FleetEvent) => void | Promise<void>;
  /** Dispatches each subject's events in commit order (Guarantee 6); none: in arrival order. */
  order?: EntityOrder;
  /** An event waited for an earlier one of its subject; one gave up on `skipped` of them. */
  onOrder?: { waited(event: FleetEvent): void; gaveUp(event: FleetEvent, skipped: number): void };
  /** BullMQ job lock and stalled-job check (default 30 s each): how soon a dead replica's job moves. */
  lockDuration?: number;
  stalledInterval?: number;
  /** Start taking jobs at once (the default); `false`: only once `worker.run()` is called. */
  autorun?: boolean;
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
    async (job: Job<FleetEvent, void, string>, token?: string) => {
      const event = job.data;
      const { order } = options;
      // The order check and the dispatcher's reads in one round trip (see `dispatch`).
      const placing = order?.place(event, job.timestamp);
      const gate = placing?.then((placed) => placed.go);
      // The dispatcher may fail (a read, during a Redis restart) before it awaits the gate; the
      // gate's own failure is then nobody's, and an unhandled rejection ends the process. It is
      // seen through `placing` below.
      gate?.catch(() => undefined);
      const [placed, dispatched] = await Promise.allSettled([placing ?? GO, options.dispatch?.(event, gate)]);
      if (placed.status === 'rejected') throw placed.reason;
      const verdict = placed.value;
      if (!verdict.go) {
        // Not a failed attempt (the dispatcher wrote nothing, whatever its reads did): the job
        // comes back after the delay and asks again (counted once).
        if (job.attemptsStarted <= 1) options.onOrder?.waited(event);
        await job.moveToDelayed(Date.now() + (order?.retryDelay(job.timestamp) ?? 0), token);
        throw new DelayedError();
      }
      if (verdict.skipped > 0) {
        // Said even when the dispatch failed: the ids are dropped already, and the retry goes at
        // once without saying it.
        logger?.warn(
          { id: event.id, subject: event.subject, skipped: verdict.skipped, waitedMs: order?.maxWaitMs },
          'earlier events of this subject did not arrive in time; dispatching without them',
        );
        options.onOrder?.gaveUp(event, verdict.skipped);
      }
      if (dispatched.status === 'rejected') throw dispatched.reason;
      logger?.debug({ id: event.id, type: event.type, subject: event.subject }, 'event');
      await order?.done(event);
      await options.onEvent?.(event);
    },
    {
      connection: options.connection,
      prefix: bullPrefix(options.prefix ?? DEFAULT_PREFIX),
      concurrency: options.concurrency ?? 16,
      autorun: options.autorun ?? true,
      // Dispatching an event is idempotent, so a job whose replica died under it is simply run
      // again; BullMQ's default (fail it after its second stall) would drop its notification.
      maxStalledCount: 1_000,
      ...(options.lockDuration === undefined ? {} : { lockDuration: options.lockDuration }),
      ...(options.stalledInterval === undefined ? {} : { stalledInterval: options.stalledInterval }),
    },
  );
  logWorkerEvents(worker, logger, { worker: 'events worker', job: 'event job' });
  return worker;
}
