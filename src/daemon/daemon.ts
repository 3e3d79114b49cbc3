import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { formatDuration } from '../config/duration.js';
import { maskUrlPassword } from '../config/mask.js';
import type { Config } from '../config/schema.js';
import type { FleetEvent } from '../events/types.js';
import { HttpServer } from '../http/server.js';
import {
  CountingSnapshotStore,
  createMetrics,
  type Metrics,
  withNotificationHooks,
} from '../metrics/index.js';
import { type DeliveryServiceOptions, startDelivery } from '../notifiers/delivery/delivery-service.js';
import {
  createNotificationStep,
  type NotificationStepOptions,
  type NotificationStepTuning,
} from '../notifiers/dispatch/index.js';
import { factoryFor } from '../notifiers/registry.js';
import { createPollWorker, type PollWorker } from '../pollers/poll-worker.js';
import { PollRunner } from '../pollers/runner.js';
import { PollScheduler, type ScheduledPoller } from '../pollers/scheduler.js';
import { combineHooks, POLLER_NAMES, PollCounters, type PollHooks } from '../pollers/types.js';
import { UpstreamWindows } from '../pollers/upstream-health.js';
import { closeQuietly, createProducerConnection, createWorkerConnection } from '../queues/connection.js';
import { createEventsQueue } from '../queues/events-queue.js';
import { notifyQueueName, QUEUE_NAMES } from '../queues/names.js';
import { createPollQueue } from '../queues/poll-queue.js';
import { OutboxRelay } from '../store/outbox-relay.js';
import { PollLeases } from '../store/poll-lease.js';
import type { RequestObserver } from '../upstream/http.js';
import { createUpstream } from '../upstream/index.js';
import { createEventsWorker } from './events-worker.js';
import { closeWorker, settlesWithin } from './shutdown.js';

/**
 * The monitoring daemon (`fleetwatch run`): everything built from the config and started.
 *
 * - one producer connection (fails fast while Redis is away) for the store, leases, queues and the
 *   relay's template; one worker connection (waits across reconnects) per BullMQ worker. All
 *   reconnect forever, so Redis going away and coming back needs no restart: ticks, polls and the
 *   relay fail, log once and carry on when it is back;
 * - the upstream client, observed by the upstream-health counting windows;
 * - the scheduler (clock-aligned ticks → `poll` jobs), the poll worker (`worker.concurrency`), the
 *   outbox relay (outbox → `events` queue) and an `events` worker that hands each event to the
 *   notification step (notifiers/dispatch: routing, groups, silences; its flusher puts grouped
 *   notifications on one delivery queue per receiver).
 *
 * `stop()` (or the `signal` aborting): stop ticking, let poll jobs under way finish within
 * `worker.shutdown_grace` (then abort their upstream reads and force-close), stop the relay after
 * its current batch, close queues and connections, close the upstream client.
 */

export interface DaemonOptions {
  logger: Logger;
  /** Stops the daemon when aborted (SIGTERM / SIGINT). */
  signal?: AbortSignal;
  /** Clock for ticks and observations; `Date.now` by default. */
  now?: () => number;
  /** More poll hooks (metrics). */
  hooks?: PollHooks;
  /** Also told about every upstream HTTP exchange (metrics). */
  observer?: RequestObserver;
  /** Called for each event the events worker takes, after the notification dispatcher (tests). */
  onEvent?: (event: FleetEvent) => void | Promise<void>;
  /** Notification step timing and hooks (tests, metrics). */
  notifications?: NotificationStepTuning & Pick<NotificationStepOptions, 'hooks'>;
  /** Outbox relay tuning (tests). */
  relay?: { blockMs?: number; claimIdleMs?: number };
  /** Delivery retry policies, worker timing and the per-attempt hook (tests, metrics). */
  delivery?: Pick<DeliveryServiceOptions, 'retry' | 'tuning' | 'onOutcome'>;
  /** The Prometheus metrics to feed; by default built from `config.metrics` (see `daemon.metrics`). */
  metrics?: Metrics;
}

export interface Daemon {
  /** Stops everything gracefully; safe to call more than once (same promise). */
  stop(): Promise<void>;
  /** Resolves once `stop` has finished. */
  readonly stopped: Promise<void>;
  readonly runner: PollRunner;
  readonly scheduler: PollScheduler;
  readonly counters: PollCounters;
  /** This daemon's Prometheus registry, the names it exports and its hooks: serve `metrics.registry`. */
  readonly metrics: Metrics;
  /**
   * The HTTP server (`/metrics`, `/healthz`, `/readyz`, `/api`, `/admin/queues`) unless
   * `http.enabled` is false: `http.address` once listening, `await http.listening` to wait for it.
   */
  readonly http?: HttpServer;
}

