import type { Queue } from 'bullmq';
import { notifyQueueName } from '../../queues/names.js';
import { createQueue, type QueueOptions } from '../../queues/queue.js';
import type { Notification } from '../notifier.js';

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

export function createDeliveryQueue(options: QueueOptions & { receiver: string }): DeliveryQueue {
  return createQueue<DeliveryJobData>(
    {
      name: notifyQueueName(options.receiver),
      // Failed jobs are the dead letters: kept until replayed or purged.
      defaultJobOptions: { removeOnFail: false, removeOnComplete: { age: 86_400, count: 10_000 } },
      label: 'delivery queue',
    },
    options,
  );
}

/** Hands a notification to its receiver's queue; safe to repeat. */
export async function enqueueDelivery(queue: DeliveryQueue, notification: Notification): Promise<void> {
  await queue.add(notification.receiver, { notification }, { jobId: deliveryJobId(notification) });
}
