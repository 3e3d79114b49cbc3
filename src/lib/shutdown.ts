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

/**
 * Closes a BullMQ worker: stops taking jobs and lets active ones finish within `graceMs`; after
 * that calls `onForce` (so the jobs' work aborts), gives them a moment and force-closes. Never
 * hangs for long, even when Redis is away.
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
  if (await settlesWithin(closing, 2_000)) return 'forced';
  await settlesWithin(worker.close(true), 2_000);
  return 'forced';
}
