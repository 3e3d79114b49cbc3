import type { EntityKind } from '../events/types.js';
import { membershipRefs, mergeMemberships, targetsOf } from '../pollers/membership-view.js';
import { ENTITY_FACETS, type FacetOf } from '../pollers/registry.js';
import type { SnapshotRecord, SnapshotRef, SnapshotStore } from '../store/snapshot-store.js';
import { type ApiFields, FACETS, type GaugeFields } from './facets.js';
import { iso, isRecord, stateV1, stringOrNull } from './states.js';

/**
 * The fleet as fleetwatch last saw it, read from the snapshots in Redis (never from the upstream),
 * for the API (`/api/vehicles`, `/api/robots`) and for the fleet gauges: the membership snapshot of
 * a kind says which ids exist, and each facet's snapshot holds its detector state, decoded once
 * (facets.ts) and projected for each reader. The two readers differ on purpose:
 *
 * - The API lists every KNOWN id (listed, or missing from fewer lists than
 *   `detectors.membership.remove_after`), with its presence, every facet, when it was last seen
 *   and its latest failing poll.
 * - The gauges count the ids the pollers poll (known and not missing from the list: the rule of
 *   `targetsOf`) and read only the facets that have gauges.
 *
 * Facet snapshots are read `batchSize` at a time (`store.read`: one round trip of HMGETs per
 * batch), and only each entity's small view outlives its batch, never the fleet's states.
 */

/**
 * What the read model reads through; without `keys`, a store of one shard; without the change
 * feed (`changeCursors`, `changesSince`) and `readStamps`, every reading decodes every snapshot
 * (see `FleetReadModelOptions.reuse`).
 */
export type FleetStore = Pick<SnapshotStore, 'read'> &
  Partial<Pick<SnapshotStore, 'keys' | 'readStamps' | 'changeCursors' | 'changesSince'>>;

export interface ErrorView {
  /**
   * Which snapshot failed: a facet (`link`, `power`, `health`, ...) or `list`. Named `signal` in
   * the API since its first version; in the code it is a facet.
   */
  signal: string;
  code: string;
  status?: number;
  message: string;
}

export interface Presence {
  /** `listed`: in the latest list; `missing`: known, but absent from the latest list(s). */
  status: 'listed' | 'missing';
  /** While missing: since when (ISO 8601) and how many lists in a row. */
  missingSince: string | null;
  missedLists: number;
}

/** One entity as the API shows it: presence, each facet's fields, last seen, last error. */
export type EntityView<Kind extends EntityKind> = { id: string; presence: Presence } & ApiFields<Kind> & {
    /** The latest successful observation of any of its facets. */
    lastSeenAt: string | null;
    /** The most recent failed poll of a facet that has not succeeded since; null when none. */
    lastError: ErrorView | null;
  };

export type VehicleView = EntityView<'vehicle'>;
export type RobotView = EntityView<'robot'>;

/** One listed entity as the gauges count it. */
export type EntityGauges<Kind extends EntityKind> = { id: string } & GaugeFields<Kind>;

/** An element of the latest list that did not match the spec (and was left out of it). */
export interface RejectedView {
  /** Its position in the list. */
  index: number;
  /** The entity it names; null when it names none (it could not be kept). */
  id: string | null;
  code: string;
  message: string;
}

export interface ListInfo {
  /** When the list (GET /v1/vehicles or GET /api/robots) last answered. */
  lastSeenAt: string | null;
  /** The list's own last failure, when its latest poll failed. */
  lastError: ErrorView | null;
  /** Elements of the latest list that did not match the spec: how many, and the first ones. */
  rejected: { count: number; elements: RejectedView[] };
}

export interface FleetReading {
  vehicles: EntityGauges<'vehicle'>[];
  robots: EntityGauges<'robot'>[];
  /** Epoch ms when the reading was taken. */
  at: number;
  durationMs: number;
}

