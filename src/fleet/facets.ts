import type { EntityKind } from '../events/types.js';
import type { FacetOf } from '../pollers/registry.js';
import {
  iso,
  isRecord,
  known,
  lastObserved,
  readStatusPair,
  readThreshold,
  type StatusPair,
  type StoredState,
  settledGood,
  stringOrNull,
} from './states.js';

/**
 * Every per-entity facet the pollers write (see the registry's `FacetOf`), read once from its
 * stored detector state and shown two ways:
 *
 * - `api`: its fields of the entity's JSON in `/api/vehicles` and `/api/robots`. Debounced
 *   facets show what the last reading said AND whether the alert is open (`connected: false,
 *   alerting: false` is a vehicle seen disconnected that has not crossed the threshold yet).
 * - `gauge`: its values for the fleet gauges, which report the SETTLED status (the one the events
 *   announced, see `settledGood`). A facet without gauges is not read for the metrics at all.
 *
 * A facet the registry knows and this table does not fails to compile.
 */

interface FacetView<Reading, Api extends object, Gauge extends object> {
  /** The facet's detector state (version 1; undefined when absent or unknown), read leniently. */
  read(state: StoredState | undefined): Reading;
  api(reading: Reading): Api;
  gauge?(reading: Reading): Gauge;
}

/** A facet's view, its types inferred from its functions (and `gauge` known to be there when given). */
const facet = <Reading, Api extends object, Gauge extends object = never>(
  view: FacetView<Reading, Api, Gauge>,
) =>
  view as FacetView<Reading, Api, Gauge> &
    ([Gauge] extends [never] ? unknown : { gauge(reading: Reading): Gauge });

export type VpnStatus = 'connected' | 'disconnected';
export type PowerLabel = 'on' | 'off' | 'unknown';
export type CommandStatus = 'pending' | 'stuck';
export type HealthStatus = 'up' | 'down';

export const VPN_STATUSES: readonly VpnStatus[] = ['connected', 'disconnected'];
export const POWER_LABELS: readonly PowerLabel[] = ['on', 'off', 'unknown'];
export const COMMAND_STATUSES: readonly CommandStatus[] = ['pending', 'stuck'];
export const HEALTH_STATUSES: readonly HealthStatus[] = ['up', 'down'];

const onOff = (value: unknown): 'on' | 'off' | null => (value === 'on' || value === 'off' ? value : null);

/** `link` (vehicle-link detector): the VPN as the vehicle list reports it. */
const link = facet({
  read: (state) => ({ vpn: readThreshold(state?.vpn), ipAddress: stringOrNull(known(state?.ip)?.value) }),
  api: ({ vpn, ipAddress }) => {
    const last = lastObserved(vpn);
    return {
      vpn: {
        /** What the last vehicle list said; null before the first. */
        connected: last.good,
        ipAddress,
        /** Whether `vehicle.vpn.disconnected` is open (fired, not yet resolved). */
        alerting: last.alerting,
        /** Start of the current run of disconnected readings (or of the open incident). */
        disconnectedSince: last.badSince,
      },
    };
  },
  gauge: ({ vpn }): { vpn?: VpnStatus } => {
    const good = settledGood(vpn);
    return good === undefined ? {} : { vpn: good ? 'connected' : 'disconnected' };
  },
});

/** `power` (vehicle-power detector): the last good power reading, its command and its incidents. */
const power = facet({
  read: (state) => {
    const reading = isRecord(state?.reading) ? state.reading : undefined;
    return {
      /** false after a 404 (no power control), true after a good reading, null before either. */
      powerCapable: typeof state?.powerCapable === 'boolean' ? state.powerCapable : null,
      reading: reading && {
        state: stringOrNull(reading.state),
        pending: onOff(reading.pending),
        updatedAt: stringOrNull(reading.updatedAt),
      },
      pendingSince: iso(state?.pendingSince),
      stuck: state?.stuck === true,
      staleSince: iso(state?.staleSince),
      reachability: readThreshold(state?.reachability),
    };
  },
  api: (power) => {
    const reach = lastObserved(power.reachability);
    const pending = power.reading?.pending ?? null;
    return {
      power: {
        /** Reported state; null before the first good reading. */
        state: power.reading?.state ?? null,
        pendingCommand: pending ? { state: pending, since: power.pendingSince } : null,
        /** When the vehicle last reported its power state (the upstream's `updatedAt`). */
        updatedAt: power.reading?.updatedAt ?? null,
        powerCapable: power.powerCapable,
        stuck: power.stuck,
        staleSince: power.staleSince,
        /**
         * false while `vehicle.unreachable` is open or when the last poll ended in a 502/503/504
         * or time-out; null before the first reading.
         */
        reachable: reach.alerting ? false : reach.good,
      },
    };
  },
  /** Unknown without a good reading or without power control (404); `stuck` once that fired. */
  gauge: ({ reading, powerCapable, stuck }): { power: PowerLabel; command: CommandStatus | null } => {
    if (!reading || powerCapable === false) return { power: 'unknown', command: null };
    const label = onOff(reading.state) ?? 'unknown';
    return { power: label, command: reading.pending ? (stuck ? 'stuck' : 'pending') : null };
  },
});

