import { MAX_KEPT_REJECTED } from '../events/detectors/membership.js';
import type { EntityKind } from '../events/types.js';
import type { SnapshotRecord, SnapshotRef, SnapshotStore } from '../store/snapshot-store.js';

/** The current membership list of one kind, as per-entity pollers consult it. */
export interface Membership {
  /** Snapshot version the ids were decoded from (0: no list observed yet). */
  version: number;
  /** Poll targets: known and not missing, sorted by code unit. */
  ids: readonly string[];
  has(id: string): boolean;
  /** Last successful list observation (epoch ms), NaN if none. */
  listedAt: number;
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

interface Decoded {
  /** The parts' versions, comma-joined: a new version of any part means decoding again. */
  versions: string;
  version: number;
  ids: readonly string[];
  set: ReadonlySet<string>;
}

function listedAtOf(record: SnapshotRecord | undefined): number {
  return Date.parse(record?.lastSeenAt ?? record?.observedAt ?? '');
}

function versionsOf(records: ReadonlyArray<SnapshotRecord | undefined>): string {
  return records.map((record) => record?.version ?? 0).join(',');
}

/**
 * The membership snapshots, decoded once per version. Every per-entity job consults the list of
 * its kind (targets at planning, the 404 rule while polling); with tens of thousands of ids,
 * moving and parsing the whole list for each shard would cost more than the shard's polls. A
 * header read (version and times, no state) tells whether the decoded copy is still current; only
 * a new version is read in full.
 */
export class MembershipView {
  readonly #store: SnapshotStore;
  readonly #decoded = new Map<EntityKind, Decoded>();

  constructor(store: SnapshotStore) {
    this.#store = store;
  }

  async current(kind: EntityKind): Promise<Membership> {
    const refs = membershipRefs(kind, this.#store.keys.shards);
    const headers = await this.#store.readHeaders(refs);
    let decoded = this.#decoded.get(kind);
    let listedAt = listedAtOf(mergeMemberships(headers));
    if (!decoded || decoded.versions !== versionsOf(headers)) {
      const records = await this.#store.read(refs);
      const record = mergeMemberships(records);
      const ids = targetsOf(record.state);
      decoded = { versions: versionsOf(records), version: record.version, ids, set: new Set(ids) };
      listedAt = listedAtOf(record);
      this.#decoded.set(kind, decoded);
    }
    const { set } = decoded;
    return { version: decoded.version, ids: decoded.ids, has: (id) => set.has(id), listedAt };
  }
}

/**
 * The membership snapshot of a kind in one shard: `{kind: 'fleet', id: <kind>, facet: 'membership'}`.
 * With N shards a kind's list is kept in N parts, each in its shard and holding the ids of that
 * shard's entities, so that the commit of a part, with its `discovered` / `removed` events (and the
 * incidents a removal closes), stays in one slot. With one shard the one part is the whole list.
 */
export function membershipRef(kind: EntityKind, shard = 0): SnapshotRef {
  return { kind: 'fleet', id: kind, facet: 'membership', shard };
}

/** Every part of a kind's membership list, in shard order. */
export function membershipRefs(kind: EntityKind, shards: number): SnapshotRef[] {
  return Array.from({ length: shards }, (_, shard) => membershipRef(kind, shard));
}

/**
 * The parts of a membership list read as one snapshot: the ids, missing entries and rejected
 * elements of every part, version the sum of theirs (it grows whenever one does), and times and
 * error such that the whole counts as listed only as recently as its least recent part. One part
 * is returned as it is.
 */
export function mergeMemberships(records: ReadonlyArray<SnapshotRecord | undefined>): SnapshotRecord {
  if (records.length === 1) return records[0] ?? { version: 0, state: undefined };
  const merged: SnapshotRecord = {
    version: records.reduce((sum, record) => sum + (record?.version ?? 0), 0),
    state: mergeStates(records.map((record) => record?.state)),
  };
  const observedAt = earliest(records.map((record) => record?.observedAt));
  const lastSeenAt = earliest(records.map((record) => record?.lastSeenAt));
  const lastPolledAt = earliest(records.map((record) => record?.lastPolledAt));
  const lastError = records.find((record) => record?.lastError)?.lastError;
  if (observedAt) merged.observedAt = observedAt;
  if (lastSeenAt) merged.lastSeenAt = lastSeenAt;
  if (lastPolledAt) merged.lastPolledAt = lastPolledAt;
  if (lastError) merged.lastError = lastError;
  return merged;
}

/** The earliest of the times, or undefined when one of them is missing (that part never had one). */
function earliest(times: ReadonlyArray<string | undefined>): string | undefined {
  let best: string | undefined;
  for (const time of times) {
    if (time === undefined) return undefined;
    if (best === undefined || Date.parse(time) < Date.parse(best)) best = time;
  }
  return best;
}

function mergeStates(states: readonly unknown[]): unknown {
  const parts = states.filter(
    (state): state is Record<string, unknown> => state !== null && typeof state === 'object',
  );
  if (parts.length === 0) return undefined;
  const arrays = (field: string) => parts.flatMap((part) => (Array.isArray(part[field]) ? part[field] : []));
  const known = parts.some((part) => Array.isArray(part.known)) ? arrays('known').sort(byCodeUnit) : null;
  const rejected = arrays('rejected').sort(
    (a, b) => ((a as { index?: number })?.index ?? 0) - ((b as { index?: number })?.index ?? 0),
  );
  const rejectedCount = parts.reduce(
    (sum, part) =>
      sum +
      (typeof part.rejectedCount === 'number'
        ? part.rejectedCount
        : Array.isArray(part.rejected)
          ? part.rejected.length
          : 0),
    0,
  );
  return {
    v: 1,
    known,
    missing: arrays('missing'),
    rejected: rejected.slice(0, MAX_KEPT_REJECTED),
    rejectedCount,
  };
}

/** Targets of per-entity pollers: ids known to the membership state and not currently missing. */
export function targetsOf(state: unknown): string[] {
  if (state === null || typeof state !== 'object') return [];
  const { known, missing } = state as { known?: unknown; missing?: unknown };
  if (!Array.isArray(known)) return [];
  const gone = new Set(
    Array.isArray(missing)
      ? missing.map((entry) => (entry as { id?: unknown } | null)?.id).filter((id) => typeof id === 'string')
      : [],
  );
  const ids = new Set(
    known.filter((id): id is string => typeof id === 'string' && id !== '' && !gone.has(id)),
  );
  return [...ids].sort(byCodeUnit);
}
