import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { DetectorOptions } from '../events/detector-options.js';
import type { EntityKind, Observation } from '../events/types.js';
import type { SnapshotStore } from '../store/snapshot-store.js';
import type { FleetClient } from '../upstream/fleet-client.js';
import type { RobotClient } from '../upstream/robot-client.js';
import type { Membership } from './membership-view.js';
import type { SignalInput, SignalResult, SignalSpec, SignalStream } from './pipeline.js';
import type { PollerName, PollJobData } from './types.js';
import type { UpstreamWindows } from './upstream-health.js';

/** The upstream clients a poller reads through (the daemon passes `createUpstream(...)`). */
export interface PollUpstream {
  fleet: FleetClient;
  robots: RobotClient;
}

/** What a poller gets for one job. */
export interface PollContext {
  readonly job: PollJobData;
  readonly config: Config;
  readonly upstream: PollUpstream;
  readonly store: SnapshotStore;
  readonly windows: UpstreamWindows;
  readonly detectors: DetectorOptions;
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
  /** Runs the signal pipeline and adds its counts to the job's outcome. */
  commit<State, Value, Options>(
    spec: SignalSpec<State, Value, Options>,
    inputs: ReadonlyArray<SignalInput<Value>>,
  ): Promise<SignalResult>;
  /** The same, for observations that arrive one by one: each is committed soon after it arrives. */
  commitStream<State, Value, Options>(spec: SignalSpec<State, Value, Options>): SignalStream<Value>;
  /** Counts entities the poller left out because they are not due yet. */
  notDue(count: number): void;
}

/**
 * A poller: how one tick's job observes the upstream. Per-entity pollers name the kind whose
 * membership snapshot lists their targets and get the shard's ids; list pollers get none.
 */
export interface Poller {
  name: PollerName;
  /** Per-entity pollers: which membership snapshot lists the targets. */
  targets?: EntityKind;
  poll(ctx: PollContext, ids: readonly string[] | undefined): Promise<void>;
}