/** `health` (robot-health detector). */
const health = facet({
  read: (state) => readThreshold(state?.health),
  api: (health) => {
    const last = lastObserved(health);
    return {
      health: {
        /** What the last check said; null before the first. */
        up: last.good,
        /** Whether `robot.health.down` is open. */
        alerting: last.alerting,
        downSince: last.badSince,
      },
    };
  },
  gauge: (health): { health?: HealthStatus } => {
    const good = settledGood(health);
    return good === undefined ? {} : { health: good ? 'up' : 'down' };
  },
});

/** `feedback` (robot-feedback detector): autonomy, navigation and vehicle state. */
const feedback = facet({
  read: (state) => ({
    autonomy: readStatusPair(known(state?.autonomy)?.value),
    navigation: readStatusPair(known(state?.navigation)?.value),
    vehicleState: stringOrNull(known(state?.vehicleState)?.value),
  }),
  api: (feedback): { autonomy: StatusPair | null; navigation: StatusPair | null; state: string | null } => ({
    autonomy: feedback.autonomy,
    navigation: feedback.navigation,
    /** `vehicle_feedback.state`. */
    state: feedback.vehicleState,
  }),
  /** The `cortex_status` number of the last platform feedback that had one. */
  gauge: ({ autonomy }): { autonomy?: number } => {
    const status = autonomy?.status;
    return typeof status === 'number' && Number.isFinite(status) ? { autonomy: status } : {};
  },
});

/** `lease` (robot-lease detector): who holds the teleoperation lease; null before the first reading. */
const lease = facet({
  read: (state) => {
    const holder = known(state?.holder);
    return holder && { holderId: stringOrNull(holder.value) };
  },
  api: (lease) => ({ lease }),
});

export interface ConfigPartView {
  /** The site, route or zone set by name; null when nothing is loaded or it has no name. */
  name: string | null;
  /** The document's top-level fields as last seen; null for no document or one with too many. */
  fields: string[] | null;
  /** The stable hash of the document (what `robot.config.changed` compares). */
  hash: string;
}

/**
 * `config` (robot-config detector): what is loaded, each part by name and top-level fields (null:
 * never observed). Only fingerprints are stored, never the documents: the API's live robot reads
 * show the content.
 */
const config = facet({
  read: (state) => {
    const parts = isRecord(state?.parts) ? state.parts : undefined;
    const part = (value: unknown): ConfigPartView | null => {
      if (!isRecord(value) || typeof value.hash !== 'string') return null;
      const entries = Array.isArray(value.entries) ? value.entries : null;
      const fields =
        value.kind === 'object' && entries
          ? entries.flatMap((entry) =>
              Array.isArray(entry) && typeof entry[0] === 'string' ? [entry[0]] : [],
            )
          : null;
      return { name: stringOrNull(value.name), fields, hash: value.hash };
    };
    return {
      activeSite: part(parts?.activeSite),
      loadedRoute: part(parts?.loadedRoute),
      loadedZoneSet: part(parts?.loadedZoneSet),
    };
  },
  api: (config) => ({ config }),
});

/** `command_queue` (robot-command-queue detector): queued commands at the last reading, and the open backlog. */
const commandQueue = facet({
  read: (state) => ({
    /** Queued commands at the last reading; null before the first. */
    length: typeof state?.length === 'number' ? state.length : null,
    /** While `robot.command_queue.backlog` is open: since when. */
    backlogSince: iso(state?.backlogSince),
  }),
  api: (commandQueue) => ({ commandQueue }),
});

/** Every facet of every kind; keyed by the registry's facets, so a new facet needs its entry here. */
export const FACETS = {
  vehicle: { link, power },
  robot: { health, feedback, lease, config, command_queue: commandQueue },
} satisfies { [Kind in EntityKind]: { [Facet in FacetOf<Kind>]: FacetView<unknown, object, object> } };

type Facets<Kind extends EntityKind> = (typeof FACETS)[Kind];

/** The reading, API fields and gauge fields of one facet's view. */
type Parts<View> =
  View extends FacetView<infer Reading, infer Api, infer Gauge>
    ? { reading: Reading; api: Api; gauge: Gauge }
    : never;

type EachFacet<Kind extends EntityKind, Part extends 'api' | 'gauge'> = {
  [Facet in keyof Facets<Kind>]: Parts<Facets<Kind>[Facet]>[Part];
}[keyof Facets<Kind>];

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void
  ? I
  : never;

/** The API fields all facets of a kind contribute. */
export type ApiFields<Kind extends EntityKind> = UnionToIntersection<EachFacet<Kind, 'api'>>;

/** The gauge fields of the facets of a kind that have gauges. */
export type GaugeFields<Kind extends EntityKind> = UnionToIntersection<EachFacet<Kind, 'gauge'>>;
