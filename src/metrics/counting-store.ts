import type { EventDraft, FleetEvent } from '../events/types.js';
import {
  CommitBatchError,
  type CommitItem,
  type CommitResult,
  type IndexOp,
  type SnapshotNext,
  type SnapshotRef,
  SnapshotStore,
  type SnapshotStoreOptions,
} from '../store/snapshot-store.js';

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

  override async commit(
    ref: SnapshotRef,
    expectedVersion: number,
    next: SnapshotNext,
    drafts: readonly EventDraft[],
    options: { index?: IndexOp } = {},
  ): Promise<CommitResult> {
    const result = await super.commit(ref, expectedVersion, next, drafts, options);
    this.#count([result]);
    return result;
  }

  override async commitMany(items: readonly CommitItem[]): Promise<CommitResult[]> {
    try {
      const results = await super.commitMany(items);
      this.#count(results);
      return results;
    } catch (error) {
      // Items Redis accepted stay committed; count them before passing the error on.
      if (error instanceof CommitBatchError) this.#count(error.results);
      throw error;
    }
  }

  #count(results: ReadonlyArray<CommitResult | Error>): void {
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
