import type { Logger } from 'pino';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { CATALOGUE } from '../events/catalogue.js';
import type { FleetEvent } from '../events/types.js';
import type { FleetStore } from '../fleet/index.js';
import type { GcKind } from '../lib/gc-pauses.js';
import { REDIS_STATES, type RedisState } from '../lib/redis-health.js';
import type { DeliveryHook } from '../notifiers/delivery/delivery-worker.js';
import type { DisabledReceivers } from '../notifiers/delivery/disabled-receivers.js';
import type { ReceiverHolds } from '../notifiers/delivery/holds.js';
import type { Notifier } from '../notifiers/notifier.js';
import type { PollerName } from '../pollers/config.js';
import { POLLER_NAMES, POLLERS } from '../pollers/registry.js';
import type { RequestObserver } from '../upstream/http.js';
import { VERSION } from '../version.js';
import { DEFAULT_COLLECT_TIMEOUT_MS } from './cache.js';
import { DROPPED_DEFAULT_METRICS, METRIC_PREFIX, METRICS, type MetricKey } from './catalogue.js';
import { FleetGauges } from './fleet-gauges.js';
import {
  createNotificationMetrics,
  DELIVERY_OUTCOMES,
  type NotificationHooks,
  SUPPRESSION_REASONS,
} from './notification-metrics.js';
import { createPollHooks, POLL_RESULTS, type PollMetricHooks, type PollTiming } from './poll-metrics.js';
import { QueueGauges, type QueueSource } from './queue-gauges.js';
import { createUpstreamObserver } from './upstream-metrics.js';

/**
 * One daemon's metrics: its OWN prom-client `Registry` (never the global one, so several daemons
 * in one process — tests — do not collide), every family of the catalogue, prom-client's default
 * process/Node.js metrics under the same `fleetwatch_` prefix, and the hooks the daemon hands to
 * each stage. Serve it with `await metrics.text()` and `metrics.contentType` (the `MetricsSource`
 * the HTTP server takes), or straight from `metrics.registry`.
 *
 * Scrape-time gauges (fleet, queues) read from Redis only once `bind` has given them the store
 * and the queues, and then at most once per `fleetCacheMs`.
 */

export interface MetricsOptions {
  /** Per-vehicle and per-robot series (`metrics.per_entity`); off for very large fleets. */
  perEntity: boolean;
  /** How long a fleet reading and the queue counts are reused by scrapes; default 5 s. */
  fleetCacheMs?: number;
  /** How long a scrape waits for a Redis read before it shows the last one; default 500 ms. */
  collectTimeoutMs?: number;
  /** Interval (and start delay) per poller, for poll lag and overrun. */
  pollers?: Readonly<Partial<Record<string, PollTiming>>>;
  /**
   * The installation's name (`installation` of the config): an `installation` label on every
   * series, so one Prometheus and one dashboard can tell installations apart. None when unset.
   */
  installation?: string;
  /** Receiver names, so their series exist (at 0) before the first notification. */
  receivers?: readonly string[];
  /** Clock of ticks and observation times (the daemon's); `Date.now` by default. */
  now?: () => number;
  /** prom-client's default process and Node.js metrics; default true. */
  defaultMetrics?: boolean;
  /** The polls run on a thread of their own (`worker.poll_thread`): its heap gauges are exported. */
  pollThread?: boolean;
  logger?: Logger;
}

/** What the scrape-time gauges read. */
export interface MetricsSources {
  /** The shared snapshot store (fleet gauges). */
  store?: FleetStore;
  /** BullMQ queues to count (queue gauges; delivery queues name their receiver for dead letters). */
  queues?: readonly QueueSource[];
  /** The receivers' holds (of the delivery queues above). */
  holds?: Pick<ReceiverHolds, 'statuses'>;
  /** The receivers' disabled flags (of the delivery queues above). */
  disabled?: Pick<DisabledReceivers, 'status'>;
}

export interface MetricsHooks {
  /** For `createUpstream({observer})`. */
  upstream: RequestObserver;
  /** For the poll runner (`PollHooks`), plus `jobFailed` for the poll worker's `failed` event. */
  poll: PollMetricHooks;
  /** For the notification step (`onSuppressed`, `onHandedOff`). */
  notifications: NotificationHooks;
  /** For delivery's `onOutcome`. */
  delivery: DeliveryHook;
  /** Events committed (see `CountingSnapshotStore`). */
  events: (events: readonly FleetEvent[]) => void;
  /** For the events worker's `onOrder`. */
  order: { waited(event: FleetEvent): void; gaveUp(event: FleetEvent, skipped: number): void };
  /** The Redis health check's state, as it changes (`RedisHealth` `onState`). */
  redis: (state: RedisState) => void;
  /** A configuration reload's outcome (the daemon's reloader). */
  reload: (ok: boolean) => void;
  /** The poll thread's V8 heap as it reports it (used and total bytes); ignored without the thread. */
  pollThreadHeap: (used: number, total: number) => void;
  /** One collection of the poll thread's heap as it reports it; ignored without the thread. */
  pollThreadGc: (kind: GcKind, seconds: number) => void;
}

