import type { Logger } from 'pino';
import type { DetectorOptions } from '../events/detector-options.js';
import type { EntityKind, Observation, ObservationError } from '../events/types.js';
import type { SnapshotRef, SnapshotStore } from '../store/snapshot-store.js';
import type { FleetClient } from '../upstream/fleet-client.js';
import type { UpstreamName } from '../upstream/names.js';
import type { RobotClient } from '../upstream/robot-client.js';
import type { Membership } from './membership-view.js';
import type {
  ObservationInput,
  PipelineResult,
  PipelineSpec,
  PipelineStream,
} from './observation-pipeline.js';
import type { PollerSettings, PollerSettingsSchema } from './settings.js';
import type { UpstreamWindows } from './upstream-windows.js';

/**
 * What a poller is and what it gets for one job. Nothing here names a particular poller: the list
 * of them (and every name, config section and facet derived from it) is registry.ts, which sits
 * above every poller.
 */

/**
 * The upstreams pollers read from. Each has its own lane: its own poll queue and workers (poll
 * jobs) and its own in-flight slots (upstream/http.ts), so when one hangs and its jobs sit in
 * their time-outs, the other's polls still run and its outage is still seen.
 */
export const POLL_LANES = ['fleet', 'robots'] as const satisfies readonly UpstreamName[];
export type PollLane = (typeof POLL_LANES)[number];

/** The upstream the per-entity pollers of `kind` read from. */
export function upstreamOfKind(kind: EntityKind): PollLane {
  return kind === 'vehicle' ? 'fleet' : 'robots';
}

/** The entity kind whose upstream a lane reads (the inverse of `upstreamOfKind`). */
export function kindOfLane(lane: PollLane): EntityKind {
  return lane === 'fleet' ? 'vehicle' : 'robot';
}

/** The lane a poller's jobs run in (see `POLL_LANES`). */
export function laneOf(poller: Pick<Poller, 'reads' | 'targets'>): PollLane {
  return poller.reads ?? (poller.targets ? upstreamOfKind(poller.targets) : 'fleet');
}

/** The upstream clients a poller reads through (the daemon passes `createUpstream(...)`). */
export interface PollUpstream {
  fleet: FleetClient;
  robots: RobotClient;
}

/** A per-entity snapshot facet: `{kind}:{id}:{facet}`. */
export interface FacetRef<Kind extends EntityKind = EntityKind, Facet extends string = string> {
  kind: Kind;
  facet: Facet;
}

/** What a poller gets for one job. */
export interface PollContext {
  /** The part of the job a poller reads: which tick and shard it is. */
  readonly job: { readonly poller: string; readonly tick: number; readonly shard: number };
  /** This poller's section of the config file (`pollers.<name>`). */
  readonly settings: PollerSettings;
  readonly upstream: PollUpstream;
  readonly store: SnapshotStore;
  readonly windows: UpstreamWindows;
  readonly detectors: DetectorOptions;
  /** Every per-entity facet of each kind (what the pollers write; see registry.ts). */
  readonly entityFacets: Readonly<Record<EntityKind, readonly string[]>>;
  readonly now: () => number;
  /** Aborted when the daemon stops for good (shutdown grace exhausted). */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /** Upstream reads one job makes at once (the client also caps requests in flight globally). */
  readonly fetchConcurrency: number;
  /** The current membership list of a kind (decoded once per version, see membership-view.ts). */
  membership(kind: EntityKind): Promise<Membership>;
  /** One upstream read as an observation (see `observe`). */
  observe<T>(read: (signal: AbortSignal) => Promise<T>): Promise<Observation<T>>;
  /** Runs the observation pipeline and adds its counts to the job's outcome. */
  commit<State, Value, Options>(
    spec: PipelineSpec<State, Value, Options>,
    inputs: ReadonlyArray<ObservationInput<Value>>,
  ): Promise<PipelineResult>;
  /** The same, for observations that arrive one by one: each is committed soon after it arrives. */
  commitStream<State, Value, Options>(spec: PipelineSpec<State, Value, Options>): PipelineStream<Value>;
  /**
   * Whether to leave out the job's entity at `position` (0-based, in polling order): the upstream
   * it reads from became degraded while the job ran, and the entity is not in the sample polled
   * meanwhile (see degraded-upstreams.ts). Read at most once a second: the answer comes at once
   * (no promise) while the last reading is fresh.
   */
  heldBack(position: number): boolean | Promise<boolean>;
  /** Counts entities the poller left out because they are not due yet. */
  notDue(count: number): void;
  /**
   * Counts an observation error that no snapshot of its own keeps (a list element that names no
   * entity): the metrics count it like any failed observation.
   */
  countError(ref: SnapshotRef, error: ObservationError): void;
}

/**
 * A poller: how one tick's job observes the upstream, and everything the rest of fleetwatch needs
 * to know about it. Per-entity pollers name the kind whose membership snapshot lists their
 * targets and get the shard's ids; list pollers get none.
 */
export interface Poller<
  Name extends string = string,
  Settings extends PollerSettingsSchema = PollerSettingsSchema,
  Writes extends FacetRef = FacetRef,
> {
  readonly name: Name;
  /** Its section of the config file: defaults, bounds and any keys of its own. */
  readonly settings: Settings;
  /** Per-entity pollers: which membership snapshot lists the targets. */
  readonly targets?: EntityKind;
  /**
   * The upstream its reads go to, whose lane its jobs run in (`POLL_LANES`). Per-entity pollers:
   * that of their kind, unless they say otherwise; a list poller that says nothing runs in `fleet`.
   */
  readonly reads?: PollLane;
  /** The per-entity facet it writes, if any (a list poller may write one too: `vehicles` → `link`). */
  readonly writes?: Writes;
  /** How long after its tick starts a tick's jobs are due (default: at once). */
  delayMs?(intervalMs: number): number;
  /**
   * Run by every replica's scheduler itself, not through a poll queue: a job that must never
   * wait behind the fleet's polls (the `upstream` poller judges an outage while every worker is
   * stuck in its time-outs). Its lease lets one replica run a tick, and its commits must be
   * idempotent (a window is judged once whoever judges it).
   */
  readonly local?: boolean;
  poll(ctx: PollContext, ids: readonly string[] | undefined): Promise<void>;
}

/** A poller with its literal name, section and facet kept, so the registry can derive from them. */
export function definePoller<
  const Name extends string,
  Settings extends PollerSettingsSchema,
  const Writes extends FacetRef = never,
>(poller: Poller<Name, Settings, Writes>): Poller<Name, Settings, Writes> {
  return poller;
}
