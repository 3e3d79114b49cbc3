import { MAX_LIST_EXAMPLES } from '../events/catalogue.js';
import { naming } from '../events/detectors/define.js';
import { listElementsDetector } from '../events/detectors/list-elements.js';
import {
  MAX_KEPT_REJECTED,
  type MembershipState,
  type MembershipValue,
  type RejectedEntry,
} from '../events/detectors/membership.js';
import type { Detector, EntityKind, Observation } from '../events/types.js';
import type { SnapshotRef } from '../store/snapshot-store.js';
import type { ListReading, RejectedElement } from '../upstream/list-elements.js';
import { forgetRemoved } from './forget-removed.js';
import { type ListUpstream, listRef } from './list-ref.js';
import { membershipRefs, mergeMemberships } from './membership-view.js';
import { mapObservation, toObservationError } from './observe.js';
import type { PollContext } from './poller.js';

/**
 * What the list pollers (`vehicles`, `robots`) share. A list is read element by element
 * (upstream/list-elements.ts): a malformed element is an observation error of its own, never the
 * list's. So the list still counts as observed for membership: an element that names its entity
 * keeps that entity listed (neither removed nor discovered again), one that names none cannot be
 * kept. The membership snapshot keeps the rejected elements for the fleet read model; they are
 * counted by code (`fleetwatch_observation_errors_total`; an element whose entity has a facet of
 * this list is counted there by the caller, the others here) and logged once per change, not on
 * every poll. Whether the list had any is an observation of its own (`listRef`, judged by the
 * `list-elements` detector: `monitor.list.unreadable` / `readable`), so what fleetwatch cannot
 * see is said like every other incident, not only logged.
 */

export interface ListSpec<T, Options> {
  poller: string;
  kind: EntityKind;
  /** The upstream that serves the list (`fleet`, `robots`): the subject of its `list` incident. */
  upstream: ListUpstream;
  detector: Detector<MembershipState, MembershipValue, Options>;
  options: Options;
  idOf(item: T): string;
  /**
   * Whether the caller commits each rejected element that names its entity on a facet of that
   * entity (the vehicle list's `link`), which counts it; the others are counted here.
   */
  facetKeepsNamed: boolean;
}

/** A rejected element as the membership state keeps it. */
function entryOf(element: RejectedElement): RejectedEntry {
  const error = toObservationError(element.error);
  return { index: element.index, id: element.id ?? null, code: error.code, message: error.message };
}

/** What tells two sets of rejected elements apart (positions shift when the list changes: left out). */
function signature(entries: readonly RejectedEntry[], count: number): string {
  const each = entries.map((entry) => `${entry.id ?? `#${entry.index}`} ${entry.message}`).sort();
  return JSON.stringify([count, each]);
}

function storedRejected(state: unknown): { entries: RejectedEntry[]; count: number } {
  // Stored parts of a list kept over several shards are merged first (membership-view.ts).
  const { rejected, rejectedCount } = (state ?? {}) as Partial<MembershipState>;
  const entries = Array.isArray(rejected) ? rejected : [];
  return { entries, count: typeof rejectedCount === 'number' ? rejectedCount : entries.length };
}

/**
 * Commits the list as its kind's membership observation (deleting the snapshots of the entities
 * it removes), counts the rejected elements no facet keeps and logs a change in them. With N
 * shards the list is observed as N parts, each the ids (and rejected elements) of one shard's
 * entities, committed to that shard's part of the membership snapshot (membership-view.ts); a
 * rejected element that names no entity goes to shard 0's part, and a failed list fails every part.
 */
export async function commitList<T, Options>(
  ctx: PollContext,
  list: Observation<ListReading<T>>,
  spec: ListSpec<T, Options>,
): Promise<void> {
  const { keys } = ctx.store;
  const refs = membershipRefs(spec.kind, keys.shards);
  const records = await ctx.store.read(refs);
  const rejected = list.ok ? list.value.rejected.map(entryOf) : [];
  const shardOf = (id: string | null) =>
    refs.length === 1 || id === null ? 0 : keys.shardOf(`${spec.kind}/${id}`);
  const unnamed = rejected.filter((entry) => entry.id === null).length;
  const parts = refs.map(() => ({ listed: [] as string[], rejected: [] as RejectedEntry[], unnamed }));
  if (list.ok) {
    for (const item of list.value.items) {
      const id = spec.idOf(item);
      parts[shardOf(id)]?.listed.push(id);
    }
    for (const entry of rejected) {
      const part = parts[shardOf(entry.id)];
      if (entry.id !== null) part?.listed.push(entry.id);
      part?.rejected.push(entry);
    }
  }
  const membership = await ctx.commit(
    { poller: spec.poller, detector: spec.detector, options: spec.options },
    refs.map((ref, shard) => ({
      ref,
      record: records[shard],
      observation: mapObservation(list, (): MembershipValue => parts[shard] ?? { listed: [], rejected: [] }),
    })),
  );
  await forgetRemoved(ctx, spec.kind, membership.events);
  if (!list.ok) return;
  await ctx.commit(
    {
      poller: spec.poller,
      detector: naming(listElementsDetector, 'upstream', spec.upstream),
      options: ctx.detectors.listElements,
    },
    [
      {
        ref: listRef(spec.upstream),
        observation: mapObservation(list, (reading) => ({
          elements: reading.items.length + rejected.length,
          rejected: rejected.length,
          unnamed,
          examples: rejected
            .slice(0, MAX_LIST_EXAMPLES)
            .map((entry) => ({ id: entry.id, message: entry.message })),
        })),
      },
    ],
  );
  const ref = refs[0] as SnapshotRef;
  const record = mergeMemberships(records);

  for (const entry of rejected) {
    if (spec.facetKeepsNamed && entry.id !== null) continue;
    ctx.countError(ref, { code: entry.code, message: entry.message });
  }
  const before = storedRejected(record?.state);
  const now = signature(rejected.slice(0, MAX_KEPT_REJECTED), rejected.length);
  if (signature(before.entries, before.count) === now) return;
  if (rejected.length === 0) {
    ctx.logger.info(
      { poller: spec.poller, kind: spec.kind },
      `every element of the ${spec.kind} list matches the spec again`,
    );
    return;
  }
  ctx.logger.warn(
    {
      poller: spec.poller,
      kind: spec.kind,
      rejected: rejected.length,
      unnamed: rejected.filter((entry) => entry.id === null).length,
      examples: rejected.slice(0, 3),
    },
    `${rejected.length} element(s) of the ${spec.kind} list do not match the spec: each is an observation error of its own (a ${spec.kind} it names stays listed), the rest of the list is observed as usual`,
  );
}
