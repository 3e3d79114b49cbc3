import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { throttledWarn } from '../../queues/connection.js';
import { notifyQueueName } from '../../queues/names.js';
import { bullPrefix, DEFAULT_PREFIX } from '../../store/keys.js';
import type { Notification } from '../types.js';

/**
 * One delivery queue per receiver (`notify-<receiver name>`), so that holding a receiver (Slack's
 * 429, a webhook that is down) holds only that receiver, and its notifications leave in order.
 * Job id = notification id: handing the same notification over twice makes one job.
 */
export interface DeliveryJobData {
  notification: Notification;
  /** Written by the delivery worker; absent until the first attempt fails. */
  delivery?: DeliveryProgress;
}

/**
 * What the delivery worker has tried so far. Kept in the job's data because a held job (429, or
 * the wait before the next attempt) goes back to the head of the queue through BullMQ's rate
 * limiter, which does not count attempts. Replaying a dead letter resets it.
 */
export interface DeliveryProgress {
  /** Attempts made that counted (`throttled` answers do not count). */
  attempts: number;
  /** Times the receiver asked us to slow down (429 with `Retry-After`). */
  throttled?: number;
  /** The last failure, free of secrets. */
  lastReason?: string;
  lastStatus?: number;
}

export type DeliveryQueue = Queue<DeliveryJobData, unknown, string>;

/** BullMQ job ids may not contain `:`; notification ids never do, but a stray one must not break a hand-off. */
export function deliveryJobId(notification: Pick<Notification, 'id'>): string {
  return notification.id.replaceAll(':', '_');
}

export function createDeliveryQueue(options: {
  receiver: string;
  connection: Redis;
  prefix?: string;
  logger?: Logger;
}): DeliveryQueue {
  const name = notifyQueueName(options.receiver);
  const queue: DeliveryQueue = new Queue<DeliveryJobData, unknown, string>(name, {
    connection: options.connection,
    prefix: bullPrefix(options.prefix ?? DEFAULT_PREFIX),
    defaultJobOptions: {
      // Failed jobs are the dead letters: kept until replayed or purged.
      removeOnFail: false,
      removeOnComplete: { age: 86_400, count: 10_000 },
    },
  });
  const warn = throttledWarn(options.logger);
  queue.on('error', (error: Error) => warn({ err: error.message, queue: name }, 'delivery queue error'));
  return queue;
}

/** Hands a notification to its receiver's queue; safe to repeat. */
export async function enqueueDelivery(queue: DeliveryQueue, notification: Notification): Promise<void> {
  await queue.add(notification.receiver, { notification }, { jobId: deliveryJobId(notification) });
}
