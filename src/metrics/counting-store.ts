import type { FleetEvent } from '../events/types.js';
import { type CommitResult, SnapshotStore, type SnapshotStoreOptions } from '../store/snapshot-store.js';

/**
 * The snapshot store, telling `onCommitted` about the events of every commit that went through.
 * A commit is an atomic compare-and-set that exactly one writer wins, so counting here counts each
 * event exactly once across all replicas (`fleetwatch_events_total`), whichever poll or replica
 * produced it — unlike counting where events are consumed, which is at least once.
 */
export class CountingSnapshotStore extends SnapshotStore {
  readonly #onCommitted: (events: readonly FleetEvent[]) => void;

  constructor(options: SnapshotStoreOptions & { onCommitted: (events: readonly FleetEvent[]) => void }) {
    super(options);
    this.#onCommitted = options.onCommitted;
  }

  protected override committed(results: ReadonlyArray<CommitResult | Error>): void {
    const events: FleetEvent[] = [];
    for (const result of results) {
      if (!(result instanceof Error) && result.committed) events.push(...result.events);
    }
    if (events.length === 0) return;
    try {
      this.#onCommitted(events);
    } catch {
      // Metrics never break a commit.
    }
  }
}
