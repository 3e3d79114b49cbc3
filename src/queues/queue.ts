import { type DefaultJobOptions, Queue } from 'bullmq';
import type { Logger } from 'pino';
import { type RedisClient, throttledWarn } from '../lib/redis-connection.js';
import { bullPrefix, DEFAULT_PREFIX } from '../store/keys.js';

/** Where a queue lives; every queue of fleetwatch is made from these. */
export interface QueueOptions {
  /** A producer connection (shared: the queue does not close it). */
  connection: RedisClient;
  prefix?: string;
  logger?: Logger;
}

export interface QueueDefinition {
  /** The BullMQ queue name (see `names.ts`). */
  name: string;
  defaultJobOptions: DefaultJobOptions;
  /** How its error log line names it: `poll queue` logs `poll queue error`. */
  label: string;
}

/**
 * A BullMQ queue under `{<prefix>}` with its job defaults, and an error listener that warns at
 * most every 30 s (an unlistened `error` event would crash the process while Redis is away).
 */
export function createQueue<Data>(
  definition: QueueDefinition,
  options: QueueOptions,
): Queue<Data, unknown, string> {
  const queue = new Queue<Data, unknown, string>(definition.name, {
    connection: options.connection,
    prefix: bullPrefix(options.prefix ?? DEFAULT_PREFIX),
    defaultJobOptions: definition.defaultJobOptions,
  });
  const warn = throttledWarn(options.logger);
  queue.on('error', (error: Error) => {
    warn({ err: error.message, queue: definition.name }, `${definition.label} error`);
  });
  return queue;
}
