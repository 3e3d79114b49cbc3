import type { z } from 'zod';
import type { Detector, EntityKind, Observation } from '../events/types.js';
import type { SnapshotRecord, SnapshotRef } from '../store/snapshot-store.js';
import { mapLimit } from './observe.js';
import { definePoller, type PollContext, type Poller } from './poller.js';
import type { PollerSettingsSchema } from './settings.js';

export interface EntityTarget {
  ref: SnapshotRef;
  record: SnapshotRecord;
}

/** The detector's options from the context; left out for a detector that takes none. */
type OptionsOf<Options> = undefined extends Options
  ? { options?(ctx: PollContext): Options }
  : { options(ctx: PollContext): Options };

export type EntityPollerDefinition<
  Name extends string,
  Kind extends EntityKind,
  Facet extends string,
  Settings extends PollerSettingsSchema,
  State,
  Value,
  Options,
> = EntityPoll<Name, Kind, Facet, Settings, Value> &
  OptionsOf<Options> & {
    detector: Detector<State, Value, Options>;
  };

interface EntityPoll<
  Name extends string,
  Kind extends EntityKind,
  Facet extends string,
  Settings extends PollerSettingsSchema,
  Value,
> {
  name: Name;
  settings: Settings;
  kind: Kind;
  /** The snapshot facet: `{kind}:{id}:{facet}`. */
  facet: Facet;
  /** One upstream read for one entity; a rejection is an observation error. */
  read(ctx: PollContext, id: string, signal: AbortSignal): Promise<Value>;
  /**
   * Which of the shard's entities to poll now, given their stored records (read in one round trip
   * and reused by the pipeline) and this poller's settings. Default: all of them.
   */
  select?(ctx: PollContext, targets: EntityTarget[], settings: z.output<Settings>): EntityTarget[];
  /** Error codes of `read` that answer about the facet, not failures (see `PipelineSpec.answers`). */
  answers?: readonly string[];
}

/**
 * A per-entity poller: for each id of the shard, one read (at most `fetchConcurrency` at once),
 * each observation into the observation pipeline as it arrives (group commit: see `stream`).
 */
export function defineEntityPoller<
  const Name extends string,
  const Kind extends EntityKind,
  const Facet extends string,
  Settings extends PollerSettingsSchema,
  State,
  Value,
  Options,
>(
  definition: EntityPollerDefinition<Name, Kind, Facet, Settings, State, Value, Options>,
): Poller<Name, Settings, { kind: Kind; facet: Facet }> {
  const { name, kind, facet } = definition;
  /** The shard's entities to poll now, with their stored records (one round trip), and the membership. */
  const due = async (ctx: PollContext, ids: readonly string[]) => {
    // Loops, not per-item callbacks (ARCHITECTURE.md, *Hot paths*).
    const refs = new Array<SnapshotRef>(ids.length);
    for (let i = 0; i < ids.length; i += 1) refs[i] = { kind, id: ids[i] as string, facet };
    const [membership, records] = await Promise.all([ctx.membership(kind), ctx.store.read(refs)]);
    const all = new Array<EntityTarget>(refs.length);
    for (let i = 0; i < refs.length; i += 1) {
      all[i] = { ref: refs[i] as SnapshotRef, record: records[i] as SnapshotRecord };
    }
    // The runner hands each poller its own section, parsed by this very schema.
    const settings = ctx.settings as z.output<Settings>;
    const selected = definition.select ? definition.select(ctx, all, settings) : all;
    ctx.notDue(all.length - selected.length);
    const targets: Array<EntityTarget | undefined> = selected;
    return { membership, targets };
  };
  return definePoller({
    name,
    settings: definition.settings,
    targets: kind,
    writes: { kind, facet },
    async poll(ctx, ids) {
      if (!ids || ids.length === 0) return;
      const { membership, targets } = await due(ctx, ids);
      const stream = ctx.commitStream({
        poller: name,
        detector: definition.detector,
        // Left out only where the detector accepts undefined (see OptionsOf).
        options: definition.options?.(ctx) as Options,
        ...(definition.answers ? { answers: definition.answers } : {}),
      });
      try {
        await mapLimit(targets, ctx.fetchConcurrency, async (target, position) => {
          // Each target is let go once taken: a job holds the records (with their states) it has
          // yet to poll, not all of them until its last read is back.
          targets[position] = undefined;
          if (!target) return;
          // The upstream turned degraded meanwhile: the rest of this job waits for its recovery.
          const held = ctx.heldBack(position);
          if (held === true || (held !== false && (await held))) return;
          const observation = await ctx.observe((signal) => definition.read(ctx, target.ref.id, signal));
          const stillListedAt = membership.has(target.ref.id) ? membership.listedAt : Number.NaN;
          stream.add({
            ref: target.ref,
            record: target.record,
            observation,
            recordOnly: unconfirmedNotFound(observation, target.record, stillListedAt),
          });
        });
      } finally {
        // Commits already under way finish even when a read was aborted (shutdown).
        await stream.done();
      }
    },
  });
}

/**
 * A 404 from a per-entity read means "no such entity here" as often as anything about the facet:
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