/** A membership snapshot, decoded once for both readers. */
export interface MembershipReading {
  /** Known ids, sorted, each once (what the API lists). */
  known: string[];
  /** Known ids not missing from the list, sorted (what the pollers poll and the gauges count). */
  targets: string[];
  presence(id: string): Presence;
  list: ListInfo;
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function errorOf(signal: string, record: SnapshotRecord | undefined): ErrorView | null {
  const error = record?.lastError;
  if (!error) return null;
  return {
    signal,
    code: error.code,
    ...(error.status === undefined ? {} : { status: error.status }),
    message: error.message,
  };
}

function latest(times: ReadonlyArray<string | undefined>): string | null {
  let best: string | null = null;
  let bestMs = Number.NEGATIVE_INFINITY;
  for (const time of times) {
    const ms = time === undefined ? Number.NaN : Date.parse(time);
    if (Number.isFinite(ms) && ms > bestMs) {
      best = time!;
      bestMs = ms;
    }
  }
  return best;
}

/** The failing facet polled most recently (the first of them on a tie). */
function lastErrorOf(records: ReadonlyArray<[string, SnapshotRecord | undefined]>): ErrorView | null {
  let best: ErrorView | null = null;
  let bestMs = Number.NEGATIVE_INFINITY;
  for (const [facet, record] of records) {
    const error = errorOf(facet, record);
    if (!error) continue;
    const polled = latest([record?.lastPolledAt, record?.observedAt]);
    const ms = polled === null ? 0 : Date.parse(polled);
    if (best === null || ms > bestMs) {
      best = error;
      bestMs = ms;
    }
  }
  return best;
}

function rejectedOf(state: ReturnType<typeof stateV1>): ListInfo['rejected'] {
  const elements: RejectedView[] = [];
  for (const entry of Array.isArray(state?.rejected) ? state.rejected : []) {
    if (!isRecord(entry) || typeof entry.index !== 'number') continue;
    elements.push({
      index: entry.index,
      id: stringOrNull(entry.id),
      code: stringOrNull(entry.code) ?? 'unknown',
      message: stringOrNull(entry.message) ?? '',
    });
  }
  const count = typeof state?.rejectedCount === 'number' ? state.rejectedCount : elements.length;
  return { count: Math.max(count, elements.length), elements };
}

export function readMembership(record: SnapshotRecord | undefined): MembershipReading {
  const state = stateV1(record?.state);
  const known = Array.isArray(state?.known) ? state.known.filter((id) => typeof id === 'string') : [];
  const missing = new Map<string, Record<string, unknown>>();
  if (Array.isArray(state?.missing)) {
    for (const entry of state.missing) {
      if (isRecord(entry) && typeof entry.id === 'string' && !missing.has(entry.id))
        missing.set(entry.id, entry);
    }
  }
  return {
    known: [...new Set(known)].sort(byCodeUnit),
    targets: targetsOf(record?.state),
    presence: (id) => {
      const entry = missing.get(id);
      return entry
        ? {
            status: 'missing',
            missingSince: iso(entry.since),
            missedLists: typeof entry.count === 'number' ? entry.count : 0,
          }
        : { status: 'listed', missingSince: null, missedLists: 0 };
    },
    list: {
      lastSeenAt: record?.lastSeenAt ?? null,
      lastError: errorOf('list', record),
      rejected: rejectedOf(state),
    },
  };
}

/** A facet's view, with the reading's type left open: each facet's own functions agree on it. */
interface AnyFacetView {
  read(state: ReturnType<typeof stateV1>): unknown;
  api(reading: unknown): object;
  gauge?(reading: unknown): object;
}

function viewOf<Kind extends EntityKind>(kind: Kind, facet: FacetOf<Kind>): AnyFacetView {
  const views: Readonly<Record<string, AnyFacetView>> = FACETS[kind];
  return views[facet]!;
}

/** One facet of one entity as the snapshot holds it: when it was observed, and its API fields. */
export interface FacetSnapshot {
  facet: string;
  /** When the stored state was observed (it changed then). */
  observedAt: string | null;
  /** The latest successful poll. */
  lastSeenAt: string | null;
  /** The latest poll that changed nothing. */
  lastPolledAt: string | null;
  /** The latest poll's failure, when it failed. */
  lastError: ErrorView | null;
  /** The facet's fields, as in the entity's view (`health`, `lease`, `config`, ...). */
  fields: object;
}

export interface FleetReadModelOptions {
  /** Snapshots per round trip; default 1,000. */
  batchSize?: number;
  now?: () => number;
  /**
   * Keep what `readFleet` decoded for the next reading of the same model (the gauges read the
   * fleet at every scrape), and read again only what the store's change feed says changed. Needs
   * a store with the feed and `readStamps`.
   */
  reuse?: boolean;
}

/**
 * What a reading decoded of one entity (or one list), and the stamps (version and observation
 * time) of the snapshots it came from: equal stamps, equal states.
 */
interface Decoded<View> {
  /**
   * Per facet, the version and the observation time (epoch ms; `NO_TIME` when absent) the view was
   * built from, flat: `[version0, time0, version1, time1, …]`. Numbers in one array, not the time
   * texts: a reading keeps one of these per entity of the fleet, and at 100,000 entities the texts
   * and their two arrays were most of the model's memory.
   */
  stamps: number[];
  view: View;
}

/** The time of a stamp with none, and of one that does not parse (never equal to a real time). */
const NO_TIME = -1;
const BAD_TIME = -2;

function timeOf(observedAtMs: number | undefined): number {
  if (observedAtMs === undefined) return NO_TIME;
  return Number.isFinite(observedAtMs) ? observedAtMs : BAD_TIME;
}

/**
 * The view and the stamps (from `readStamps`) it was decoded after. Stamps read before the full
 * read: when the snapshot changed in between, the next reading sees other stamps and decodes it
 * again, never the reverse.
 */
function decoded<View>(
  stamps: ReadonlyArray<SnapshotRecord | undefined>,
  from: number,
  width: number,
  view: View,
): Decoded<View> {
  const flat: number[] = new Array(width * 2);
  for (let f = 0; f < width; f += 1) {
    flat[f * 2] = stamps[from + f]?.version ?? 0;
    flat[f * 2 + 1] = timeOf(stamps[from + f]?.observedAtMs);
  }
  return { stamps: flat, view };
}

/** Whether `stamps[from, from + width)` are the ones `known` was decoded from (no allocation: 100,000s per scrape). */
function current(
  known: Decoded<unknown> | undefined,
  stamps: ReadonlyArray<SnapshotRecord | undefined>,
  from: number,
  width: number,
): boolean {
  if (!known) return false;
  for (let f = 0; f < width; f += 1) {
    const stamp = stamps[from + f];
    if ((stamp?.version ?? 0) !== known.stamps[f * 2]) return false;
    const time = timeOf(stamp?.observedAtMs);
    // A time that does not parse is never current: such a snapshot is decoded again each time.
    if (time === BAD_TIME || time !== known.stamps[f * 2 + 1]) return false;
  }
  return true;
}

const NONE: ReadonlySet<string> = new Set();

/** Whether two lists hold the same items in the same order. */
function sameItems(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return false;
  return true;
}

/** The ids of `kind` in `changes`; undefined (read everything) when `changes` is. */
function changedOf(
  changes: ReadonlyMap<string, ReadonlySet<string>> | undefined,
  kind: EntityKind,
): ReadonlySet<string> | undefined {
  return changes ? (changes.get(kind) ?? NONE) : undefined;
}

/** A kind's gauge views of the last reading: for the targets `ids`, in their order, and where each id is. */
interface Followed<View> {
  ids: readonly string[];
  position: ReadonlyMap<string, number>;
  views: View[];
}

/** The facets with gauges of `kind`, and how one entity's gauge view is built from their snapshots. */
function gaugeReader<Kind extends EntityKind>(kind: Kind) {
  const facets = ENTITY_FACETS[kind].filter((facet) => viewOf(kind, facet).gauge);
  const build = (id: string, records: ReadonlyArray<SnapshotRecord | undefined>) => {
    const fields = {};
    facets.forEach((facet, i) => {
      const view = viewOf(kind, facet);
      Object.assign(fields, view.gauge?.(view.read(stateV1(records[i]?.state))));
    });
    return { id, ...fields } as EntityGauges<Kind>; // the fields of every facet with gauges: GaugeFields<Kind>
  };
  return { facets, build };
}

export class FleetReadModel {
  readonly #store: FleetStore;
  readonly #batchSize: number;
  readonly #now: () => number;
  /**
   * With `reuse`: the membership targets by kind, with the stamps of the list snapshots they were
   * decoded from (a few snapshots: their stamps are read at every reading).
   */
  readonly #reused: Map<string, Map<string, Decoded<unknown>>> | undefined;
  /**
   * With `reuse`: each kind's gauge views of the last reading, by id, and where the last reading
   * left each shard's change feed (undefined: the next reading reads everything). A scrape sees a
   * fleet that barely changed since the last one: reading only what the feed names spares reading
   * and decoding the whole fleet at every scrape (seconds of CPU at 100,000 entities), and keeps
   * no stamps per entity. Each reading drops the entities that left, so departed ones go.
   */
  readonly #followed = new Map<EntityKind, Followed<unknown>>();
  #cursors: string[] | undefined;

