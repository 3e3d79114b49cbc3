import type { Detector, EntityKind, Observation } from '../events/types.js';
import type { SnapshotRecord, SnapshotRef } from '../store/snapshot-store.js';
import { mapLimit } from './observe.js';
import type { PollContext, Poller } from './poller.js';
import type { PollerName } from './types.js';

export interface EntityTarget {
  ref: SnapshotRef;
  record: SnapshotRecord;
}

export interface EntityPollerDefinition<State, Value, Options> {
  name: PollerName;
  kind: EntityKind;
  /** The snapshot signal: `{kind}:{id}:{signal}`. */
  signal: string;
  detector: Detector<State, Value, Options>;
  options(ctx: PollContext): Options;
  /** One upstream read for one entity; a rejection is an observation error. */
  read(ctx: PollContext, id: string, signal: AbortSignal): Promise<Value>;
  /**
   * Which of the shard's entities to poll now, given their stored records (read in one round trip
   * and reused by the pipeline). Default: all of them.
   */
  select?(ctx: PollContext, targets: EntityTarget[]): EntityTarget[];
}

/**
 * A per-entity poller: for each id of the shard, one read (at most `fetchConcurrency` at once),
 * each observation into the signal pipeline as it arrives (group commit: see `stream`).
 */
export function defineEntityPoller<State, Value, Options>(
  definition: EntityPollerDefinition<State, Value, Options>,
): Poller {
  return {
    name: definition.name,
    targets: definition.kind,
    async poll(ctx, ids) {
      if (!ids || ids.length === 0) return;
      const refs: SnapshotRef[] = ids.map((id) => ({ kind: definition.kind, id, signal: definition.signal }));
      const [membership, records] = await Promise.all([
        ctx.membership(definition.kind),
        ctx.store.read(refs),
      ]);
      const all: EntityTarget[] = refs.map((ref, i) => ({ ref, record: records[i]! }));
      const targets = definition.select ? definition.select(ctx, all) : all;
      ctx.notDue(all.length - targets.length);
      const stream = ctx.commitStream({
        poller: definition.name,
        detector: definition.detector,
        options: definition.options(ctx),
      });
      try {
        await mapLimit(targets, ctx.fetchConcurrency, async (target) => {
          const observation = await ctx.observe((signal) => definition.read(ctx, target.ref.id, signal));
          const stillListedAt = membership.has(target.ref.id) ? membership.listedAt : Number.NaN;
          stream.add({
            ...target,
            observation,
            recordOnly: unconfirmedNotFound(observation, target.record, stillListedAt),
          });
        });
      } finally {
        // Commits already under way finish even when a read was aborted (shutdown).
        await stream.done();
      }
    },
  };
}

/**
 * A 404 from a per-entity read means "no such entity here" as often as anything about the signal:
 * a vehicle that just left the list answers 404 until the next list poll notices. So a 404 only
 * counts once a list observed after an earlier 404 still holds the entity; until then it is
 * recorded as the entity's last error and nothing is concluded. `listedAt` is NaN when the latest
 * list no longer holds the entity (a job planned earlier can still reach it).
 */
export function unconfirmedNotFound(
  observation: Observation<unknown>,
  record: SnapshotRecord,
  listedAt: number,
): boolean {
  if (observation.ok || observation.error.code !== 'not_found') return false;
  const previousPoll = Date.parse(record.lastPolledAt ?? '');
  const confirmed = record.lastError?.code === 'not_found' && previousPoll <= listedAt;
  return !confirmed;
}
