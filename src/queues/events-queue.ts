import type { Queue } from 'bullmq';
import type { FleetEvent } from '../events/types.js';
import { EVENTS_JOB_OPTIONS, QUEUE_NAMES } from './names.js';
import { createQueue, type QueueOptions } from './queue.js';

/** Job name = event type, data = the CloudEvent, job id = event id. */
export type EventsQueue = Queue<FleetEvent, unknown, string>;

/** The BullMQ `events` queue under `{<prefix>}`, with the events job defaults and an error listener. */
export function createEventsQueue(options: QueueOptions): EventsQueue {
  return createQueue<FleetEvent>(
    { name: QUEUE_NAMES.events, defaultJobOptions: EVENTS_JOB_OPTIONS, label: 'events queue' },
    options,
  );
}
