import { getPriority, setPriority } from 'node:os';

/** How far below its process the poll thread runs (nice values: 0 normal, 19 lowest). */
export const POLL_THREAD_NICENESS = 10;

const LOWEST = 19;

export type PriorityOutcome = { lowered: true; nice: number } | { lowered: false; reason: string };

/**
 * Lowers the calling thread's scheduling priority by `by` nice steps (at most to 19, the lowest).
 *
 * Why: the poll thread's work has a whole interval to finish, while a notification under way on
 * the main thread waits for every round trip it makes. When the cores are busy (a cycle's start,
 * a neighbour on the host) the kernel then gives the main thread the core first, and the polls
 * take what is left, which is all of it when nothing else wants it.
 *
 * Linux keeps the nice value per thread (setpriority(2), "BUGS"), so this touches the calling
 * thread alone. Elsewhere the value belongs to the whole process, so it does nothing there.
 */
export function lowerThisThreadPriority(
  by: number,
  platform: NodeJS.Platform = process.platform,
): PriorityOutcome {
  if (platform !== 'linux')
    return { lowered: false, reason: `thread priorities are per process on ${platform}` };
  try {
    const nice = Math.min(LOWEST, getPriority() + by);
    setPriority(nice);
    return { lowered: true, nice };
  } catch (error) {
    return { lowered: false, reason: (error as Error).message };
  }
}
