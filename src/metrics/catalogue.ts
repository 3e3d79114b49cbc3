/**
 * Every metric family fleetwatch exports of its own (besides prom-client's default process and
 * Node.js metrics, which carry the same `fleetwatch_` prefix): the one list the registry is built
 * from, the README table is written from and the naming test checks. Dashboards and alert rules
 * may use any name here; `createMetrics().names` is the list one daemon really exports (without the
 * per-entity families when `metrics.per_entity` is off, without the poll thread's when
 * `worker.poll_thread` is, with the default metrics).
 *
 * Naming (Prometheus conventions, linted by `promtool check metrics`): one prefix, snake_case,
 * base units as suffix (`_seconds`), counters end in `_total`, nothing else does, no ids in names.
 */

export const METRIC_PREFIX = 'fleetwatch_';

export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface MetricDefinition {
  name: string;
  type: MetricType;
  labels: readonly string[];
  help: string;
  /** One series per vehicle or robot: left out when `metrics.per_entity` is false. */
  perEntity?: boolean;
  /** The poll thread's own: left out unless `worker.poll_thread` is true. */
  pollThread?: boolean;
  /** Histogram buckets, in seconds. */
  buckets?: readonly number[];
}

/** Upstream HTTP round trips: 5 ms … 30 s (the request time-out is 10 s by default). */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;
/** Poll jobs and their start lag: 10 ms … 5 min (intervals are 30 s … 5 min by default). */
const POLL_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300] as const;
/** Event → delivered: includes group_wait and retries, so 0.5 s … 1 h. */
const DELIVERY_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600] as const;
/** One send to Slack or a webhook: 10 ms … 30 s. */
const SEND_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

