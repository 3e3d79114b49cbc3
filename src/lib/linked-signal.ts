import { onAbort } from './abort-fanout.js';

/** A signal for one operation, aborted by any of its sources or by `abort`; `release` when done. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Aborts this signal alone (a deadline, say); the sources are not touched. */
  abort(reason?: unknown): void;
  /** Stops following the sources: call it once the operation is over, however it ended. */
  release(): void;
}

/**
 * A signal that aborts when any of `sources` does (those given), for one operation.
 *
 * Not `AbortSignal.any`: Node 20 keeps a reference to every signal made by it in each of its
 * sources (a `WeakRef` in a set nothing empties, about 56 bytes each) for as long as the source
 * lives. Made per delivery from a delivery worker's stop signal, or per API request from the
 * server's, that grew the heap by a few MB an hour (BENCHMARKS.md, *Soak*). Here each source is
 * followed through `onAbort` (one listener per source however many operations follow it), and
 * `release` unlinks them.
 */
export function linkedSignal(sources: ReadonlyArray<AbortSignal | undefined>): LinkedSignal {
  const controller = new AbortController();
  const followed: Array<() => void> = [];
  const release = (): void => {
    for (const unlink of followed) unlink();
    followed.length = 0;
  };
  for (const source of sources) {
    if (source === undefined) continue;
    if (source.aborted) {
      controller.abort(source.reason);
      release();
      break;
    }
    followed.push(
      onAbort(source, (reason) => {
        controller.abort(reason);
        release();
      }),
    );
  }
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    release,
  };
}
