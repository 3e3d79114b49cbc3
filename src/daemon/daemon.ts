import { setMaxListeners } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import type { Worker } from 'bullmq';
import type { Logger } from 'pino';
import { describeRedisTarget } from '../config/mask.js';
import type { ReloadResult } from '../config/reload.js';
import type { Config } from '../config/schema.js';
import type { FleetEvent } from '../events/types.js';
import { HttpServer } from '../http/server.js';
import { formatDuration } from '../lib/duration.js';
import { type Component, lifecycle } from '../lib/lifecycle.js';
import {
  closeQuietly,
  createProducerConnection,
  createWorkerConnection,
  type RedisClient,
  redisEndpoint,
  retryDelay,
  waitForReady,
} from '../lib/redis-connection.js';
import { describeRefusal, isMissingDatabase, RedisHealth } from '../lib/redis-health.js';
import { NOTHING_TO_RELOAD } from '../lib/reload.js';
import { closeWorker, settlesWithin } from '../lib/shutdown.js';
import { createMetrics, type Metrics, withNotificationHooks } from '../metrics/index.js';
import {
  type DeliveryService,
  type DeliveryServiceOptions,
  startDelivery,
} from '../notifiers/delivery/delivery-service.js';
import { DisabledReceivers } from '../notifiers/delivery/disabled-receivers.js';
import { ReceiverHolds } from '../notifiers/delivery/holds.js';
import { EntityOrder, orderMaxWait } from '../notifiers/dispatch/entity-order.js';
import { createEventsWorker } from '../notifiers/dispatch/events-worker.js';
import {
  createNotificationStep,
  type NotificationStepOptions,
  type NotificationStepTuning,
} from '../notifiers/dispatch/notification-step.js';
import { factoryOf } from '../notifiers/receivers/kinds.js';
import { combineHooks, type PollCounters, type PollHooks } from '../pollers/outcome.js';
import { createPollQueues } from '../pollers/poll-queue.js';
import { POLL_LANES } from '../pollers/poller.js';
import { POLLER_NAMES } from '../pollers/registry.js';
import type { PollRunner } from '../pollers/runner.js';
import { scheduledPollers } from '../pollers/scheduler.js';
import { createEventsQueue } from '../queues/events-queue.js';
import { eventsRedeliveryMs, notifyQueueName, pollQueueName, QUEUE_NAMES } from '../queues/names.js';
import { storeKeys } from '../store/keys.js';
import { OutboxRelay } from '../store/outbox-relay.js';
import { shardCountProblem } from '../store/store-marker.js';
import type { RequestObserver } from '../upstream/http.js';
import { PollThreadHost } from './poll-thread-host.js';
import { buildPollWork } from './poll-work.js';
import { buildPollingCore, combineObservers } from './polling-core.js';
import { ConfigReloader, type ReloadTrigger } from './reload.js';

/**
 * The monitoring daemon (`fleetwatch run`): everything built from the config and started.
 *
 * - producer connections (fail fast while Redis is away): one for the snapshot store, leases and
 *   counting windows, one for queues, the notification step and the relay's template; one worker
 *   connection (waits across reconnects) per BullMQ worker. All
 *   reconnect forever, so Redis going away and coming back needs no restart: ticks, polls and the
 *   relay fail, log once and carry on when it is back;
 * - the Redis health check (lib/redis-health.ts): a write every 2 s on a connection of its own,
 *   the one voice of a Redis outage in the log (down once, naming why; back once, with how long),
 *   what `/readyz` reports and `fleetwatch_redis_state` shows;
 * - the upstream client, observed by the upstream-health counting windows;
 * - the store guard (the store marker: a store emptied under the daemon is announced once and its
 *   open incidents carried over, see pollers/store-guard.ts);
 * - the scheduler (clock-aligned ticks → `poll` jobs) and a poll worker per lane
 *   (`worker.concurrency` each; poll-work.ts), on a thread of their own with `worker.poll_thread`
 *   (poll-thread.ts, with a polling core of its own: one more replica to Redis), the outbox relay (outbox → `events` queue) and an `events` worker that hands each event to the
 *   notification step (notifiers/dispatch: routing, groups, silences; its flusher puts grouped
 *   notifications on one delivery queue per receiver).
 *
 * Everything is built first (the polling core by `buildPollingCore`, as tests build it), then run
 * as a list of components started in order (`lib/lifecycle.ts`). `stop()` (or the `signal`
 * aborting) stops them in the reverse order: HTTP, metrics sources, ticking; poll jobs under way
 * get what is left of `worker.shutdown_grace` (then their upstream reads are aborted, with 2 s to
 * wind up; `lib/shutdown.ts`); the relay stops after its current batch; then the events worker,
 * the notification step, delivery, queues, connections and the upstream client.
 *
 * `reload()` (SIGHUP, `POST /-/reload`; see reload.ts) reads the config file again through
 * `configSource` and hands its live sections to delivery, the notification step, the poll runner
 * and the metrics, in that order; the HTTP API reads the config in force from the reloader.
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
  /**
   * Reads and validates the config file again, as it was read at start (`fleetwatch run`: the same
   * path and environment); throws a `ConfigError` when it cannot be used. Without it the daemon
   * cannot reload.
   */
  configSource?: () => Config;
}

