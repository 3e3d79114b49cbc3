import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { closeQuietly, createWorkerConnection } from '../../lib/redis-connection.js';
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
 */

export interface DeliveryServiceOptions {
  config: {
    receivers: readonly ReceiverConfig[];
    redis: { url: string; prefix: string };
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
  stop(graceMs: number): Promise<void>;
}

function defaultNotifier(receiver: ReceiverConfig, deps: NotifierDeps): Notifier {
  return factoryOf(receiver).create(receiver, deps);
}

/**
 * What every delivery worker of a process shares besides its connection: the receivers' disabled
 * flags, their holds and the delivered markers, on that connection.
 */
export function deliveryState(options: { connection: Redis; prefix: string; store: SnapshotStore }): {
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
  const workers = new Map<string, DeliveryWorker>();
  const notifiers: Notifier[] = [];
  let connection: Redis | undefined;

  if (config.receivers.length > 0) {
    connection = createWorkerConnection(config.redis.url, { name: 'delivery-worker', logger });
    const prefix = config.redis.prefix;
    const { disabledReceivers, holds, markers } = deliveryState({ connection, prefix, store });
    const build = options.createNotifier ?? defaultNotifier;
    for (const receiver of config.receivers) {
      const notifier = build(receiver, {
        logger,
        secrets,
        ...(config.console?.url === undefined ? {} : { consoleUrl: config.console.url }),
        // A kind that keeps state of its own (Alertmanager's re-sent alerts) keeps it here.
        redis: { connection, key: deliveryKeys(prefix).receiverState(receiver.kind, receiver.name) },
      });
      notifiers.push(notifier);
      const policy = retryPolicyFor(receiver, options.retry);
      workers.set(
        receiver.name,
        new DeliveryWorker({
          receiver: { name: receiver.name, kind: receiver.kind },
          notifier,
          policy,
          connection,
          prefix,
          disabledReceivers,
          markers,
          holds,
          maxHoldMs: receiver.max_hold,
          secrets,
          logger,
          ...(options.onOutcome ? { onOutcome: options.onOutcome } : {}),
          ...(options.tuning ? { tuning: options.tuning } : {}),
        }),
      );
      logger.debug(
        {
          receiver: receiver.name,
          kind: receiver.kind,
          retry: policy.description,
          maxHoldMs: receiver.max_hold,
        },
        'delivery',
      );
    }
    logger.info({ receivers: [...workers.keys()] }, 'delivering notifications');
  }

  const ready = Promise.all([...workers.values()].map((worker) => worker.ready)).then(() => {});
  ready.catch(() => {});

  let stopping: Promise<void> | undefined;
  async function stop(graceMs: number): Promise<void> {
    await Promise.all([...workers.values()].map((worker) => worker.close(graceMs)));
    await Promise.all(notifiers.map((notifier) => notifier.close?.().catch(() => {})));
    await closeQuietly(connection);
  }

  return {
    workers,
    ready,
    stop: (graceMs) => {
      stopping ??= stop(graceMs);
      return stopping;
    },
  };
}
