import type { Logger } from 'pino';
import type { FleetEvent } from '../../events/types.js';
import type { RedisClient } from '../../lib/redis-connection.js';
import type { PreparedReload } from '../../lib/reload.js';
import { SnapshotStore } from '../../store/snapshot-store.js';
import {
  Flusher,
  type FlusherHooks,
  type FlusherOptions,
  type GroupContext,
} from '../aggregation/flusher.js';
import { DEFAULT_WAKE_POLICY, type WakePolicy } from '../aggregation/group-record.js';
import { GroupStore } from '../aggregation/group-store.js';
import type { NotificationsConfig } from '../config.js';
import { createDeliveryQueue, type DeliveryQueue } from '../delivery/delivery-queue.js';
import { FiringIncidents } from '../muting/firing-incidents.js';
import { compileInhibitRules } from '../muting/inhibition.js';
import { compileMaintenance } from '../muting/maintenance.js';
import { MuteMarks } from '../muting/mute-marks.js';
import { Mutes, type SnapshotReader } from '../muting/mutes.js';
import { SilenceStore } from '../muting/silence-store.js';
import type { ReceiverConfig } from '../receivers/kinds.js';
import { compileEntityTags, type TagsFor } from '../routing/entity-tags.js';
import { compileRoutes } from '../routing/router.js';
import { Dispatcher, type DispatchHooks, type DispatchResult } from './dispatcher.js';

/**
 * The notification step as the daemon runs it, built from the config: routes, entity tags,
 * maintenance windows and inhibition rules compiled once; the group store, silence store,
 * incidents, mute marks, dispatcher and flusher on the daemon's producer connection; one delivery
 * queue per configured receiver. The daemon hands every `events` job to `dispatch` (with the
 * order gate), calls `start` once, and `stop` after the events worker has closed.
 *
 * A reload (`prepareReload`) compiles the new routes, tags, maintenance windows and inhibition
 * rules, then swaps them in one synchronous step (the dispatcher's routing and the groups'
 * muting together). Groups already in Redis keep their receiver and timing: a group of a route
 * that is gone still flushes what it holds, to its receiver while that is configured. A receiver
 * added gets its delivery queue; a removed one's queue object is closed (its jobs stay in Redis,
 * for its worker if it comes back) and a notification for it is dropped at hand-off, as after a
 * restart without it.
 */

export interface NotificationStepTuning {
  policy?: Partial<WakePolicy>;
  flusher?: Pick<FlusherOptions, 'pollMs' | 'leaseMs' | 'batchSize' | 'concurrency'>;
  /** How long silences read from Redis are reused; 2 s by default. */
  silenceCacheMs?: number;
}

/** The `notifications:` section; without `inhibit_rules` nothing is inhibited. */
export type NotificationStepSection = Omit<NotificationsConfig, 'inhibit_rules' | 'inhibit_max_wait'> &
  Partial<Pick<NotificationsConfig, 'inhibit_rules' | 'inhibit_max_wait'>>;

/** The sections the step is built from (and reloaded with). */
export interface NotificationStepConfig {
  notifications: NotificationStepSection;
  receivers: readonly Pick<ReceiverConfig, 'name'>[];
}

export interface NotificationStepOptions extends NotificationStepTuning {
  config: NotificationStepConfig;
  /**
   * The snapshots, which the inhibition wait reads (muting/mutes.ts); by default a reader on
   * `redis`.
   */
  snapshots?: SnapshotReader;
  /** A producer connection; not closed by the step. */
  redis: RedisClient;
  prefix: string;
  logger?: Logger;
  now?: () => number;
  hooks?: DispatchHooks & FlusherHooks;
}

/**
 * Who is muted now (silences, maintenance windows, inhibition rules), built from the config. The
 * notification step uses it, and so does whoever must say whether an incident is muted right now
 * (src/incidents), so both answer the same.
 */