  constructor(store: FleetStore, options: FleetReadModelOptions = {}) {
    this.#store = store;
    this.#batchSize = Math.max(1, Math.floor(options.batchSize ?? 1_000));
    this.#now = options.now ?? Date.now;
    this.#reused =
      options.reuse && store.readStamps && store.changeCursors && store.changesSince ? new Map() : undefined;
  }

  /** The membership snapshots of `kinds` (every shard's part), in one round trip. */
  async memberships(kinds: readonly EntityKind[]): Promise<MembershipReading[]> {
    const shards = this.#store.keys?.shards ?? 1;
    const records = await this.#store.read(kinds.flatMap((kind) => membershipRefs(kind, shards)));
    return kinds.map((_, i) => readMembership(mergeMemberships(records.slice(i * shards, (i + 1) * shards))));
  }

  /** The API views of `ids` (in order), every facet of the kind read. */
  async views<Kind extends EntityKind>(
    kind: Kind,
    ids: readonly string[],
    membership: MembershipReading,
  ): Promise<EntityView<Kind>[]> {
    const facets = ENTITY_FACETS[kind];
    return this.#entities(kind, ids, facets, (id, records) => {
      const fields = {};
      facets.forEach((facet, i) => {
        const view = viewOf(kind, facet);
        Object.assign(fields, view.api(view.read(stateV1(records[i]?.state))));
      });
      return {
        id,
        presence: membership.presence(id),
        ...fields,
        lastSeenAt: latest(records.map((record) => record?.lastSeenAt)),
        lastError: lastErrorOf(facets.map((facet, i) => [facet, records[i]])),
      } as EntityView<Kind>; // the fields of every facet of the kind: ApiFields<Kind>
    });
  }

  /** One facet of one entity; undefined when fleetwatch has not stored it (yet). */
  async facet<Kind extends EntityKind>(
    kind: Kind,
    id: string,
    facet: FacetOf<Kind>,
  ): Promise<FacetSnapshot | undefined> {
    const [record] = await this.#store.read([{ kind, id, facet }]);
    if (!record || record.version === 0) return undefined;
    const view = viewOf(kind, facet);
    return {
      facet,
      observedAt: record.observedAt ?? null,
      lastSeenAt: record.lastSeenAt ?? null,
      lastPolledAt: record.lastPolledAt ?? null,
      lastError: errorOf(facet, record),
      fields: view.api(view.read(stateV1(record.state))),
    };
  }

  /** The gauge views of `ids` (in order), only the facets with gauges read. */
  gauges<Kind extends EntityKind>(kind: Kind, ids: readonly string[]): Promise<EntityGauges<Kind>[]> {
    const { facets, build } = gaugeReader(kind);
    return this.#entities(kind, ids, facets, build);
  }

  /**
   * The whole fleet for the gauges: both membership lists in one round trip, then their targets'
   * facets. With `reuse`, only the entities the change feed names since the last reading (and
   * those new to the lists) are read; the rest keep their views.
   */
  async readFleet(): Promise<FleetReading> {
    const started = performance.now();
    const changed = this.#reused ? await this.#changes() : undefined;
    const [vehicles, robots] = await this.#targets(['vehicle', 'robot']);
    const reading = {
      vehicles: changed
        ? await this.#following('vehicle', vehicles!, changedOf(changed.ids, 'vehicle'))
        : await this.gauges('vehicle', vehicles!),
      robots: changed
        ? await this.#following('robot', robots!, changedOf(changed.ids, 'robot'))
        : await this.gauges('robot', robots!),
      at: this.#now(),
      durationMs: performance.now() - started,
    };
    // Only once the reading is whole: a reading that failed half-way is made again from the same place.
    if (changed) this.#cursors = changed.cursors;
    return reading;
  }

  /**
   * The ids of each kind that changed since the last reading (undefined ids: everything is to be
   * read, the first time and whenever the feed does not reach back to the last reading), and the
   * feed's cursors this reading leaves it at. Taken before anything is read: a change committed
   * meanwhile is read now and again next time, never missed.
   */
  async #changes(): Promise<{
    ids: ReadonlyMap<string, ReadonlySet<string>> | undefined;
    cursors: string[];
  }> {
    const store = this.#store;
    const since = this.#cursors ? await store.changesSince!(this.#cursors) : undefined;
    if (!since) return { ids: undefined, cursors: await store.changeCursors!() };
    const ids = new Map<string, Set<string>>();
    for (const ref of since.refs) {
      const ofKind = ids.get(ref.kind) ?? new Set<string>();
      ofKind.add(ref.id);
      ids.set(ref.kind, ofKind);
    }
    return { ids, cursors: since.cursors };
  }

  /**
   * The gauge views of `ids` (in order), read for the entities `changed` names or the last
   * reading did not have, and for every entity when `changed` is undefined. While the list is the
   * one the last reading had (the same targets, `#targets`), a reading costs what changed: the
   * last views with the changed ones replaced; else the views are kept by id and those that left go.
   */
  async #following<Kind extends EntityKind>(
    kind: Kind,
    ids: readonly string[],
    changed: ReadonlySet<string> | undefined,
  ): Promise<EntityGauges<Kind>[]> {
    const last = this.#followed.get(kind) as Followed<EntityGauges<Kind>> | undefined;
    const { facets, build } = gaugeReader(kind);
    if (last && last.ids === ids && changed !== undefined) {
      const stale = [...changed].filter((id) => last.position.has(id));
      if (stale.length === 0) return last.views;
      const fresh = await this.#entities(kind, stale, facets, build);
      const views = last.views.slice();
      stale.forEach((id, i) => {
        views[last.position.get(id)!] = fresh[i]!;
      });
      this.#followed.set(kind, { ...last, views });
      return views;
    }
    const position = new Map<string, number>();
    ids.forEach((id, i) => {
      position.set(id, i);
    });
    const stale =
      last && changed !== undefined ? ids.filter((id) => !last.position.has(id) || changed.has(id)) : ids;
    const fresh = await this.#entities(kind, stale, facets, build);
    const read = new Map<string, EntityGauges<Kind>>();
    stale.forEach((id, i) => {
      read.set(id, fresh[i]!);
    });
    const views = ids.map((id) => read.get(id) ?? last!.views[last!.position.get(id)!]!);
    this.#followed.set(kind, { ids, position, views });
    return views;
  }

  /** The ids the pollers poll, per kind; with `reuse`, a list is decoded only when it changed. */
  async #targets(kinds: readonly EntityKind[]): Promise<string[][]> {
    const reused = this.#reused;
    const readStamps = this.#store.readStamps?.bind(this.#store);
    if (!reused || !readStamps) return (await this.memberships(kinds)).map((m) => m.targets);
    const shards = this.#store.keys?.shards ?? 1;
    const refs = kinds.flatMap((kind) => membershipRefs(kind, shards));
    const stamps = await readStamps(refs);
    const lists = (reused.get('targets') ?? new Map()) as Map<string, Decoded<string[]>>;
    const stale = kinds.filter((kind, i) => !current(lists.get(kind), stamps, i * shards, shards));
    if (stale.length > 0) {
      const records = await this.#store.read(stale.flatMap((kind) => membershipRefs(kind, shards)));
      stale.forEach((kind, i) => {
        const targets = readMembership(mergeMemberships(records.slice(i * shards, (i + 1) * shards))).targets;
        // A list that changed in other ways (a VPN link, an address) keeps the same targets: the
        // same array, so the gauge views follow on from the last reading (`#following`).
        const before = lists.get(kind)?.view;
        const view = before && sameItems(before, targets) ? before : targets;
        lists.set(kind, decoded(stamps, kinds.indexOf(kind) * shards, shards, view));
      });
    }
    reused.set('targets', lists);
    return kinds.map((kind) => lists.get(kind)!.view);
  }

  /** Reads `facets` of every id, a batch of ids per round trip, and builds each entity's view at once. */
  async #entities<View>(
    kind: EntityKind,
    ids: readonly string[],
    facets: readonly string[],
    build: (id: string, records: ReadonlyArray<SnapshotRecord | undefined>) => View,
  ): Promise<View[]> {
    const views: View[] = [];
    if (facets.length === 0) return ids.map((id) => build(id, []));
    const perBatch = Math.max(1, Math.floor(this.#batchSize / facets.length));
    for (let start = 0; start < ids.length; start += perBatch) {
      const batch = ids.slice(start, start + perBatch);
      const refs: SnapshotRef[] = batch.flatMap((id) => facets.map((facet) => ({ kind, id, facet })));
      const records = await this.#store.read(refs);
      batch.forEach((id, i) => {
        views.push(build(id, records.slice(i * facets.length, (i + 1) * facets.length)));
      });
    }
    return views;
  }
}
