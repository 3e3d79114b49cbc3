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

interface Decoded {
  version: number;
  ids: readonly string[];
  set: ReadonlySet<string>;
}

function listedAtOf(record: SnapshotRecord | undefined): number {
  return Date.parse(record?.lastSeenAt ?? record?.observedAt ?? '');
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
    const ref = membershipRef(kind);
    const [header] = await this.#store.readHeaders([ref]);
    let decoded = this.#decoded.get(kind);
    let listedAt = listedAtOf(header);
    if (!decoded || decoded.version !== (header?.version ?? 0)) {
      const [record] = await this.#store.read([ref]);
      const ids = targetsOf(record?.state);
      decoded = { version: record?.version ?? 0, ids, set: new Set(ids) };
      listedAt = listedAtOf(record);
      this.#decoded.set(kind, decoded);
    }
    const { set } = decoded;
    return { version: decoded.version, ids: decoded.ids, has: (id) => set.has(id), listedAt };
  }
}

/** The membership snapshot of a kind: `{kind: 'fleet', id: <kind>, facet: 'membership'}`. */
export function membershipRef(kind: EntityKind): SnapshotRef {
  return { kind: 'fleet', id: kind, facet: 'membership' };
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

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
