import type { MembershipState } from '../events/detectors/membership.js';
import type { RobotConfigState } from '../events/detectors/robot-config.js';
import type { RobotFeedbackState, StatusPair } from '../events/detectors/robot-feedback.js';
import type { RobotHealthState } from '../events/detectors/robot-health.js';
import type { RobotLeaseState } from '../events/detectors/robot-lease.js';
import type { ThresholdState } from '../events/detectors/threshold.js';
import type { VehicleLinkState } from '../events/detectors/vehicle-link.js';
import type { VehiclePowerState } from '../events/detectors/vehicle-power.js';
import type { EntityKind } from '../events/types.js';
import { membershipRef } from '../pollers/types.js';
import type { SnapshotRecord, SnapshotRef, SnapshotStore } from '../store/snapshot-store.js';

/**
 * The fleet as fleetwatch last saw it, read from the snapshots in Redis (never from the upstream):
 * the membership snapshot of a kind says which ids are known (listed, or missing from fewer lists
 * than `detectors.membership.remove_after`), and each signal's snapshot holds its detector state.
 * This file turns those states into plain JSON for `/api/vehicles` and `/api/robots`.
 *
 * Debounced signals (VPN, reachability, robot health) show both what the last reading said and
 * whether the alert is open: `connected: false, alerting: false` is a vehicle seen disconnected
 * that has not yet crossed `detectors.vpn.failure_threshold`.
 */

