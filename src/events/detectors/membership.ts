import { z } from 'zod';
import {
  atLeastOne,
  DEFAULT_DETECTOR_OPTIONS,
  type MembershipOptions,
  readOptions,
} from '../detector-options.js';
import type { Detector, EventDraft } from '../types.js';
import { type Clock, defineDetector, isoOf, isRecord, storedTimeSchema } from './define.js';

/**
 * Membership of a list (vehicles the client may access, robots of the caller), shared by
 * `vehicle-membership` and `robot-membership`.
 *
 * Value: the whole list, as ids. Entries may be id strings or objects with a string `id` or
 * `deviceId` (a `VehicleSummary[]` or `RobotSummary[]` can be passed as is); other entries are
 * ignored, and a value that is not an array is ignored entirely. Or `{listed, rejected}`: the ids
 * as above (an element that did not match the spec but names its entity is listed: it is there),
 * and the elements that did not match the spec, which the state keeps (the first
 * `MAX_KEPT_REJECTED`, and how many) for the fleet read model; they raise no event.
 *
 * The first list is the baseline: no `discovered` for what is already there. Afterwards a new id
 * is discovered at once; an id is removed after `removeAfter` consecutive lists without it, so
 * one odd list does not churn (reappearing before that resets its count, silently). A failed list
 * changes nothing, and neither does a list holding an element that names no entity (`unnamed`)
 * for the ids it misses: the element may be any of them. The drafts name the entity in `data.vehicleId` / `data.deviceId`: the caller
 * takes the CloudEvents subject from there (`toFleetEvent` does).
 */

/** An element of the latest list that did not match the spec. */
export interface RejectedEntry {
  /** Its position in the list. */
  index: number;
  /** The entity it names; null when it names none readably. */
  id: string | null;
  /** The observation error: its code and its one-line message. */
  code: string;
  message: string;
}

/** Rejected elements kept in the state: enough to show what is wrong, bounded however bad the list. */
export const MAX_KEPT_REJECTED = 20;

export interface MembershipState {
  v: 1;
  /** Ids currently known (present, or missing fewer than `removeAfter` times), sorted; null before the first list. */
  known: string[] | null;
  /** Known ids missing from the latest lists: how many in a row, since when (epoch ms). */
  missing: { id: string; count: number; since: number }[];
  /** The first `MAX_KEPT_REJECTED` elements of the latest list that did not match the spec. */
  rejected?: RejectedEntry[];
  /** How many elements of the latest list did not match the spec. */
  rejectedCount?: number;
}

const rejectedEntrySchema = z.object({
  index: z.number().int().nonnegative(),
  id: z.string().nullable(),
  code: z.string(),
  message: z.string(),
});

const stateSchema = z.object({
  v: z.literal(1),
  known: z.array(z.string()).nullable(),
  missing: z.array(z.object({ id: z.string(), count: z.number().int().positive(), since: storedTimeSchema })),
  rejected: z.array(rejectedEntrySchema).max(MAX_KEPT_REJECTED).optional(),
  rejectedCount: z.number().int().nonnegative().optional(),
});

type ListEntry = string | { id?: string; deviceId?: string };

export type MembershipValue =
  | ReadonlyArray<ListEntry>
  | {
      listed: ReadonlyArray<ListEntry>;
      rejected: readonly RejectedEntry[];
      /**
       * Elements of the whole list (every shard's part) that name no entity: any known id missing
       * from the list may be one of them, so none is counted missing while there are any.
       */
      unnamed?: number;
    };

export interface MembershipEvents {
  discovered(id: string): EventDraft;
  removed(id: string, detail: { missingSince: string; missedLists: number }): EventDraft;
}

function idsOf(value: unknown): Set<string> | undefined {
  if (!Array.isArray(value)) return undefined;
  const ids = new Set<string>();
  for (const entry of value) {
    const id = typeof entry === 'string' ? entry : isRecord(entry) ? (entry.id ?? entry.deviceId) : undefined;
    if (typeof id === 'string' && id !== '') ids.add(id);
  }
  return ids;
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The rejected elements of a `{listed, rejected}` value, as the state keeps them. */
function rejectedOf(value: unknown): Pick<MembershipState, 'rejected' | 'rejectedCount'> {
  if (!isRecord(value) || !Array.isArray(value.rejected) || value.rejected.length === 0) return {};
  const entries = value.rejected.filter((entry) => rejectedEntrySchema.safeParse(entry).success);
  if (entries.length === 0) return {};
  return {
    rejected: entries.slice(0, MAX_KEPT_REJECTED).map((entry: RejectedEntry) => ({
      index: entry.index,
      id: entry.id,
      code: entry.code,
      message: entry.message,
    })),
    rejectedCount: entries.length,
  };
}

function onList(
  state: MembershipState,
  value: unknown,
  clock: Clock,
  options: MembershipOptions,
  make: MembershipEvents,
) {
  const ids = idsOf(isRecord(value) ? value.listed : value);
  if (ids === undefined) return { state, events: [] };
  const rejected = rejectedOf(value);
  if (state.known === null)
    return {
      state: { v: 1 as const, known: [...ids].sort(byCodeUnit), missing: [], ...rejected },
      events: [],
    };

  // An element that names no entity may be any known one that is missing: a malformed record is
  // no removal (a robot does not 'leave the list' because the gateway garbled its entry), so
  // missing ids wait, their counts as they were, until the list names every element again.
  const unnamed = isRecord(value) && typeof value.unnamed === 'number' ? value.unnamed : 0;
  const removeAfter = atLeastOne(options.removeAfter);
  const known = new Set(state.known);
  const missing = new Map(state.missing.map((entry) => [entry.id, entry]));
  const discovered: EventDraft[] = [];
  const removed: EventDraft[] = [];
  const nextKnown: string[] = [];
  const nextMissing: MembershipState['missing'] = [];

  for (const id of [...new Set([...known, ...ids])].sort(byCodeUnit)) {
    if (ids.has(id)) {
      if (!known.has(id)) discovered.push(make.discovered(id));
      nextKnown.push(id);
      continue;
    }
    const before = missing.get(id);
    if (unnamed > 0) {
      nextKnown.push(id);
      if (before) nextMissing.push(before);
      continue;
    }
    const count = (before?.count ?? 0) + 1;
    const since = before?.since ?? clock.at;
    if (count >= removeAfter) {
      removed.push(make.removed(id, { missingSince: isoOf(since), missedLists: count }));
    } else {
      nextKnown.push(id);
      nextMissing.push({ id, count, since });
    }
  }
  return {
    state: { v: 1 as const, known: nextKnown, missing: nextMissing, ...rejected },
    events: [...discovered, ...removed],
  };
}

export function createMembershipDetector(
  make: MembershipEvents,
): Detector<MembershipState, MembershipValue, Partial<MembershipOptions>> {
  return defineDetector<MembershipState, MembershipValue, MembershipOptions>({
    initial: () => ({ v: 1, known: null, missing: [] }),
    state: stateSchema,
    options: (raw) => readOptions(raw, DEFAULT_DETECTOR_OPTIONS.vehicleMembership),
    onValue: (state, value, clock, options) => onList(state, value, clock, options, make),
  });
}
