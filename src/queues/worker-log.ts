import type { Worker } from 'bullmq';
import type { Logger } from 'pino';

/**
 * Logs what a BullMQ worker reports: its first error of an outage as a warning (the rest at debug
 * until a job completes again: Redis away would otherwise log every retry), and each failed job.
 * `name` says what it is: `poll` logs `poll worker error; …` and `poll job failed`.
 */
export function logWorkerEvents(
  worker: Worker,
  logger: Logger | undefined,
  name: { worker: string; job: string },
): void {
  let failing = false;
  worker.on('error', (error: Error) => {
    if (failing) {
      logger?.debug({ err: error.message }, `${name.worker} still failing`);
      return;
    }
    failing = true;
    logger?.warn({ err: error.message }, `${name.worker} error; it keeps retrying`);
  });
  worker.on('completed', () => {
    failing = false;
  });
  worker.on('failed', (job, error) => {
    logger?.warn({ job: job?.id, err: error.message }, `${name.job} failed`);
  });
}