export interface ErrorView {
  /** Which snapshot: `link`, `power`, `health`, `feedback`, `lease`, `config`. */
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

export interface VehicleView {
  id: string;
  presence: Presence;
  vpn: {
    /** What the last vehicle list said; null before the first. */
    connected: boolean | null;
    ipAddress: string | null;
    /** Whether `vehicle.vpn.disconnected` is open (fired, not yet resolved). */
    alerting: boolean;
    /** Start of the current run of disconnected readings (or of the open incident). */
    disconnectedSince: string | null;
  };
  power: {
    /** Reported state; null before the first good reading. */
    state: 'on' | 'off' | 'unknown' | null;
    pendingCommand: { state: 'on' | 'off'; since: string | null } | null;
    /** When the vehicle last reported its power state (the upstream's `updatedAt`). */
    updatedAt: string | null;
    /** false after a 404 (no power control), true after a good reading, null before either. */
    powerCapable: boolean | null;
    stuck: boolean;
    staleSince: string | null;
    /**
     * false while `vehicle.unreachable` is open or when the last poll ended in a 502/503/504 or
     * time-out; null before the first reading.
     */
    reachable: boolean | null;
  };
  /** The latest successful observation of any of its signals. */
  lastSeenAt: string | null;
  /** The most recent failed poll of a signal that has not succeeded since; null when none. */
  lastError: ErrorView | null;
}

export interface RobotView {
  id: string;
  presence: Presence;
  health: {
    /** What the last check said; null before the first. */
    up: boolean | null;
    /** Whether `robot.health.down` is open. */
    alerting: boolean;
    downSince: string | null;
  };
  autonomy: StatusPair | null;
  navigation: StatusPair | null;
  /** `vehicle_feedback.state`. */
  state: string | null;
  lease: { holderId: string | null } | null;
  /** Stable hashes of the loaded configuration parts (null: never observed). */
  config: { activeSite: string | null; loadedRoute: string | null; loadedZoneSet: string | null };
  lastSeenAt: string | null;
  lastError: ErrorView | null;
}

export interface ListInfo {
  /** When the list (GET /v1/vehicles or GET /api/robots) last answered. */
  lastSeenAt: string | null;
  /** The list's own last failure, when its latest poll failed. */
  lastError: ErrorView | null;
}

export interface FleetPage<T> {
  items: T[];
  /** Pass as `?cursor=` for the next page; null on the last page. */
  nextCursor: string | null;
  /** Known ids of this kind. */
  total: number;
  list: ListInfo;
}

const SIGNALS: Record<EntityKind, readonly string[]> = {
  vehicle: ['link', 'power'],
  robot: ['health', 'feedback', 'lease', 'config'],
};

const iso = (ms: number | null | undefined): string | null =>
  typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : null;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The stored state when it looks like detector state version 1 (else nothing: shown as unknown). */
function stateOf<T>(record: SnapshotRecord | undefined): Partial<T> | undefined {
  const state = record?.state;
  return isRecord(state) && state.v === 1 ? (state as Partial<T>) : undefined;
}

/**
 * A debounced signal from its threshold state: whether the last observation was good, whether the
 * incident is open, and since when the current bad run (or the open incident) started.
 */
function debounced(state: ThresholdState | null | undefined): {
  good: boolean | null;
  alerting: boolean;
  badSince: string | null;
} {
  if (!state) return { good: null, alerting: false, badSince: null };
  const alerting = state.alerting === true;
  const streak = state.streak > 0;
  // `streak` counts observations against the settled status: bad while not alerting, good while alerting.
  const good = state.alerting === null ? (streak ? false : null) : alerting ? streak : !streak;
  const badSince = alerting ? iso(state.incidentSince) : good === false ? iso(state.streakSince) : null;
  return { good, alerting, badSince };
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

/** The failing signal polled most recently. */
function lastErrorOf(records: ReadonlyArray<[string, SnapshotRecord | undefined]>): ErrorView | null {
  let best: ErrorView | null = null;
  let bestMs = Number.NEGATIVE_INFINITY;
  for (const [signal, record] of records) {
    const error = errorOf(signal, record);
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

function presenceOf(membership: Partial<MembershipState> | undefined, id: string): Presence {
  const missing = Array.isArray(membership?.missing)
    ? membership.missing.find((entry) => entry?.id === id)
    : undefined;
  return missing
    ? { status: 'missing', missingSince: iso(missing.since), missedLists: missing.count }
    : { status: 'listed', missingSince: null, missedLists: 0 };
}

export function vehicleView(
  id: string,
  membership: Partial<MembershipState> | undefined,
  link: SnapshotRecord | undefined,
  power: SnapshotRecord | undefined,
): VehicleView {
  const linkState = stateOf<VehicleLinkState>(link);
  const powerState = stateOf<VehiclePowerState>(power);
  const vpn = debounced(linkState?.vpn);
  const reach = debounced(powerState?.reachability);
  const reading = powerState?.reading ?? null;
  return {
    id,
    presence: presenceOf(membership, id),
    vpn: {
      connected: vpn.good,
      ipAddress: linkState?.ip?.value ?? null,
      alerting: vpn.alerting,
      disconnectedSince: vpn.badSince,
    },
    power: {
      state: reading?.state ?? null,
      pendingCommand: reading?.pending
        ? { state: reading.pending, since: iso(powerState?.pendingSince ?? null) }
        : null,
      updatedAt: reading?.updatedAt ?? null,
      powerCapable: powerState?.powerCapable ?? null,
      stuck: powerState?.stuck === true,
      staleSince: iso(powerState?.staleSince ?? null),
      reachable: reach.alerting ? false : reach.good,
    },
    lastSeenAt: latest([link?.lastSeenAt, power?.lastSeenAt]),
    lastError: lastErrorOf([
      ['link', link],
      ['power', power],
    ]),
  };
}

export function robotView(
  id: string,
  membership: Partial<MembershipState> | undefined,
  records: {
    health?: SnapshotRecord;
    feedback?: SnapshotRecord;
    lease?: SnapshotRecord;
    config?: SnapshotRecord;
  },
): RobotView {
  const health = debounced(stateOf<RobotHealthState>(records.health)?.health);
  const feedback = stateOf<RobotFeedbackState>(records.feedback);
  const lease = stateOf<RobotLeaseState>(records.lease);
  const parts = stateOf<RobotConfigState>(records.config)?.parts;
  return {
    id,
    presence: presenceOf(membership, id),
    health: { up: health.good, alerting: health.alerting, downSince: health.badSince },
    autonomy: feedback?.autonomy?.value ?? null,
    navigation: feedback?.navigation?.value ?? null,
    state: feedback?.vehicleState?.value ?? null,
    lease: lease?.holder ? { holderId: lease.holder.value } : null,
    config: {
      activeSite: parts?.activeSite?.hash ?? null,
      loadedRoute: parts?.loadedRoute?.hash ?? null,
      loadedZoneSet: parts?.loadedZoneSet?.hash ?? null,
    },
    lastSeenAt: latest(Object.values(records).map((record) => record?.lastSeenAt)),
    lastError: lastErrorOf(
      (['health', 'feedback', 'lease', 'config'] as const).map((signal) => [signal, records[signal]]),
    ),
  };
}

/** Cursors are opaque to clients: the last id of the page, base64url-encoded. */
export function encodeCursor(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): string | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  return id === '' || encodeCursor(id) !== cursor ? undefined : id;
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Reads the fleet of one kind from the snapshot store. */
export class FleetReader {
  readonly #store: SnapshotStore;

  constructor(store: SnapshotStore) {
    this.#store = store;
  }

  async #membership(kind: EntityKind): Promise<{
    ids: string[];
    state: Partial<MembershipState> | undefined;
    list: ListInfo;
  }> {
    const [record] = await this.#store.read([membershipRef(kind)]);
    const state = stateOf<MembershipState>(record);
    const known = Array.isArray(state?.known) ? state.known.filter((id) => typeof id === 'string') : [];
    return {
      ids: [...new Set(known)].sort(byCodeUnit),
      state,
      list: { lastSeenAt: record?.lastSeenAt ?? null, lastError: errorOf('list', record) },
    };
  }

  async #views(
    kind: EntityKind,
    ids: readonly string[],
    membership: Partial<MembershipState> | undefined,
  ): Promise<Array<VehicleView | RobotView>> {
    const signals = SIGNALS[kind];
    const refs: SnapshotRef[] = ids.flatMap((id) => signals.map((signal) => ({ kind, id, signal })));
    const records = await this.#store.read(refs);
    return ids.map((id, i) => {
      const own = records.slice(i * signals.length, (i + 1) * signals.length);
      if (kind === 'vehicle') return vehicleView(id, membership, own[0], own[1]);
      return robotView(id, membership, {
        health: own[0],
        feedback: own[1],
        lease: own[2],
        config: own[3],
      });
    });
  }

  /** One page of the known ids (sorted), after `afterId` when given. */
  async page<T extends VehicleView | RobotView>(
    kind: EntityKind,
    options: { limit: number; afterId?: string },
  ): Promise<FleetPage<T>> {
    const { ids, state, list } = await this.#membership(kind);
    const start = options.afterId === undefined ? 0 : ids.findIndex((id) => id > options.afterId!);
    const from = start < 0 ? ids.length : start;
    const slice = ids.slice(from, from + options.limit);
    const items = (await this.#views(kind, slice, state)) as T[];
    const last = slice.at(-1);
    const more = from + slice.length < ids.length;
    return {
      items,
      nextCursor: more && last !== undefined ? encodeCursor(last) : null,
      total: ids.length,
      list,
    };
  }

  /** One known entity, or undefined when the membership snapshot does not know it. */
  async one<T extends VehicleView | RobotView>(kind: EntityKind, id: string): Promise<T | undefined> {
    const { ids, state } = await this.#membership(kind);
    if (!ids.includes(id)) return undefined;
    const [view] = await this.#views(kind, [id], state);
    return view as T;
  }
}
