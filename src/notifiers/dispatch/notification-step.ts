import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../../config/schema.js';
import type { FleetEvent } from '../../events/types.js';
import { createDeliveryQueue, type DeliveryQueue } from '../delivery/delivery-queue.js';
import { compileEntityTags } from '../routing/entity-tags.js';
import { compileMaintenance } from '../routing/maintenance.js';
import { compileRoutes } from '../routing/router.js';
import { Dispatcher, type DispatchHooks, type DispatchResult } from './dispatcher.js';
import { Flusher, type FlusherHooks, type FlusherOptions } from './flusher.js';
import { DEFAULT_WAKE_POLICY, type WakePolicy } from './group-record.js';
import { GroupStore } from './group-store.js';
import { Mutes } from './mutes.js';
import { SilenceStore } from './silence-store.js';

/**
 * The notification step as the daemon runs it, built from the config: routes, entity tags and
 * maintenance windows compiled once; the group store, silence store, dispatcher and flusher on the
 * daemon's producer connection; one delivery queue per configured receiver. The daemon hands every
 * `events` job to `dispatch`, calls `start` once, and `stop` after the events worker has closed.
 */

export interface NotificationStepTuning {
  policy?: Partial<WakePolicy>;
  flusher?: Pick<FlusherOptions, 'pollMs' | 'leaseMs' | 'batchSize' | 'concurrency'>;
  /** How long silences read from Redis are reused; 2 s by default. */
  silenceCacheMs?: number;
}

export interface NotificationStepOptions extends NotificationStepTuning {
  config: Pick<Config, 'notifications' | 'receivers'>;
  /** A producer connection; not closed by the step. */
  redis: Redis;
  prefix: string;
  logger?: Logger;
  now?: () => number;
  hooks?: DispatchHooks & FlusherHooks;
}

export interface NotificationStep {
  readonly dispatcher: Dispatcher;
  readonly flusher: Flusher;
  readonly groups: GroupStore;
  readonly silences: SilenceStore;
  readonly queues: ReadonlyMap<string, DeliveryQueue>;
  dispatch(event: FleetEvent): Promise<DispatchResult>;
  start(): void;
  /** Stops the flusher (after its hand-off under way) and closes the delivery queues. */
  stop(): Promise<void>;
}

export function createNotificationStep(options: NotificationStepOptions): NotificationStep {
  const { config, redis, prefix, logger } = options;
  const now = options.now ?? Date.now;
  const policy: WakePolicy = { ...DEFAULT_WAKE_POLICY, ...options.policy };
  const tagsFor = compileEntityTags(config.notifications.entity_tags);
  const groups = new GroupStore({ redis, prefix });
  const silences = new SilenceStore({ redis, prefix });
  const mutes = new Mutes({
    silences,
    maintenance: compileMaintenance(config.notifications.maintenance),
    tagsFor,
    ...(options.silenceCacheMs === undefined ? {} : { cacheMs: options.silenceCacheMs }),
    ...(logger ? { logger } : {}),
  });
  const queues = new Map<string, DeliveryQueue>(
    config.receivers.map((receiver) => [
      receiver.name,
      createDeliveryQueue({
        receiver: receiver.name,
        connection: redis,
        prefix,
        ...(logger ? { logger } : {}),
      }),
    ]),
  );
  const hooks = options.hooks ?? {};
  const flusher = new Flusher({
    store: groups,
    mutes,
    queues,
    policy,
    now,
    hooks,
    ...options.flusher,
    ...(logger ? { logger } : {}),
  });
  const dispatcher = new Dispatcher({
    store: groups,
    router: compileRoutes(config.notifications.route),
    tagsFor,
    mutes,
    policy,
    now,
    hooks: {
      onSuppressed: (suppressed) => hooks.onSuppressed?.(suppressed),
      onScheduled: (wakeAt, groupKey) => {
        flusher.hint(wakeAt);
        hooks.onScheduled?.(wakeAt, groupKey);
      },
    },
    ...(logger ? { logger } : {}),
  });
  return {
    dispatcher,
    flusher,
    groups,
    silences,
    queues,
    dispatch: (event) => dispatcher.dispatch(event),
    start: () => flusher.start(),
    async stop() {
      await flusher.stop();
      await Promise.allSettled([...queues.values()].map((queue) => queue.close()));
    },
  };
}