export function createMutes(options: {
  notifications: NotificationStepSection;
  redis: RedisClient;
  prefix: string;
  logger?: Logger;
  cacheMs?: number;
  tagsFor?: TagsFor;
  silences?: SilenceStore;
  incidents?: FiringIncidents;
  /** What the inhibition wait reads; by default a reader on `redis`. */
  snapshots?: SnapshotReader;
}): Mutes {
  const { notifications, redis, prefix, logger } = options;
  return new Mutes({
    silences: options.silences ?? new SilenceStore({ redis, prefix }),
    maintenance: compileMaintenance(notifications.maintenance),
    inhibition: {
      rules: compileInhibitRules(notifications.inhibit_rules ?? []),
      incidents: options.incidents ?? new FiringIncidents({ redis, prefix }),
      snapshots: options.snapshots ?? new SnapshotStore({ redis, prefix, installation: 'notifications' }),
      maxWaitMs: notifications.inhibit_max_wait ?? 0,
    },
    tagsFor: options.tagsFor ?? compileEntityTags(notifications.entity_tags),
    ...(options.cacheMs === undefined ? {} : { cacheMs: options.cacheMs }),
    ...(logger ? { logger } : {}),
  });
}

export interface NotificationStep {
  readonly dispatcher: Dispatcher;
  readonly flusher: Flusher;
  readonly groups: GroupStore;
  readonly silences: SilenceStore;
  readonly mutes: Mutes;
  readonly marks: MuteMarks;
  readonly queues: ReadonlyMap<string, DeliveryQueue>;
  /**
   * `Dispatcher.dispatch`, gate included: the events worker passes its order check as `gate`, and
   * an event the gate holds back must not reach a group (Guarantee 6). A wrapper that drops the
   * argument still type-checks and dispatches every event the moment its job runs, ahead of the
   * earlier events of its subject it should wait for (gated-dispatch.test.ts).
   */
  dispatch(event: FleetEvent, gate?: Promise<boolean>): Promise<DispatchResult>;
  /** Builds the step's part of a reload (routing, muting, queues); `commit` puts it in force. */
  prepareReload(config: NotificationStepConfig): PreparedReload;
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
  const incidents = new FiringIncidents({ redis, prefix });
  const marks = new MuteMarks({ redis, prefix });
  // Silences and the recorded incidents are read from Redis: one store each, whatever reloads.
  const mutesFor = (notifications: NotificationStepSection, tags: TagsFor) =>
    createMutes({
      notifications,
      redis,
      prefix,
      tagsFor: tags,
      silences,
      incidents,
      ...(options.snapshots ? { snapshots: options.snapshots } : {}),
      ...(options.silenceCacheMs === undefined ? {} : { cacheMs: options.silenceCacheMs }),
      ...(logger ? { logger } : {}),
    });
  const mutes = mutesFor(config.notifications, tagsFor);
  const queueFor = (receiver: string) =>
    createDeliveryQueue({ receiver, connection: redis, prefix, ...(logger ? { logger } : {}) });
  const queues = new Map<string, DeliveryQueue>(
    config.receivers.map((receiver) => [receiver.name, queueFor(receiver.name)]),
  );
  const hooks = options.hooks ?? {};
  const context: GroupContext = { store: groups, mutes, policy, now, incidents, marks };
  const flusher = new Flusher({
    groups: context,
    queues,
    hooks,
    ...options.flusher,
    ...(logger ? { logger } : {}),
  });
  const dispatcher = new Dispatcher({
    groups: context,
    router: compileRoutes(config.notifications.route),
    tagsFor,
    hooks: {
      onSuppressed: (suppressed) => hooks.onSuppressed?.(suppressed),
      onScheduled: (wakeAt, groupKey) => {
        flusher.hint(wakeAt, groupKey);
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
    mutes,
    marks,
    queues,
    dispatch: (event, gate) => dispatcher.dispatch(event, gate),
    prepareReload(next) {
      const nextTags = compileEntityTags(next.notifications.entity_tags);
      const routing = { router: compileRoutes(next.notifications.route), tagsFor: nextTags };
      const nextMutes = mutesFor(next.notifications, nextTags);
      const names = new Set(next.receivers.map((receiver) => receiver.name));
      return {
        async commit() {
          // One synchronous step: a dispatch begins with the old set or the new one.
          dispatcher.use(routing);
          context.mutes = nextMutes;
          for (const name of names) if (!queues.has(name)) queues.set(name, queueFor(name));
          const removed = [...queues].filter(([name]) => !names.has(name));
          for (const [name] of removed) queues.delete(name);
          await Promise.allSettled(removed.map(([, queue]) => queue.close()));
        },
      };
    },
    start: () => flusher.start(),
    async stop() {
      await flusher.stop();
      await Promise.allSettled([...queues.values()].map((queue) => queue.close()));
    },
  };
}
