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
   * Which of the shard's entities to poll now, given their stored records (read `TARGET_SLICE` at
   * a time as the job reaches them, and reused by the pipeline) and this poller's settings; asked
   * once per slice. Default: all of them.
   */
  select?(ctx: PollContext, targets: EntityTarget[], settings: z.output<Settings>): EntityTarget[];
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
  return definePoller({
    name,
    settings: definition.settings,
    targets: kind,
    writes: { kind, facet },
    async poll(ctx, ids) {
      if (!ids || ids.length === 0) return;
      const membershipRead = ctx.membership(kind);
      const slices = new TargetSlices(ids.length, (from, to) => due(ctx, ids, from, to));
      // Read before the first request, as the job's only read did: a store that cannot be read
      // fails the job before it asks the upstream anything.
      const [membership] = await Promise.all([membershipRead, slices.at(0)]);
      const stream = ctx.commitStream({
        poller: name,
        detector: definition.detector,
        // Left out only where the detector accepts undefined (see OptionsOf).
        options: definition.options?.(ctx) as Options,
      });
      // The due targets reached so far: what a degraded upstream's sample counts (`heldBack`).
      let reached = 0;
      try {
        await mapLimit(ids, ctx.fetchConcurrency, async (_id, position) => {
          const target = await slices.take(position);
          if (!target) return;
          // The upstream turned degraded meanwhile: the rest of this job waits for its recovery.
          const held = ctx.heldBack(reached++);
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

  /**
   * The entities `ids[from, to)` with their stored records (one round trip), those not due now
   * (`select`) left out as undefined and counted as not due.
   */
  async function due(
    ctx: PollContext,
    ids: readonly string[],
    from: number,
    to: number,
  ): Promise<Array<EntityTarget | undefined>> {
    // Loops, not per-item callbacks (ARCHITECTURE.md, *Hot paths*).
    const refs = new Array<SnapshotRef>(to - from);
    for (let i = from; i < to; i += 1) refs[i - from] = { kind, id: ids[i] as string, facet };
    const records = await ctx.store.read(refs);
    const all = new Array<EntityTarget>(refs.length);
    for (let i = 0; i < refs.length; i += 1) {
      all[i] = { ref: refs[i] as SnapshotRef, record: records[i] as SnapshotRecord };
    }
    if (!definition.select) return all;
    // The runner hands each poller its own section, parsed by this very schema.
    const chosen = new Set(definition.select(ctx, all, ctx.settings as z.output<Settings>));
    ctx.notDue(all.length - chosen.size);
    const targets = new Array<EntityTarget | undefined>(all.length);
    for (let i = 0; i < all.length; i += 1) if (chosen.has(all[i] as EntityTarget)) targets[i] = all[i];
    return targets;
  }
}

/**
 * How many of a job's entities have their stored records read together. A job's requests are
 * paced over its part of the cycle, so a job lives through several young-generation collections:
 * records read for all of its 200 entities at its start outlived two of them and were promoted
 * (the stored states were 83 % promoted at 40,000 entities, BENCHMARKS.md). Read a slice at a
 * time, the next one when the job is halfway through the one before, a record lives about as long
 * as its entity's request.
 */
export const TARGET_SLICE = 32;

/**
 * A job's targets, read in slices of `TARGET_SLICE` as the job reaches them. Each target is let
 * go once taken: a job holds the records (with their states) it has yet to poll, never those it
 * is done with.
 */
export class TargetSlices {
  readonly #slices: Array<Promise<Array<EntityTarget | undefined>> | undefined>;
  readonly #count: number;
  readonly #read: (from: number, to: number) => Promise<Array<EntityTarget | undefined>>;

  constructor(count: number, read: (from: number, to: number) => Promise<Array<EntityTarget | undefined>>) {
    this.#count = count;
    this.#read = read;
    this.#slices = new Array(Math.ceil(count / TARGET_SLICE));
  }

  /** The slice holding `position`, read now if it has not been asked for yet. */
  at(position: number): Promise<Array<EntityTarget | undefined>> {
    const index = Math.floor(position / TARGET_SLICE);
    let slice = this.#slices[index];
    if (!slice) {
      const from = index * TARGET_SLICE;
      slice = this.#read(from, Math.min(this.#count, from + TARGET_SLICE));
      this.#slices[index] = slice;
    }
    return slice;
  }

  /**
   * The target at `position` (undefined when it is not due), taken out of its slice. Halfway
   * through a slice the next one is asked for, so the requests do not wait for it; a failed read
   * fails the position that needs it.
   */
  async take(position: number): Promise<EntityTarget | undefined> {
    const offset = position % TARGET_SLICE;
    if (offset === TARGET_SLICE / 2 && position + TARGET_SLICE / 2 < this.#count) {
      this.at(position + TARGET_SLICE / 2).catch(ignore);
    }
    const slice = await this.at(position);
    const target = slice[offset];
    slice[offset] = undefined;
    if (offset === TARGET_SLICE - 1) this.#slices[Math.floor(position / TARGET_SLICE)] = undefined;
    return target;
  }
}

function ignore(): void {}

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
