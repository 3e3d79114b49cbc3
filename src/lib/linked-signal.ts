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
 * server's, that grew the heap by a few MB an hour (BENCHMARKS.md, *Soak*). Here each source gets
 * one listener, which `release` takes off again.
 *
 * A source may have more listeners than EventTarget's warning threshold at once (one per
 * operation under way): its owner raises the limit (`setMaxListeners(0, signal)`).
 */
export function linkedSignal(sources: ReadonlyArray<AbortSignal | undefined>): LinkedSignal {
  const controller = new AbortController();
  const followed: Array<[AbortSignal, () => void]> = [];
  const release = (): void => {
    for (const [source, listener] of followed) source.removeEventListener('abort', listener);
    followed.length = 0;
  };
  for (const source of sources) {
    if (source === undefined) continue;
    if (source.aborted) {
      controller.abort(source.reason);
      release();
      break;
    }
    const listener = (): void => {
      controller.abort(source.reason);
      release();
    };
    source.addEventListener('abort', listener, { once: true });
    followed.push([source, listener]);
  }
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    release,
  };
}
