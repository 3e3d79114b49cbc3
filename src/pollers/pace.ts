import type { SnapshotRef } from '../store/snapshot-store.js';

/**
 * The monitor's own polling pace (`monitor.polling.behind` / `caught_up`): every tick a replica's
 * scheduler enqueues is one observation of its poller, how many shards the tick has and how many
 * of them it added no job for because the shard's earlier job was still queued or running
 * (`PollScheduler`, `PollRunner.tickEnqueued`). Judged by the `poll-pace` detector on the `fleet`
 * ref `poller/<name>`, stamped at the tick's start; a tick is applied once, by whichever replica
 * commits it first (the pipeline drops an observation not newer than the stored one).
 */
export function paceRef(poller: string): SnapshotRef {
  return { kind: 'fleet', id: 'poller', facet: poller };
}
