import { constants, PerformanceObserver } from 'node:perf_hooks';

/** V8's kinds of collection, named as `nodejs_gc_duration_seconds` (prom-client) names them. */
export const GC_KINDS = ['minor', 'major', 'incremental', 'weakcb'] as const;
export type GcKind = (typeof GC_KINDS)[number];

const KIND_OF: Readonly<Record<number, GcKind>> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/**
 * Calls `pause` for every collection of the calling thread's heap, with its kind and how long it
 * paused the thread, in seconds; returns the stop. prom-client's own gc metric sees only the
 * thread it runs on, and reads one entry of each batch the observer is given: this reads them all.
 */
export function watchGcPauses(pause: (kind: GcKind, seconds: number) => void): () => void {
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      // A gc entry's `detail` holds its kind (Node's types leave `detail` out of PerformanceEntry).
      const { detail } = entry as { detail?: { kind?: number } };
      const kind = KIND_OF[detail?.kind ?? -1];
      if (kind) pause(kind, entry.duration / 1000);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}