function combineObservers(observers: ReadonlyArray<RequestObserver | undefined>): RequestObserver {
  const list = observers.filter((observer): observer is RequestObserver => observer !== undefined);
  return {
    request: (info) => {
      for (const observer of list) observer.request(info);
    },
  };
}

/** One line for the start-up log: what is polled how often. */
export function describePollers(config: Config): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of POLLER_NAMES) {
    const settings: { enabled: boolean; interval: number; batch_size?: unknown } = config.pollers[name];
    if (!settings.enabled) continue;
    const batch = typeof settings.batch_size === 'number' ? `, ${settings.batch_size} per job` : '';
    out[name] = `every ${formatDuration(settings.interval)}${batch}`;
  }
  return out;
}

/** The `upstream` poller's jobs wait this long into their tick, so every replica has flushed its counts. */
function upstreamJobDelay(windowMs: number): number {
  return Math.min(5_000, Math.floor(windowMs / 4));
}

/** The daemon's metrics as `config.metrics` says, with what poll lag and zeroed series need. */
function metricsFor(config: Config, options: { now: () => number; logger: Logger }): Metrics {
  const pollers: Record<string, { intervalMs: number; delayMs: number }> = {};
  for (const name of POLLER_NAMES) {
    if (!config.pollers[name].enabled) continue;
    const intervalMs = config.pollers[name].interval;
    pollers[name] = { intervalMs, delayMs: name === 'upstream' ? upstreamJobDelay(intervalMs) : 0 };
  }
  return createMetrics({
    perEntity: config.metrics.per_entity,
    fleetCacheMs: config.metrics.fleet_cache,
    pollers,
    receivers: config.receivers.map((receiver) => receiver.name),
    now: options.now,
    logger: options.logger,
  });
}

