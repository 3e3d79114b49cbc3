import type { Detector, EntityKind } from '../events/types.js';
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
 * then every observation through the signal pipeline in one go.
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
      let targets: Array<{ ref: SnapshotRef; record?: SnapshotRecord }> = refs.map((ref) => ({ ref }));
      const { select } = definition;
      if (select) {
        const records = await ctx.store.read(refs);
        const all = refs.map((ref, i) => ({ ref, record: records[i]! }));
        const chosen = select(ctx, all);
        ctx.notDue(all.length - chosen.length);
        targets = chosen;
      }
      const inputs = await mapLimit(targets, ctx.fetchConcurrency, async (target) => ({
        ...target,
        observation: await ctx.observe((signal) => definition.read(ctx, target.ref.id, signal)),
      }));
      await ctx.commit(
        { poller: definition.name, detector: definition.detector, options: definition.options(ctx) },
        inputs,
      );
    },
  };
}