export interface Daemon {
  /** Stops everything gracefully; safe to call more than once (same promise). */
  stop(): Promise<void>;
  /** Resolves once `stop` has finished. */
  readonly stopped: Promise<void>;
  readonly runner: PollRunner;
  readonly counters: PollCounters;
  /** This daemon's Prometheus registry, the names it exports and its hooks: serve `metrics.registry`. */
  readonly metrics: Metrics;
  /**
   * The HTTP server (`/metrics`, `/healthz`, `/readyz`, `/api`, `/admin/queues`) unless
   * `http.enabled` is false: `http.address` once listening, `await http.listening` to wait for it.
   */
  readonly http?: HttpServer;
  /** Re-reads the config and applies its live sections (see reload.ts); never rejects. */
  reload(trigger?: ReloadTrigger): Promise<ReloadResult>;
  /**
   * Why the daemon refused the store and stopped (`redis.shards` does not match it, or the server
   * has no database of `redis.url`'s number), if it did.
   */
  readonly refused: string | undefined;
  /** Why the daemon stopped on its own (its poll thread ended), if it did. */
  readonly failed: string | undefined;
  /** The config in force: the one started with, with the live sections of the last reload. */
  readonly config: Config;
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

/** The daemon's metrics as `config.metrics` says, with what poll lag and zeroed series need. */
function metricsFor(config: Config, options: { now: () => number; logger: Logger }): Metrics {
  const pollers: Record<string, { intervalMs: number; delayMs: number }> = {};
  for (const { name, intervalMs, delayMs = 0 } of scheduledPollers(config.pollers)) {
    pollers[name] = { intervalMs, delayMs };
  }
  return createMetrics({
    perEntity: config.metrics.per_entity,
    fleetCacheMs: config.metrics.fleet_cache,
    installation: config.installation,
    pollers,
    receivers: config.receivers.map((receiver) => receiver.name),
    now: options.now,
    logger: options.logger,
    pollThread: config.worker.poll_thread,
  });
}

export function startDaemon(config: Config, options: DaemonOptions): Daemon {
  const logger = options.logger;
  const now = options.now ?? Date.now;
  const prefix = config.redis.prefix;
  const endpoint = redisEndpoint(config.redis);
  const target = describeRedisTarget(config.redis);
  const takeover = config.worker.takeover_after;
  const metrics = options.metrics ?? metricsFor(config, { now, logger });

  // Built first, started below in the order of `components`: nothing consumes or serves yet.
  const producer = createProducerConnection(endpoint, { name: 'producer', logger });
  // Does Redis take writes? Logs an outage once (and its end), feeds /readyz and the metrics.
  const redisHealth = new RedisHealth({
    redis: producer,
    key: storeKeys(prefix).healthCheck,
    target,
    logger,
    onState: metrics.hooks.redis,
  });
  // The store's own: BullMQ defines its scripts on the connection its queues use, and ioredis
  // copies every defined script onto each pipeline it builds. The store builds a pipeline or more
  // per group commit; on the queues' connection that copying was a tenth of a poll's CPU.
  const storeConnection = createProducerConnection(endpoint, { name: 'store', logger });
  // With `worker.poll_thread` the polls run on a thread of their own, with its own connections.
  const threaded = config.worker.poll_thread;
  const pollConnection = threaded
    ? undefined
    : createWorkerConnection(endpoint, { name: 'poll-worker', logger });
  const eventsConnection = createWorkerConnection(endpoint, { name: 'events-worker', logger });
  const abort = new AbortController();
  // Every upstream read under way listens to it: far more than the default 10 listeners.
  setMaxListeners(0, abort.signal);
  const { store, guard, windows, upstream, runner, counters } = buildPollingCore({
    config,
    redis: storeConnection,
    logger,
    now,
    hooks: [metrics.hooks.poll, options.hooks],
    observers: [metrics.hooks.upstream, options.observer],
    // Counts the events of every commit it wins (fleetwatch_events_total).
    onCommitted: metrics.hooks.events,
    signal: abort.signal,
  });
  const pollQueues = createPollQueues({ connection: producer, prefix, logger });
  const eventsQueue = createEventsQueue({ connection: producer, prefix, logger });
  const notifications = createNotificationStep({
    ...options.notifications,
    // A group keeps the ids it took as long as an event can be redelivered, so none is notified twice.
    policy: { redeliveryMs: eventsRedeliveryMs(takeover), ...options.notifications?.policy },
    hooks: withNotificationHooks(options.notifications?.hooks, metrics.hooks.notifications),
    config,
    redis: producer,
    prefix,
    snapshots: store,
    logger,
    now,
  });
  const eventsWorker = createEventsWorker({
    connection: eventsConnection,
    prefix,
    logger,
    dispatch: notifications.dispatch,
    onEvent: options.onEvent,
    // Long enough for a dead replica's outbox entries and event jobs to move (a takeover each).
    order: new EntityOrder({
      redis: producer,
      prefix,
      shards: config.redis.shards,
      maxWaitMs: orderMaxWait(takeover),
      now,
    }),
    onOrder: metrics.hooks.order,
    lockDuration: takeover,
    stalledInterval: takeover,
    autorun: false,
  });
  const relay = new OutboxRelay({
    redis: producer,
    queue: eventsQueue,
    prefix,
    shards: config.redis.shards,
    logger,
    ...(options.relay?.blockMs === undefined ? {} : { blockMs: options.relay.blockMs }),
    claimIdleMs: options.relay?.claimIdleMs ?? takeover,
  });
  const jobFailed = (poller: unknown) => metrics.hooks.poll.jobFailed(poller);
  let failed: string | undefined;
  // The scheduler and the poll workers: here, or on the poll thread, fed the same hooks.
  const pollWork = pollConnection
    ? buildPollWork({
        config,
        runner,
        queues: pollQueues,
        connection: pollConnection,
        logger,
        now,
        onJobFailed: jobFailed,
        abort,
      })
    : undefined;
  const pollThread = pollWork
    ? undefined
    : new PollThreadHost({
        config,
        logger,
        hooks: {
          poll: combineHooks([counters, metrics.hooks.poll, options.hooks], (error) =>
            logger.debug({ err: (error as Error).message }, 'poll hook failed'),
          ),
          upstream: combineObservers([metrics.hooks.upstream, options.observer]),
          events: metrics.hooks.events,
          // The thread's commits of open incidents: this guard's copy follows them.
          incidents: (events, moved) => guard.threadChanged(events, moved),
          heap: metrics.hooks.pollThreadHeap,
          gc: metrics.hooks.pollThreadGc,
          jobFailed,
        },
        onFailure: (reason) => {
          failed = reason;
          logger.error(reason);
          void stop();
        },
      });
  // One port for metrics, probes, the API and the queue UI (src/http).
  const http =
    config.http.enabled === false
      ? undefined
      : new HttpServer({
          config,
          live: () => reloader.config,
          ...(options.configSource ? { reload: () => reloader.reload('api') } : {}),
          logger,
          redis: producer,
          store,
          redisHealth,
          upstream,
          metrics: { contentType: metrics.registry.contentType, text: () => metrics.registry.metrics() },
        });

  const holds = new ReceiverHolds({ redis: producer, prefix });
  let metricsBound = false;
  // The queue gauges count the delivery queues of the receivers in force (again after a reload).
  const bindMetrics = () =>
    metrics.bind({
      store,
      queues: [
        ...POLL_LANES.map((lane) => ({ name: pollQueueName(lane), queue: pollQueues[lane] })),
        { name: QUEUE_NAMES.events, queue: eventsQueue },
        ...[...notifications.queues].map(([receiver, queue]) => ({
          name: notifyQueueName(receiver),
          queue,
          receiver,
        })),
      ],
      holds,
      disabled: new DisabledReceivers({ redis: producer, prefix }),
    });

  let delivery: DeliveryService | undefined;
  const grace = config.worker.shutdown_grace;
  const reloader = new ConfigReloader({
    config,
    load:
      options.configSource ??
      (() => {
        throw new Error('this daemon was not started from a config file');
      }),
    logger,
    onResult: metrics.hooks.reload,
    // Commit order: a receiver's worker before routes that name it; the API reads the result.
    parts: [
      {
        name: 'delivery',
        prepare: (next) => delivery?.prepareReload(next, grace) ?? NOTHING_TO_RELOAD,
      },
      { name: 'notification step', prepare: (next) => notifications.prepareReload(next) },
      {
        name: 'poll runner',
        prepare: (next) => ({
          commit: () => {
            runner.useDetectors(next.detectors);
            pollThread?.useDetectors(next.detectors);
          },
        }),
      },
      {
        name: 'metrics',
        prepare: (next) => ({
          commit: () => {
            metrics.knowReceivers(next.receivers.map((receiver) => receiver.name));
            if (metricsBound) bindMetrics();
          },
        }),
      },
    ],
  });
  let polls: 'graceful' | 'forced' | undefined;
  // The producer connection turns commands away until it is ready (no offline queue), and it is
  // still connecting now: a part that used it at once would fail its first read and warn at every
  // start. So every part that uses Redis starts on its first `ready` (at once in practice; when
  // Redis is down at start, the connection's own warning says so and the parts start when it is
  // back). It rejects only when the connection is closed, at stop.
  // A store laid out over another shard count is refused before any part writes to it, and so is
  // a server without the database `redis.url` names (ioredis would carry on in database 0).
  let refused: string | undefined;
  const refuse = (problem: string, fields: Record<string, unknown>): never => {
    refused = problem;
    logger.error(fields, problem);
    void stop();
    throw new Error(problem);
  };
  const missingDatabase = { failOn: isMissingDatabase };
  const connected = Promise.all([
    waitForReady(producer, missingDatabase),
    waitForReady(storeConnection, missingDatabase),
  ]).then(
    async () => {
      const problem = await checkShardCount(producer, prefix, config.redis.shards, logger);
      if (problem !== undefined) refuse(problem, { prefix, shards: config.redis.shards });
    },
    (error: unknown) => {
      if (isMissingDatabase(error)) refuse(describeRefusal(error, target), { redis: target });
      throw error;
    },
  );
  connected.catch(() => {});
  const afterRedis = { after: connected };
  /**
   * Started in this order, stopped in the reverse one: HTTP first (no scrape, probe or API call
   * against connections about to close), then metrics (scrapes show the last readings), the
   * scheduler, the poll worker, ... and the upstream client last. Each stop gets what is left of
   * `worker.shutdown_grace`; the floors below keep a spent grace from cutting the later parts off.
   */
  const components: Component[] = [
    { name: 'upstream client', stop: () => settlesWithin(upstream.close(), 5_000) },
    {
      name: 'connections',
      stop: () => closeQuietly([pollConnection, eventsConnection, storeConnection, producer]),
    },
    {
      // Checks every 2 s from here on; stopped after everything that uses Redis has stopped.
      name: 'redis health',
      start: () => redisHealth.start(),
      stop: () => redisHealth.stop(),
    },
    {
      name: 'queues',
      stop: () =>
        settlesWithin(
          Promise.all([...POLL_LANES.map((lane) => pollQueues[lane].close()), eventsQueue.close()]),
          2_000,
        ),
    },
    {
      // The store marker and the open incidents, read every 2 s: a store emptied under the daemon
      // is noticed, announced once and its open incidents carried over (pollers/store-guard.ts).
      name: 'store guard',
      ...afterRedis,
      start: () => guard.start(),
      stop: () => settlesWithin(guard.stop(), 2_000),
    },
    {
      // One delivery worker per receiver (notifiers/delivery): retries, holds, dead letters.
      name: 'delivery',
      ...afterRedis,
      start: () => {
        delivery = startDelivery({
          ...options.delivery,
          tuning: { lockDuration: takeover, stalledInterval: takeover, ...options.delivery?.tuning },
          // A reload before Redis was ready has already changed the receivers.
          config: reloader.config,
          logger,
          store,
          onOutcome: (report) => {
            metrics.hooks.delivery(report);
            options.delivery?.onOutcome?.(report);
          },
          createNotifier: (receiver, deps) =>
            metrics.instrumentNotifier(factoryOf(receiver).create(receiver, deps)),
        });
      },
      stop: (remaining) => delivery?.stop(Math.max(remaining, 1_000)),
    },
    {
      name: 'notification step',
      ...afterRedis,
      start: () => notifications.start(),
      stop: (remaining) => settlesWithin(notifications.stop(), Math.max(remaining, 2_000)),
    },
    {
      name: 'events worker',
      ...afterRedis,
      start: () => runWorker(eventsWorker),
      stop: (remaining) =>
        closeWorker(eventsWorker, { name: 'events', graceMs: Math.max(remaining, 1_000), logger }),
    },
    {
      name: 'outbox relay',
      ...afterRedis,
      start: () => void relay.start(),
      stop: (remaining) => settlesWithin(relay.stop(), Math.max(remaining, 3_000)),
    },
    {
      name: 'upstream windows',
      ...afterRedis,
      start: () => {
        if (config.pollers.upstream.enabled) windows.start();
      },
      stop: () => windows.stop(),
    },
    {
      // The scheduler's ticks and the poll workers (poll-work.ts), here or on the poll thread.
      name: 'polls',
      ...afterRedis,
      start: () => (pollWork ? pollWork.start() : pollThread?.start()),
      // Polls under way get the grace; then their upstream reads are aborted.
      stop: async (remaining) => {
        polls = await (pollWork ? pollWork.stop(remaining) : pollThread?.stop(remaining));
      },
    },
    {
      name: 'metrics',
      start: () => {
        metricsBound = true;
        bindMetrics();
      },
      stop: () => {
        metricsBound = false;
        metrics.unbind();
      },
    },
    {
      name: 'http',
      // A port that cannot be had is logged; polling and notifications run on without it.
      start: () => {
        http?.start().catch((error: unknown) => {
          logger.error(
            { host: config.http.host, port: config.http.port, err: (error as Error).message },
            'the HTTP server could not listen: /metrics, /healthz, /readyz and the API are unavailable (change http.port, or set http.enabled: false)',
          );
        });
      },
      stop: () => (http ? settlesWithin(http.close(), 5_000) : undefined),
    },
    {
      // Stopped first: a reload under way finishes before the parts it changes stop.
      name: 'config reload',
      stop: (remaining) => settlesWithin(reloader.close(), Math.max(remaining, 1_000)),
    },
  ];
  const parts = lifecycle(components, { graceMs: grace, logger });
  parts.start();
  logger.info(
    {
      installation: config.installation,
      redis: target,
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
    logger.info({ graceMs: grace }, 'fleetwatch stopping');
    await parts.stop();
    logger.info({ durationMs: Date.now() - started, polls }, 'fleetwatch stopped');
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

  return {
    stop,
    stopped,
    runner,
    counters,
    metrics,
    reload: (trigger: ReloadTrigger = 'signal') => reloader.reload(trigger),
    get refused() {
      return refused;
    },
    get failed() {
      return failed;
    },
    get config() {
      return reloader.config;
    },
    ...(http ? { http } : {}),
  };
}

/** `shardCountProblem`, asked again (with back-off) while Redis does not answer. */
async function checkShardCount(
  redis: RedisClient,
  prefix: string,
  shards: number,
  logger: Logger,
): Promise<string | undefined> {
  for (let failures = 1; ; failures += 1) {
    try {
      return await shardCountProblem(redis, prefix, shards);
    } catch (error) {
      if (redis.status === 'end') throw error;
      logger.warn(
        { err: (error as Error).message },
        'cannot read the store marker to check redis.shards; retrying',
      );
      await delay(retryDelay(failures));
    }
  }
}

/** Starts a worker built with `autorun: false`, as BullMQ's autorun would. */
function runWorker(worker: Worker): void {
  worker.run().catch((error: unknown) => worker.emit('error', error as Error));
}
