import type { Logger } from 'pino';
import {
  closeQuietly,
  createWorkerConnection,
  type RedisClient,
  redisEndpoint,
} from '../../lib/redis-connection.js';
import type { PreparedReload } from '../../lib/reload.js';
import type { RetryPolicyOverrides } from '../../lib/retry-policy.js';
import { secrets as processSecrets, type SecretRegistry } from '../../log/secrets.js';
import { deliveryKeys } from '../../store/keys.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';
import type { Notifier, NotifierDeps } from '../notifier.js';
import { factoryOf, type ReceiverConfig, retryPolicyFor } from '../receivers/kinds.js';
import { DeliveredMarkers } from './delivered-markers.js';
import { type DeliveryHook, DeliveryWorker, type DeliveryWorkerTuning } from './delivery-worker.js';
import { DisabledReceivers } from './disabled-receivers.js';
import { ReceiverHolds } from './holds.js';

/**
 * Delivery as the daemon runs it: one `DeliveryWorker` per configured receiver, each with the
 * receiver's notifier (built by its kind's factory, secrets registered) and retry policy, all on
 * one worker connection of their own. `stop(graceMs)` lets deliveries under way finish within the
 * grace, then aborts them, and closes the notifiers and the connection.
 *
 * A reload (`prepareReload`) builds the notifiers of the receivers added or changed, then starts
 * a worker for each added one, replaces each changed one (the old worker finishes the delivery
 * under way within the grace, then the new one takes the queue: one in flight per receiver
 * throughout) and stops each removed one the same way. A removed receiver's queue is left as it
 * is: its notifications wait there, and a worker picks them up when the receiver comes back.
 */

export interface DeliveryServiceOptions {
  config: {
    receivers: readonly ReceiverConfig[];
    redis: { url: string; cluster?: { nodes: readonly string[] } | undefined; prefix: string };
    /** `console.url`, for links in messages; absent in a config of no console. */
    console?: { url?: string | undefined };
  };
  logger: Logger;
  /** Where `monitor.receiver.disabled` is committed (the daemon's store). */
  store: SnapshotStore;
  secrets?: SecretRegistry;
  retry?: RetryPolicyOverrides;
  tuning?: DeliveryWorkerTuning;
  onOutcome?: DeliveryHook;
  /** Builds a receiver's notifier; by default its kind's factory. */
  createNotifier?: (receiver: ReceiverConfig, deps: NotifierDeps) => Notifier;
}

export interface DeliveryService {
  /** By receiver name. */
  readonly workers: ReadonlyMap<string, DeliveryWorker>;
  /** Resolves once every worker runs. */
  readonly ready: Promise<void>;
  /**
   * Builds the change to `config`'s receivers; `commit` starts, replaces and stops workers, each
   * stopped one getting `graceMs` for the delivery under way.
   */
  prepareReload(
    config: Pick<DeliveryServiceOptions['config'], 'receivers' | 'console'>,
    graceMs: number,
  ): PreparedReload;
  stop(graceMs: number): Promise<void>;
}

function defaultNotifier(receiver: ReceiverConfig, deps: NotifierDeps): Notifier {
  return factoryOf(receiver).create(receiver, deps);
}

/**
 * What every delivery worker of a process shares besides its connection: the receivers' disabled
 * flags, their holds and the delivered markers, on that connection.
 */
export function deliveryState(options: { connection: RedisClient; prefix: string; store: SnapshotStore }): {
  disabledReceivers: DisabledReceivers;
  holds: ReceiverHolds;
  markers: DeliveredMarkers;
} {
  const { connection, prefix, store } = options;
  return {
    disabledReceivers: new DisabledReceivers({ redis: connection, prefix, store }),
    holds: new ReceiverHolds({ redis: connection, prefix }),
    markers: new DeliveredMarkers({ redis: connection, prefix }),
  };
}