export interface Metrics {
  readonly registry: Registry;
  /** Every metric family this registry exports (default metrics included). */
  readonly names: readonly string[];
  readonly perEntity: boolean;
  /** The exposition's content type (`registry.contentType`), for the `/metrics` response. */
  readonly contentType: string;
  /** The exposition (`registry.metrics()`): scrape-time gauges are read now (or from their cache). */
  text(): Promise<string>;
  readonly hooks: MetricsHooks;
  /** Wraps a receiver's notifier to time notifications end to end. */
  instrumentNotifier(notifier: Notifier): Notifier;
  /** Receivers a reload added: their series start at 0, as the ones configured at start do. */
  knowReceivers(receivers: readonly string[]): void;
  /** Gives the scrape-time gauges their sources (again: replaces them). */
  bind(sources: MetricsSources): void;
  /** Detaches the sources (on shutdown, before their connections close); gauges keep their values. */
  unbind(): void;
}

type LabelsOf<K extends MetricKey> = (typeof METRICS)[K]['labels'][number];

export function createMetrics(options: MetricsOptions): Metrics {
  const registry = new Registry();
  const now = options.now ?? Date.now;
  const cacheMs = options.fleetCacheMs ?? 5_000;
  const timeoutMs = options.collectTimeoutMs ?? DEFAULT_COLLECT_TIMEOUT_MS;
  const registers = [registry];
  if (options.installation !== undefined) registry.setDefaultLabels({ installation: options.installation });

  const counter = <K extends MetricKey>(key: K): Counter<LabelsOf<K>> => {
    const def = METRICS[key];
    return new Counter<LabelsOf<K>>({
      name: def.name,
      help: def.help,
      labelNames: def.labels as readonly LabelsOf<K>[],
      registers,
    });
  };
  const histogram = <K extends MetricKey>(key: K): Histogram<LabelsOf<K>> => {
    const def: { name: string; help: string; labels: readonly string[]; buckets?: readonly number[] } =
      METRICS[key];
    return new Histogram<LabelsOf<K>>({
      name: def.name,
      help: def.help,
      labelNames: def.labels as readonly LabelsOf<K>[],
      ...(def.buckets ? { buckets: [...def.buckets] } : {}),
      registers,
    });
  };
  /** A gauge filled at scrape time by `collect` (shared by a group of gauges). */
  const gauge = <K extends MetricKey>(key: K, collect?: () => Promise<void>): Gauge<LabelsOf<K>> => {
    const def = METRICS[key];
    return new Gauge<LabelsOf<K>>({
      name: def.name,
      help: def.help,
      labelNames: def.labels as readonly LabelsOf<K>[],
      ...(collect ? { collect } : {}),
      registers,
    });
  };

  if (options.defaultMetrics !== false) {
    collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
    for (const name of DROPPED_DEFAULT_METRICS) registry.removeSingleMetric(name);
  }

  gauge('buildInfo').set({ version: VERSION }, 1);

  const upstream = createUpstreamObserver({
    requests: counter('upstreamRequests'),
    duration: histogram('upstreamRequestDuration'),
  });

  const pollJobs = counter('pollJobs');
  const pollCoalesced = counter('pollShardsCoalesced');
  const poll = createPollHooks({
    duration: histogram('pollDuration'),
    lag: histogram('pollLag'),
    jobs: pollJobs,
    overrun: counter('pollCycleOverrun'),
    coalesced: pollCoalesced,
    observations: counter('pollObservations'),
    observationErrors: counter('observationErrors'),
    timings: options.pollers ?? {},
    now,
  });

  const eventsTotal = counter('events');
  const heldForOrder = counter('eventsHeldForOrder');
  const orderSkipped = counter('eventsOrderSkipped');

  const queued = counter('notificationsQueued');
  const suppressed = counter('notificationsSuppressed');
  const outcomes = counter('notifications');
  const deliveryTime = histogram('notificationDelivery');
  const sendTime = histogram('notificationSendDuration');
  const notifications = createNotificationMetrics({
    queued,
    suppressed,
    outcomes,
    delivery: deliveryTime,
    send: sendTime,
    now,
  });

  const collectErrors = counter('collectErrors');
  const collectQueues = () => queueGauges.collect();
  const queueGauges: QueueGauges = new QueueGauges({
    jobs: gauge('queueJobs', collectQueues),
    deadLetters: gauge('deadLetters', collectQueues),
    heldUntil: gauge('receiverHeldUntil', collectQueues),
    holdInfo: gauge('receiverHoldInfo', collectQueues),
    disabled: gauge('receiverDisabled', collectQueues),
    errors: collectErrors,
    cacheMs,
    timeoutMs,
    ...(options.logger ? { logger: options.logger } : {}),
  });

  const pollers = Object.keys(options.pollers ?? {}).filter((name): name is PollerName =>
    (POLLER_NAMES as readonly string[]).includes(name),
  );
  const collectFleet = () => fleetGauges.collect();
  const fleetGauges: FleetGauges = new FleetGauges({
    gauges: {
      vehicles: gauge('vehicles', collectFleet),
      vehiclesByPower: gauge('vehiclesByPower', collectFleet),
      powerCommands: gauge('vehiclePowerCommands', collectFleet),
      robots: gauge('robots', collectFleet),
      upstreamDegraded: gauge('upstreamDegraded', collectFleet),
      listUnreadable: gauge('listUnreadable', collectFleet),
      pollerBehind: gauge('pollerBehind', collectFleet),
      readDuration: gauge('fleetReadDuration', collectFleet),
      readTimestamp: gauge('fleetReadTimestamp', collectFleet),
      ...(options.perEntity
        ? {
            perEntity: {
              vpnConnected: gauge('vehicleVpnConnected', collectFleet),
              powerOn: gauge('vehiclePowerOn', collectFleet),
              powerState: gauge('vehiclePowerState', collectFleet),
              robotUp: gauge('robotUp', collectFleet),
              autonomy: gauge('robotAutonomyStatus', collectFleet),
            },
          }
        : {}),
    },
    errors: collectErrors,
    // Local pollers (`upstream`) are never queued, so never behind.
    pollers: pollers.filter((name) => !POLLERS[name].local),
    cacheMs,
    timeoutMs,
    now,
    ...(options.logger ? { logger: options.logger } : {}),
  });

  // Known label values start at 0, so rate() and "no data" behave from the first scrape.
  for (const poller of pollers) for (const result of POLL_RESULTS) pollJobs.inc({ poller, result }, 0);
  for (const poller of pollers) pollCoalesced.inc({ poller }, 0);
  const pollInterval = gauge('pollInterval');
  for (const poller of pollers) {
    const intervalMs = options.pollers?.[poller]?.intervalMs;
    if (intervalMs !== undefined) pollInterval.set({ poller }, intervalMs / 1000);
  }
  for (const entry of CATALOGUE) eventsTotal.inc({ type: entry.type }, 0);
  for (const reason of SUPPRESSION_REASONS) suppressed.inc({ reason }, 0);
  // Each receiver once: at start, and a receiver a reload adds (zeroing again would wipe its counts).
  const knownReceivers = new Set<string>();
  const knowReceivers = (receivers: readonly string[]) => {
    for (const receiver of receivers) {
      if (knownReceivers.has(receiver)) continue;
      knownReceivers.add(receiver);
      queued.inc({ receiver }, 0);
      for (const outcome of DELIVERY_OUTCOMES) outcomes.inc({ receiver, outcome }, 0);
      // Histograms too: a receiver's first delivery then shows in rate() and the latency quantiles.
      deliveryTime.zero({ receiver });
      sendTime.zero({ receiver });
    }
  };
  knowReceivers(options.receivers ?? []);
  for (const source of ['fleet', 'queues']) collectErrors.inc({ source }, 0);
  const redisState = gauge('redisState');
  for (const state of REDIS_STATES) redisState.set({ state }, 0);

  // Like Prometheus: the config loaded at start counts as the first successful load.
  const reloadOk = gauge('configLastReloadSuccessful');
  const reloadAt = gauge('configLastReloadSuccessTimestamp');
  const reloaded = (ok: boolean) => {
    reloadOk.set(ok ? 1 : 0);
    if (ok) reloadAt.set(now() / 1000);
  };
  reloaded(true);

  // Absent without a poll thread (a 0 would read as an empty heap); the thread reports as it starts.
  const threadHeap = options.pollThread
    ? { used: gauge('pollThreadHeapUsed'), total: gauge('pollThreadHeapTotal') }
    : undefined;
  const threadGc = options.pollThread ? histogram('pollThreadGcDuration') : undefined;

  const names = registry.getMetricsAsArray().map((metric) => metric.name);

  return {
    registry,
    names,
    perEntity: options.perEntity,
    contentType: registry.contentType,
    text: () => registry.metrics(),
    hooks: {
      upstream,
      poll,
      notifications: notifications.hooks,
      delivery: notifications.onOutcome,
      events: (events) => {
        for (const event of events) eventsTotal.inc({ type: event.type });
      },
      order: {
        waited: () => heldForOrder.inc(),
        gaveUp: (_event, skipped) => orderSkipped.inc(skipped),
      },
      redis: (current) => {
        for (const state of REDIS_STATES) redisState.set({ state }, state === current ? 1 : 0);
      },
      reload: reloaded,
      pollThreadHeap: (used, total) => {
        threadHeap?.used.set(used);
        threadHeap?.total.set(total);
      },
      pollThreadGc: (kind, seconds) => {
        threadGc?.observe({ kind }, seconds);
      },
    },
    instrumentNotifier: notifications.instrumentNotifier,
    knowReceivers,
    bind(sources) {
      fleetGauges.bind(sources.store);
      queueGauges.bind(sources.queues, { holds: sources.holds, disabled: sources.disabled });
    },
    unbind() {
      fleetGauges.bind(undefined);
      queueGauges.bind(undefined);
    },
  };
}