export const METRICS = {
  buildInfo: {
    name: 'fleetwatch_build_info',
    type: 'gauge',
    labels: ['version'],
    help: 'Always 1; the version label says which fleetwatch is running.',
  },

  // Upstream client.
  upstreamRequests: {
    name: 'fleetwatch_upstream_requests_total',
    type: 'counter',
    labels: ['operation', 'status'],
    help: 'HTTP requests to the upstream fleet service, by operation and HTTP status (or "timeout", "network").',
  },
  upstreamRequestDuration: {
    name: 'fleetwatch_upstream_request_duration_seconds',
    type: 'histogram',
    labels: ['operation'],
    help: 'Duration of upstream HTTP requests, by operation (each try of a retried call counts).',
    buckets: REQUEST_BUCKETS,
  },

  // Pollers.
  pollDuration: {
    name: 'fleetwatch_poll_duration_seconds',
    type: 'histogram',
    labels: ['poller'],
    help: 'How long one poll job (one shard of one tick) took, by poller.',
    buckets: POLL_BUCKETS,
  },
  pollLag: {
    name: 'fleetwatch_poll_lag_seconds',
    type: 'histogram',
    labels: ['poller'],
    help: 'How late a poll job started after the start of its tick (queueing, busy workers), by poller.',
    buckets: POLL_BUCKETS,
  },
  pollJobs: {
    name: 'fleetwatch_poll_jobs_total',
    type: 'counter',
    labels: ['poller', 'result'],
    help: 'Poll jobs run by this replica, by poller and result (ok, partial, failed, lease_held, skipped, upstream_degraded, error).',
  },
  pollCycleOverrun: {
    name: 'fleetwatch_poll_cycle_overrun_total',
    type: 'counter',
    labels: ['poller'],
    help: 'Poll jobs that finished after the next tick of their poller had started.',
  },
  pollShardsCoalesced: {
    name: 'fleetwatch_poll_shards_coalesced_total',
    type: 'counter',
    labels: ['poller'],
    help: "Shards for which a tick added no poll job because that shard's job of an earlier tick was still queued or running: the poller is behind its interval (each replica counts the ticks it enqueued).",
  },
  pollInterval: {
    name: 'fleetwatch_poll_interval_seconds',
    type: 'gauge',
    labels: ['poller'],
    help: 'The configured interval of each scheduled poller (pollers.<name>.interval), for judging poll lag and duration against it.',
  },
  pollObservations: {
    name: 'fleetwatch_poll_observations_total',
    type: 'counter',
    labels: ['poller'],
    help: 'Observations made (one per polled entity and facet, or per list), failed ones included.',
  },
  observationErrors: {
    name: 'fleetwatch_observation_errors_total',
    type: 'counter',
    labels: ['poller', 'code'],
    help: 'Failed observations (time-outs, 5xx, unparseable bodies, ...), by poller and error code; never state changes.',
  },

  // Events.
  events: {
    name: 'fleetwatch_events_total',
    type: 'counter',
    labels: ['type'],
    help: 'Events committed by this replica, by CloudEvents type (summed over replicas: each event once).',
  },
  eventsHeldForOrder: {
    name: 'fleetwatch_events_held_for_order_total',
    type: 'counter',
    labels: [],
    help: 'Events this replica held back until an earlier event of the same subject was dispatched.',
  },
  eventsOrderSkipped: {
    name: 'fleetwatch_events_order_skipped_total',
    type: 'counter',
    labels: [],
    help: 'Earlier events of a subject given up on after the longest wait (they go out late, or never came).',
  },

  // Notifications.
  notificationsQueued: {
    name: 'fleetwatch_notifications_queued_total',
    type: 'counter',
    labels: ['receiver'],
    help: 'Notifications handed to a receiver delivery queue by this replica.',
  },
  notificationsSuppressed: {
    name: 'fleetwatch_notifications_suppressed_total',
    type: 'counter',
    labels: ['reason'],
    help: 'Events kept out of notifications, by reason (silenced, maintenance, inhibited).',
  },
  notifications: {
    name: 'fleetwatch_notifications_total',
    type: 'counter',
    labels: ['receiver', 'outcome'],
    help: 'Delivery attempts by receiver and outcome (delivered, retry, throttled, rejected, gone).',
  },
  notificationDelivery: {
    name: 'fleetwatch_notification_delivery_seconds',
    type: 'histogram',
    labels: ['receiver'],
    help: 'From the time of the oldest event in a notification to its delivery, by receiver (reminders excluded).',
    buckets: DELIVERY_BUCKETS,
  },
  notificationSendDuration: {
    name: 'fleetwatch_notification_send_duration_seconds',
    type: 'histogram',
    labels: ['receiver'],
    help: 'Duration of one delivery attempt (the HTTP call to Slack or the webhook), by receiver.',
    buckets: SEND_BUCKETS,
  },
  deadLetters: {
    name: 'fleetwatch_dead_letters',
    type: 'gauge',
    labels: ['receiver'],
    help: 'Notifications in the dead-letter state (the CLI can list and replay them), by receiver.',
  },
  receiverHeldUntil: {
    name: 'fleetwatch_receiver_held_until_timestamp_seconds',
    type: 'gauge',
    labels: ['receiver'],
    help: 'Unix time until which a receiver is held (nothing is sent to it until then or fleetwatch receiver resume); 0 when it is not held.',
  },
  receiverDisabled: {
    name: 'fleetwatch_receiver_disabled',
    type: 'gauge',
    labels: ['receiver'],
    help: 'Per receiver: 1 while it is disabled (it answered that it is gone; fleetwatch receiver enable turns it on again), 0 otherwise.',
  },
  receiverHoldInfo: {
    name: 'fleetwatch_receiver_hold_info',
    type: 'gauge',
    labels: ['receiver', 'cause', 'status', 'capped'],
    help: 'Why a receiver is held, 1 while it is: cause (throttled, retry, error), the HTTP status of the answer (none without one), capped (true when its Retry-After was cut to max_hold).',
  },

  // The poll thread (worker.poll_thread): prom-client's nodejs_heap_* are the main thread's.
  pollThreadHeapUsed: {
    name: 'fleetwatch_poll_thread_heap_size_used_bytes',
    type: 'gauge',
    labels: [],
    help: "The poll thread's V8 heap in use (worker.poll_thread: true; fleetwatch_nodejs_heap_size_used_bytes is the main thread's), as the thread last reported it (every 10 s).",
    pollThread: true,
  },
  pollThreadHeapTotal: {
    name: 'fleetwatch_poll_thread_heap_size_total_bytes',
    type: 'gauge',
    labels: [],
    help: "The poll thread's V8 heap size, as the thread last reported it (every 10 s).",
    pollThread: true,
  },
  pollThreadGcDuration: {
    name: 'fleetwatch_poll_thread_gc_duration_seconds',
    type: 'histogram',
    labels: ['kind'],
    help: "The poll thread's garbage collections by kind (minor, major, incremental, weakcb) and how long each paused it; fleetwatch_nodejs_gc_duration_seconds is the main thread's.",
    pollThread: true,
    // prom-client's buckets for nodejs_gc_duration_seconds: the two threads read alike.
    buckets: [0.001, 0.01, 0.1, 1, 2, 5],
  },

  // Queues.
  queueJobs: {
    name: 'fleetwatch_queue_jobs',
    type: 'gauge',
    labels: ['queue', 'state'],
    help: 'Jobs in each BullMQ queue (poll, events, notify-<receiver>) by state (waiting, active, delayed, failed, completed).',
  },

  // Fleet, read from the shared snapshots (every replica reports the same fleet).
  vehicles: {
    name: 'fleetwatch_vehicles',
    type: 'gauge',
    labels: ['vpn'],
    help: 'Vehicles by VPN link as fleetwatch has settled it (after the vpn thresholds): connected, disconnected.',
  },
  vehiclesByPower: {
    name: 'fleetwatch_vehicles_by_power',
    type: 'gauge',
    labels: ['state'],
    help: 'Vehicles by reported power state (on, off, unknown; unknown also when there is no power reading).',
  },
  vehiclePowerCommands: {
    name: 'fleetwatch_vehicle_power_commands',
    type: 'gauge',
    labels: ['status'],
    help: 'Power commands in flight: pending, or stuck (pending longer than detectors.power.stuck_after).',
  },
  robots: {
    name: 'fleetwatch_robots',
    type: 'gauge',
    labels: ['health'],
    help: 'Robots by health as fleetwatch has settled it (after the health thresholds): up, down.',
  },
  fleetReadDuration: {
    name: 'fleetwatch_fleet_read_duration_seconds',
    type: 'gauge',
    labels: [],
    help: 'How long the last read of the fleet snapshots (for the fleet gauges) took.',
  },
  fleetReadTimestamp: {
    name: 'fleetwatch_fleet_read_timestamp_seconds',
    type: 'gauge',
    labels: [],
    help: 'Unix time of the fleet reading the fleet gauges show (it lags when Redis cannot be read).',
  },
  collectErrors: {
    name: 'fleetwatch_metrics_collect_errors_total',
    type: 'counter',
    labels: ['source'],
    help: "Scrape-time reads that failed, or got no answer within 500 ms while no newer reading had finished (fleet, with the upstreams' health; queues, with the receivers' holds and disabled flags); the gauges then keep their last values.",
  },

  upstreamDegraded: {
    name: 'fleetwatch_upstream_degraded',
    type: 'gauge',
    labels: ['upstream'],
    help: 'Per upstream (token, fleet, robots): 1 while its monitor.upstream.degraded incident is open, 0 otherwise.',
  },
  listUnreadable: {
    name: 'fleetwatch_list_unreadable',
    type: 'gauge',
    labels: ['upstream'],
    help: 'Per list (fleet: the vehicle list, robots: the robot list): 1 while its monitor.list.unreadable incident is open (elements not as the spec says), 0 otherwise.',
  },
  pollerBehind: {
    name: 'fleetwatch_poller_behind',
    type: 'gauge',
    labels: ['poller'],
    help: "Per queued poller: 1 while its monitor.polling.behind incident is open (shards' jobs waited a whole interval for a worker), 0 otherwise.",
  },

  // Redis.
  redisState: {
    name: 'fleetwatch_redis_state',
    type: 'gauge',
    labels: ['state'],
    help: "This replica's Redis write check: 1 for its state now (ok, unreachable, slow, refusing_writes, authentication, error), 0 for the others.",
  },

  // Configuration reloads (SIGHUP, POST /-/reload), as Prometheus names its own.
  configLastReloadSuccessful: {
    name: 'fleetwatch_config_last_reload_successful',
    type: 'gauge',
    labels: [],
    help: 'Whether the last configuration reload of this replica succeeded (1) or was refused or failed (0); 1 from the start.',
  },
  configLastReloadSuccessTimestamp: {
    name: 'fleetwatch_config_last_reload_success_timestamp_seconds',
    type: 'gauge',
    labels: [],
    help: 'Unix time of the last successful configuration reload of this replica (its start until the first).',
  },

  // Per entity (metrics.per_entity).
  vehicleVpnConnected: {
    name: 'fleetwatch_vehicle_vpn_connected',
    type: 'gauge',
    labels: ['vehicle'],
    help: 'Per vehicle: 1 when its VPN link is connected, 0 when disconnected (after the vpn thresholds).',
    perEntity: true,
  },
  vehiclePowerOn: {
    name: 'fleetwatch_vehicle_power_on',
    type: 'gauge',
    labels: ['vehicle'],
    help: 'Per vehicle: 1 when it reports power on, 0 when off; absent while its power state is unknown.',
    perEntity: true,
  },
  vehiclePowerState: {
    name: 'fleetwatch_vehicle_power_state',
    type: 'gauge',
    labels: ['vehicle', 'state'],
    help: 'Per vehicle: 1 for its current power state (on, off, unknown); one series per vehicle.',
    perEntity: true,
  },
  robotUp: {
    name: 'fleetwatch_robot_up',
    type: 'gauge',
    labels: ['robot'],
    help: 'Per robot: 1 when its health checks pass, 0 when it is down (after the health thresholds).',
    perEntity: true,
  },
  robotAutonomyStatus: {
    name: 'fleetwatch_robot_autonomy_status',
    type: 'gauge',
    labels: ['robot'],
    help: 'Per robot: the autonomy (cortex_status) status number from its last platform feedback.',
    perEntity: true,
  },
} as const satisfies Record<string, MetricDefinition>;