export function startDaemon(config: Config, options: DaemonOptions): Daemon {
  const logger = options.logger;
  const now = options.now ?? Date.now;
  const prefix = config.redis.prefix;
  const url = config.redis.url;
  const metrics = options.metrics ?? metricsFor(config, { now, logger });

  const producer = createProducerConnection(url, { name: 'producer', logger });
  const pollConnection = createWorkerConnection(url, { name: 'poll-worker', logger });
  const eventsConnection = createWorkerConnection(url, { name: 'events-worker', logger });

  const windows = new UpstreamWindows({
    redis: producer,
    prefix,
    windowMs: config.pollers.upstream.interval,
    now,
    logger,
  });
  const countWindows = config.pollers.upstream.enabled;
  const upstream = createUpstream({
    config: config.upstream,
    logger,
    observer: combineObservers([
      countWindows ? windows.observer : undefined,
      metrics.hooks.upstream,
      options.observer,
    ]),
  });
  // Counts the events of every commit it wins (fleetwatch_events_total).
  const store = new CountingSnapshotStore({
    redis: producer,
    prefix,
    installation: config.installation,
    eventLogCap: config.events.log_max_length,
    onCommitted: metrics.hooks.events,
  });
  // One delivery worker per receiver (notifiers/delivery): retries, holds, dead letters.
  const onOutcome = options.delivery?.onOutcome;
  const takeover = config.worker.takeover_after;
  const delivery = startDelivery({
    ...options.delivery,
    tuning: { lockDuration: takeover, stalledInterval: takeover, ...options.delivery?.tuning },
    config,
    logger,
    store,
    onOutcome: (report) => {
      metrics.hooks.delivery(report);
      onOutcome?.(report);
    },
    createNotifier: (receiver, deps) => {
      const factory = factoryFor(receiver.kind);
      if (!factory) throw new Error(`receiver ${receiver.name}: no notifier for kind "${receiver.kind}"`);
      return metrics.instrumentNotifier(factory.create(receiver, deps));
    },
  });
  const leases = new PollLeases({ redis: producer, prefix });
  const counters = new PollCounters();
  const abort = new AbortController();
  // Every upstream read under way listens to it: far more than the default 10 listeners.
  setMaxListeners(0, abort.signal);
  const runner = new PollRunner({
    config,
    upstream,
    store,
    leases,
    windows,
    logger,
    hooks: combineHooks([counters, metrics.hooks.poll, options.hooks], (error) =>
      logger.debug({ err: (error as Error).message }, 'poll hook failed'),
    ),
    now,
    signal: abort.signal,
  });

  const pollQueue = createPollQueue({ connection: producer, prefix, logger });
  const eventsQueue = createEventsQueue({ connection: producer, prefix, logger });
  const scheduled: ScheduledPoller[] = POLLER_NAMES.filter((name) => config.pollers[name].enabled).map(
    (name) => ({
      name,
      intervalMs: config.pollers[name].interval,
      ...(name === 'upstream' ? { delayMs: upstreamJobDelay(config.pollers.upstream.interval) } : {}),
    }),
  );
  const scheduler = new PollScheduler({
    queue: pollQueue,
    plan: (poller, tick) => runner.plan(poller, tick),
    pollers: scheduled,
    logger,
    now,
  });
  const pollWorker: PollWorker = createPollWorker({
    connection: pollConnection,
    prefix,
    runner,
    concurrency: config.worker.concurrency,
    lockDuration: takeover,
    stalledInterval: takeover,
    logger,
  });
  pollWorker.on('failed', (job) => metrics.hooks.poll.jobFailed(job?.data?.poller));
  const notifications = createNotificationStep({
    ...options.notifications,
    hooks: withNotificationHooks(options.notifications?.hooks, metrics.hooks.notifications),
    config,
    redis: producer,
    prefix,
    logger,
    now,
  });
  const eventsWorker = createEventsWorker({
    connection: eventsConnection,
    prefix,
    logger,
    dispatch: notifications.dispatch,
    onEvent: options.onEvent,
    lockDuration: takeover,
    stalledInterval: takeover,
  });
  const relay = new OutboxRelay({
    redis: producer,
    queue: eventsQueue,
    prefix,
    logger,
    ...(options.relay?.blockMs === undefined ? {} : { blockMs: options.relay.blockMs }),
    claimIdleMs: options.relay?.claimIdleMs ?? takeover,
  });

  metrics.bind({
    store,
    queues: [
      { name: QUEUE_NAMES.poll, queue: pollQueue },
      { name: QUEUE_NAMES.events, queue: eventsQueue },
      ...[...notifications.queues].map(([receiver, queue]) => ({
        name: notifyQueueName(receiver),
        queue,
        receiver,
      })),
    ],
  });

  // One port for metrics, probes, the API and the queue UI (src/http). A port that cannot be had
  // is logged; polling and notifications run on without it.
  const http =
    config.http.enabled === false
      ? undefined
      : new HttpServer({
          config,
          logger,
          redis: producer,
          store,
          upstream,
          metrics: { contentType: metrics.registry.contentType, text: () => metrics.registry.metrics() },
        });
  http?.start().catch((error: unknown) => {
    logger.error(
      { host: config.http.host, port: config.http.port, err: (error as Error).message },
      'the HTTP server could not listen: /metrics, /healthz, /readyz and the API are unavailable (change http.port, or set http.enabled: false)',
    );
  });

  if (countWindows) windows.start();
  void relay.start();
  notifications.start();
  scheduler.start();
  logger.info(
    {
      installation: config.installation,
      redis: maskUrlPassword(url),
      prefix,
      pollers: describePollers(config),
      concurrency: config.worker.concurrency,
    },
    'fleetwatch running',
  );

  let resolveStopped!: () => void;
  const stopped = new Promise<void>((resolve) => {
    resolveStopped = resolve;
  });
  let stopping: Promise<void> | undefined;
  const onAbort = () => {
    void stop();
  };

  async function shutdown(): Promise<void> {
    const started = Date.now();
    const grace = config.worker.shutdown_grace;
    const remaining = () => Math.max(0, grace - (Date.now() - started));
    logger.info({ graceMs: grace }, 'fleetwatch stopping');
    // First: no more scrapes, probes or API calls against connections about to close.
    if (http) await settlesWithin(http.close(), 5_000);
    // Scrapes from here on show the last readings instead of reading through closing connections.
    metrics.unbind();
    await scheduler.stop();
    const pollClose = await closeWorker(pollWorker, {
      name: 'poll',
      graceMs: remaining(),
      onForce: () => abort.abort(new Error('fleetwatch is shutting down')),
      logger,
    });
    await windows.stop();
    await settlesWithin(relay.stop(), Math.max(remaining(), 3_000));
    await closeWorker(eventsWorker, { name: 'events', graceMs: Math.max(remaining(), 1_000), logger });
    await settlesWithin(notifications.stop(), Math.max(remaining(), 2_000));
    await delivery.stop(Math.max(remaining(), 1_000));
    await settlesWithin(Promise.all([pollQueue.close(), eventsQueue.close()]), 2_000);
    await closeQuietly([pollConnection, eventsConnection, producer]);
    await settlesWithin(upstream.close(), 5_000);
    logger.info({ durationMs: Date.now() - started, polls: pollClose }, 'fleetwatch stopped');
  }

  function stop(): Promise<void> {
    stopping ??= shutdown()
      .catch((error: unknown) => {
        logger.error({ err: (error as Error).message }, 'error while stopping');
      })
      .finally(() => {
        options.signal?.removeEventListener('abort', onAbort);
        resolveStopped();
      });
    return stopping;
  }

  if (options.signal?.aborted) void stop();
  else options.signal?.addEventListener('abort', onAbort, { once: true });

  return { stop, stopped, runner, scheduler, counters, metrics, ...(http ? { http } : {}) };
}
