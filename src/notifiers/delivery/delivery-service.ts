import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { secrets as processSecrets, type SecretRegistry } from '../../log/secrets.js';
import { closeQuietly, createWorkerConnection } from '../../queues/connection.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';
import { factoryFor, type ReceiverConfig } from '../registry.js';
import type { Notifier } from '../types.js';
import { DeliveredMarkers } from './delivered-markers.js';
import { type DeliveryHook, DeliveryWorker, type DeliveryWorkerTuning } from './delivery-worker.js';
import { ReceiverSwitch } from './receiver-switch.js';
import { type RetryPolicyOverrides, retryPolicyFor } from './retry-policy.js';

/**
 * Delivery as the daemon runs it: one `DeliveryWorker` per configured receiver, each with the
 * receiver's notifier (built by its kind's factory, secrets registered) and retry policy, all on
 * one worker connection of their own. `stop(graceMs)` lets deliveries under way finish within the
 * grace, then aborts them, and closes the notifiers and the connection.
 */

export interface DeliveryServiceOptions {
  config: { receivers: readonly ReceiverConfig[]; redis: { url: string; prefix: string } };
  logger: Logger;
  /** Where `monitor.receiver.disabled` is committed (the daemon's store). */
  store: SnapshotStore;
  secrets?: SecretRegistry;
  retry?: RetryPolicyOverrides;
  tuning?: DeliveryWorkerTuning;
  onOutcome?: DeliveryHook;
  /** Builds a receiver's notifier; by default its kind's factory. */
  createNotifier?: (receiver: ReceiverConfig, deps: { logger: Logger; secrets: SecretRegistry }) => Notifier;
}

export interface DeliveryService {
  /** By receiver name. */
  readonly workers: ReadonlyMap<string, DeliveryWorker>;
  /** Resolves once every worker runs. */
  readonly ready: Promise<void>;
  stop(graceMs: number): Promise<void>;
}

function defaultNotifier(
  receiver: ReceiverConfig,
  deps: { logger: Logger; secrets: SecretRegistry },
): Notifier {
  const factory = factoryFor(receiver.kind);
  if (!factory) throw new Error(`receiver ${receiver.name}: no notifier for kind "${receiver.kind}"`);
  return factory.create(receiver, deps);
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
    const switches = new ReceiverSwitch({ redis: connection, prefix, store });
    const markers = new DeliveredMarkers({ redis: connection, prefix });
    const build = options.createNotifier ?? defaultNotifier;
    for (const receiver of config.receivers) {
      const notifier = build(receiver, { logger, secrets });
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
          switches,
          markers,
          secrets,
          logger,
          ...(options.onOutcome ? { onOutcome: options.onOutcome } : {}),
          ...(options.tuning ? { tuning: options.tuning } : {}),
        }),
      );
      logger.debug({ receiver: receiver.name, kind: receiver.kind, retry: policy.description }, 'delivery');
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