export function startDelivery(options: DeliveryServiceOptions): DeliveryService {
  const { config, logger, store } = options;
  const secrets = options.secrets ?? processSecrets;
  const build = options.createNotifier ?? defaultNotifier;
  const prefix = config.redis.prefix;
  const workers = new Map<string, DeliveryWorker>();
  const notifiers = new Map<DeliveryWorker, Notifier>();
  /** What each running worker was built from (receiver and console URL), to tell a change. */
  const builtFrom = new Map<string, string>();
  let shared: { connection: RedisClient; state: ReturnType<typeof deliveryState> } | undefined;
  // Made with the first receiver (at start, or the first one a reload adds).
  const connect = () => {
    if (!shared) {
      const connection = createWorkerConnection(redisEndpoint(config.redis), {
        name: 'delivery-worker',
        logger,
      });
      shared = { connection, state: deliveryState({ connection, prefix, store }) };
    }
    return shared;
  };
  const identity = (receiver: ReceiverConfig, consoleUrl: string | undefined) =>
    JSON.stringify({ receiver, consoleUrl });
  const notifierFor = (receiver: ReceiverConfig, consoleUrl: string | undefined) =>
    build(receiver, {
      logger,
      secrets,
      ...(consoleUrl === undefined ? {} : { consoleUrl }),
      // A kind that keeps state of its own (Alertmanager's re-sent alerts) keeps it here.
      redis: {
        connection: connect().connection,
        key: deliveryKeys(prefix).receiverState(receiver.kind, receiver.name),
      },
    });

  const run = (receiver: ReceiverConfig, notifier: Notifier, consoleUrl: string | undefined) => {
    const { connection, state } = connect();
    const policy = retryPolicyFor(receiver, options.retry);
    const worker = new DeliveryWorker({
      receiver: { name: receiver.name, kind: receiver.kind },
      notifier,
      policy,
      connection,
      prefix,
      disabledReceivers: state.disabledReceivers,
      markers: state.markers,
      holds: state.holds,
      maxHoldMs: receiver.max_hold,
      secrets,
      logger,
      ...(options.onOutcome ? { onOutcome: options.onOutcome } : {}),
      ...(options.tuning ? { tuning: options.tuning } : {}),
    });
    workers.set(receiver.name, worker);
    notifiers.set(worker, notifier);
    builtFrom.set(receiver.name, identity(receiver, consoleUrl));
    logger.debug(
      {
        receiver: receiver.name,
        kind: receiver.kind,
        retry: policy.description,
        maxHoldMs: receiver.max_hold,
      },
      'delivery',
    );
    return worker;
  };

  /** Lets the delivery under way finish within `graceMs`, then closes the worker's notifier. */
  const retire = async (worker: DeliveryWorker, graceMs: number) => {
    await worker.close(graceMs);
    await notifiers
      .get(worker)
      ?.close?.()
      .catch(() => {});
    notifiers.delete(worker);
  };

  const consoleUrl = config.console?.url;
  for (const receiver of config.receivers) run(receiver, notifierFor(receiver, consoleUrl), consoleUrl);
  if (workers.size > 0) logger.info({ receivers: [...workers.keys()] }, 'delivering notifications');

  const ready = Promise.all([...workers.values()].map((worker) => worker.ready)).then(() => {});
  ready.catch(() => {});

  let stopping: Promise<void> | undefined;
  async function stop(graceMs: number): Promise<void> {
    await Promise.all([...workers.values()].map((worker) => retire(worker, graceMs)));
    await closeQuietly(shared?.connection);
  }

  function prepareReload(
    next: Pick<DeliveryServiceOptions['config'], 'receivers' | 'console'>,
    graceMs: number,
  ): PreparedReload {
    const nextUrl = next.console?.url;
    const names = new Set(next.receivers.map((receiver) => receiver.name));
    const removed = [...workers.keys()].filter((name) => !names.has(name));
    // Added or changed: their notifiers are built now, so a receiver that cannot be built changes nothing.
    const built = next.receivers
      .filter((receiver) => builtFrom.get(receiver.name) !== identity(receiver, nextUrl))
      .map((receiver) => ({ receiver, notifier: notifierFor(receiver, nextUrl) }));
    return {
      async commit() {
        if (stopping)
          return void (await Promise.all(built.map(({ notifier }) => notifier.close?.().catch(() => {}))));
        const swaps = built.map(async ({ receiver, notifier }) => {
          const old = workers.get(receiver.name);
          if (old) await retire(old, graceMs);
          // Stopped meanwhile (shutdown): no worker may start after `stop` looked.
          if (stopping) return void (await notifier.close?.().catch(() => {}));
          await run(receiver, notifier, nextUrl).ready.catch(() => {});
        });
        const stops = removed.map(async (name) => {
          const worker = workers.get(name);
          workers.delete(name);
          builtFrom.delete(name);
          if (worker) await retire(worker, graceMs);
        });
        await Promise.all([...swaps, ...stops]);
        logger.info(
          {
            receivers: [...workers.keys()],
            started: built.map(({ receiver }) => receiver.name),
            stopped: removed,
          },
          'delivering notifications',
        );
      },
      async discard() {
        await Promise.all(built.map(({ notifier }) => notifier.close?.().catch(() => {})));
      },
    };
  }

  return {
    workers,
    ready,
    prepareReload,
    stop: (graceMs) => {
      stopping ??= stop(graceMs);
      return stopping;
    },
  };
}
