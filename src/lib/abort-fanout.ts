/** Per signal, the callbacks `onAbort` registered: one EventTarget listener per signal, not one each. */
const fanouts = new WeakMap<AbortSignal, Set<(reason: unknown) => void>>();

/**
 * Calls `callback` with the signal's reason when `signal` aborts (at once if it already has);
 * returns the unlink, which must be called once the callback is no longer wanted.
 *
 * Why not `addEventListener` per caller: a long-lived signal (the daemon's shutdown) guards
 * thousands of requests and queued waits a minute, and Node's EventTarget walks all of a signal's
 * listeners on every add and remove, so a listener each costs in proportion to the waits under
 * way (2 % of one CPU profile of the poll path at 40k, where a job queues hundreds of requests).
 * Here the signal has one listener and the callbacks sit in a set.
 */
export function onAbort(signal: AbortSignal, callback: (reason: unknown) => void): () => void {
  if (signal.aborted) {
    callback(signal.reason);
    return () => {};
  }
  let callbacks = fanouts.get(signal);
  if (!callbacks) {
    const set = new Set<(reason: unknown) => void>();
    callbacks = set;
    fanouts.set(signal, set);
    signal.addEventListener(
      'abort',
      () => {
        const reason: unknown = signal.reason;
        const each = [...set];
        set.clear();
        for (const call of each) call(reason);
      },
      { once: true },
    );
  }
  callbacks.add(callback);
  const set = callbacks;
  return () => {
    set.delete(callback);
  };
}

/** How many `onAbort` callbacks wait on `signal` (what a released follower must no longer add to). */
export function abortFollowers(signal: AbortSignal): number {
  return fanouts.get(signal)?.size ?? 0;
}
