import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { FleetEvent } from '../events/types.js';
import type { RedisClient } from '../lib/redis-connection.js';
import { CountingSnapshotStore } from '../metrics/index.js';
import { combineHooks, PollCounters, type PollHooks } from '../pollers/outcome.js';
import { PollRunner } from '../pollers/runner.js';
import { StoreLossGuard, type StoreLossGuardOptions } from '../pollers/store-guard.js';
import { UpstreamWindows } from '../pollers/upstream-windows.js';
import { IncidentStore } from '../store/incidents.js';
import { PollLeases } from '../store/poll-lease.js';
import { SnapshotStore } from '../store/snapshot-store.js';
import { StoreMarker } from '../store/store-marker.js';
import type { RequestObserver } from '../upstream/http.js';
import { createUpstream, type Upstream } from '../upstream/index.js';

/**
 * The polling core as the daemon runs it, and as tests assemble it: the snapshot store (guarded
 * by the store marker: a store emptied under it is noticed, announced once and re-seeded with the
 * open incidents, see pollers/store-guard.ts), poll leases and upstream counting windows on one
 * producer connection, the upstream client (observed by the windows while the `upstream` poller is
 * enabled), and the runner that polls with them. Nothing here runs until asked: the runner is
 * driven by poll jobs (or a test's ticks), the windows flush once started, the guard reads the
 * marker on the first commit and every 2 s once started.
 */

export interface PollingCoreOptions {
  config: Config;
  /** A producer connection for the store, leases and windows; not closed here. */
  redis: RedisClient;
  logger: Logger;
  /** Clock for ticks, observations and windows. */
  now: () => number;
  /** More poll hooks (metrics, tests); the core's own `counters` always come first. */
  hooks?: ReadonlyArray<PollHooks | undefined>;
  /** Also told about every upstream HTTP exchange (metrics). */
  observers?: ReadonlyArray<RequestObserver | undefined>;
  /** Told about the events of every commit that went through (`fleetwatch_events_total`). */
  onCommitted?: (events: readonly FleetEvent[]) => void;
  /** Told what the commits changed of the open incidents (the store guard's `onIncidentsChanged`). */
  onIncidentsChanged?: StoreLossGuardOptions['onIncidentsChanged'];
  /** Aborts the runner's upstream reads (the daemon's shutdown, after the grace). */
  signal?: AbortSignal;
}

export interface PollingCore {
  store: SnapshotStore;
  /** The store marker's guard; `start()` it to notice a loss while nothing commits. */
  guard: StoreLossGuard;
  incidents: IncidentStore;
  leases: PollLeases;
  windows: UpstreamWindows;
  /** Closed by whoever built the core (`upstream.close()`). */
  upstream: Upstream;
  runner: PollRunner;
  /** Jobs and polls so far, in this process. */
  counters: PollCounters;
}

export function buildPollingCore(options: PollingCoreOptions): PollingCore {
  const { config, redis, logger, now } = options;
  const prefix = config.redis.prefix;
  const windows = new UpstreamWindows({
    redis,
    prefix,
    windowMs: config.pollers.upstream.interval,
    now,
    logger,
  });
  const upstream = createUpstream({
    config: config.upstream,
    logger,
    observer: combineObservers([
      config.pollers.upstream.enabled ? windows.observer : undefined,
      ...(options.observers ?? []),
    ]),
  });
  const shards = config.redis.shards;
  const incidents = new IncidentStore({ redis, prefix, shards });
  const identity = {
    redis,
    prefix,
    shards,
    installation: config.installation,
    eventLogCap: config.events.log_max_length,
  };
  const guard = new StoreLossGuard({
    marker: new StoreMarker(identity),
    incidents,
    snapshots: new SnapshotStore(identity),
    logger,
    now,
    ...(options.onCommitted ? { onEvent: options.onCommitted } : {}),
    ...(options.onIncidentsChanged ? { onIncidentsChanged: options.onIncidentsChanged } : {}),
  });
  const store = new CountingSnapshotStore({
    ...identity,
    guard,
    onCommitted: options.onCommitted ?? (() => {}),
  });
  const leases = new PollLeases({ redis, prefix, shards });
  const counters = new PollCounters();
  const runner = new PollRunner({
    config,
    upstream,
    store,
    leases,
    windows,
    logger,
    hooks: combineHooks([counters, ...(options.hooks ?? [])], (error) =>
      logger.debug({ err: (error as Error).message }, 'poll hook failed'),
    ),
    now,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { store, guard, incidents, leases, windows, upstream, runner, counters };
}

/** Tells every observer given about each exchange. */
export function combineObservers(observers: ReadonlyArray<RequestObserver | undefined>): RequestObserver {
  const list = observers.filter((observer): observer is RequestObserver => observer !== undefined);
  return {
    request: (info) => {
      for (const observer of list) observer.request(info);
    },
    unreadable: (info) => {
      for (const observer of list) observer.unreadable?.(info);
    },
  };
}