export type MetricKey = keyof typeof METRICS;

/** Every fleetwatch metric family defined here, per-entity ones included. */
export const METRIC_DEFINITIONS: readonly MetricDefinition[] = Object.values(METRICS);

/** Names of every fleetwatch metric family defined here (not the default process/Node.js metrics). */
export const METRIC_NAMES: readonly string[] = METRIC_DEFINITIONS.map((metric) => metric.name);

/**
 * prom-client default metrics dropped because they break the naming rules (gauges ending in
 * `_total`); `fleetwatch_nodejs_active_handles` etc. (by type) carry the same numbers.
 */
export const DROPPED_DEFAULT_METRICS: readonly string[] = [
  'fleetwatch_nodejs_active_handles_total',
  'fleetwatch_nodejs_active_requests_total',
  'fleetwatch_nodejs_active_resources_total',
];

const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'] as const;

/**
 * Every sample name a list of families puts in the exposition: a histogram `x` appears as
 * `x_bucket`, `x_sum` and `x_count`. For checking that a dashboard query names a real series.
 */
export function seriesNames(
  families: readonly string[],
  typeOf: (name: string) => MetricType | undefined = definedType,
): string[] {
  const out: string[] = [];
  for (const name of families) {
    if (typeOf(name) === 'histogram') out.push(...HISTOGRAM_SUFFIXES.map((suffix) => `${name}${suffix}`));
    else out.push(name);
  }
  return out;
}

const TYPES = new Map<string, MetricType>(METRIC_DEFINITIONS.map((metric) => [metric.name, metric.type]));
// The one histogram among the default metrics.
TYPES.set('fleetwatch_nodejs_gc_duration_seconds', 'histogram');

function definedType(name: string): MetricType | undefined {
  return TYPES.get(name);
}
