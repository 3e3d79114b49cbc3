import type { Worker } from 'bullmq';
import type { Logger } from 'pino';

/** Resolves `true` when `promise` settles within `ms` (its rejection is swallowed), else `false`. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export interface CloseWorkerOptions {
  /** How long active jobs may take to finish. */
  graceMs: number;
  /** Called when the grace is over and jobs are still running (abort their work). */
  onForce?: () => void;
  logger?: Logger;
  name: string;
}

/** How long a close waits after `onForce`. */
const FORCE_WAIT_MS = 2_000;

/**
 * Closes a BullMQ worker: stops taking jobs and lets active ones finish within `graceMs`; after
 * that calls `onForce` (so the jobs' work aborts) and gives them a moment. Takes at most `graceMs`
 * + 2 s, even when Redis is away. (`worker.close(true)` is no way out: once a close is under way
 * BullMQ hands back the same pending close.) A job left unfinished keeps its lock until
 * `lockDuration` runs out and another replica, or the next start, takes it again.
 */
export async function closeWorker(
  worker: Worker,
  options: CloseWorkerOptions,
): Promise<'graceful' | 'forced'> {
  const closing = worker.close();
  if (await settlesWithin(closing, options.graceMs)) return 'graceful';
  options.logger?.warn(
    { worker: options.name, graceMs: options.graceMs },
    'jobs still running after the shutdown grace; aborting them',
  );
  options.onForce?.();
  await settlesWithin(closing, FORCE_WAIT_MS);
  return 'forced';
}
