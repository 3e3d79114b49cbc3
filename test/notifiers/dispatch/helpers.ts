import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { catalogueEntry, isFleetEventType } from '../../../src/events/catalogue.js';
import type { EventData, FleetEvent } from '../../../src/events/types.js';
import {
  closeQuietly,
  createProducerConnection,
  createWorkerConnection,
  waitForReady,
} from '../../../src/lib/redis-connection.js';
import { SecretRegistry } from '../../../src/log/secrets.js';
import type { DeliveryJobData } from '../../../src/notifiers/delivery/delivery-queue.js';
import {
  createNotificationStep,
  type NotificationStep,
  type NotificationStepOptions,
} from '../../../src/notifiers/dispatch/notification-step.js';
import type { InhibitRuleConfig, MaintenanceConfig } from '../../../src/notifiers/muting/config.js';
import type { Notification } from '../../../src/notifiers/notifier.js';
import {
  type SlackReceiverConfig,
  slackNotifierFactory,
} from '../../../src/notifiers/receivers/slack/index.js';
import type { EntityTagConfig, RootRouteConfig } from '../../../src/notifiers/routing/config.js';
import { notifyQueueName } from '../../../src/queues/names.js';
import { bullPrefix } from '../../../src/store/keys.js';
import type { SnapshotStore } from '../../../src/store/snapshot-store.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../../support/redis.js';
import { type ReceivedPost, SlackStandin } from '../../support/slack-standin.js';

/**
 * A notification step against a real Redis (unique prefix) and a Slack stand-in. Delivery is a
 * tiny BullMQ worker on `notify-ops` that calls `SlackNotifier.deliver`, so these tests depend on
 * the delivery queue contract only, not on the delivery workers' retry machinery.
 */

export const RECEIVER = 'ops';

/** A root route in parsed form (milliseconds), short enough for tests. */
export function route(over: Partial<RootRouteConfig> = {}): RootRouteConfig {
  return {
    receiver: RECEIVER,
    group_by: ['type'],
    group_wait: 200,
    group_interval: 500,
    repeat_interval: 3_600_000,
    send_resolved: true,
    routes: [],
    ...over,
  };
}

let counter = 0;

export function fleetEvent(
  type: string,
  subject: string,
  data: Partial<EventData> = {},
  id?: string,
): FleetEvent {
  counter += 1;
  const severity = isFleetEventType(type) ? catalogueEntry(type).severity : 'info';
  return {
    specversion: '1.0',
    id: id ?? `evt-${process.pid}-${counter}`,
    source: 'fleetwatch/test',
    type,
    subject,
    time: new Date().toISOString(),
    datacontenttype: 'application/json',
    data: { severity, ...data },
  };
}

export const vpnLost = (vehicle: string): FleetEvent =>
  fleetEvent('vehicle.vpn.disconnected', `vehicle/${vehicle}`, {
    previous: 'connected',
    current: 'disconnected',
  });

export const vpnBack = (vehicle: string, durationMs: number): FleetEvent =>
  fleetEvent('vehicle.vpn.connected', `vehicle/${vehicle}`, {
    previous: 'disconnected',
    current: 'connected',
    durationMs,
  });

export interface ReplicaOptions extends Partial<Pick<NotificationStepOptions, 'hooks' | 'policy' | 'now'>> {
  route?: RootRouteConfig | undefined;
  entityTags?: EntityTagConfig[];
  maintenance?: MaintenanceConfig[];
  /** Inhibition rules (default: none) and how long the hold may last (default 0: no hold). */
  inhibitRules?: InhibitRuleConfig[];
  inhibitMaxWait?: number;
  /** Start the flusher (default true). */
  start?: boolean;
}

export interface Replica extends NotificationStep {
  redis: Redis;
}

export interface Rig {
  prefix: string;
  admin: Redis;
  standin: SlackStandin;
  /** Every notification the delivery worker delivered, in delivery order. */
  delivered: Notification[];
  replica(options?: ReplicaOptions): Promise<Replica>;
  /** Slack posts so far (the `text` fallback of each). */
  texts(): string[];
  posts(): ReceivedPost[];
  close(): Promise<void>;
}

export async function startRig(prefix = uniquePrefix()): Promise<Rig> {
  const admin = connect();
  const standin = await SlackStandin.start();
  const config: SlackReceiverConfig = slackNotifierFactory.configSchema.parse({
    kind: 'slack',
    name: RECEIVER,
    url: standin.url,
  });
  const logger = pino({ enabled: false });
  const slack = slackNotifierFactory.create(config, { logger, secrets: new SecretRegistry() });
  const delivered: Notification[] = [];
  const workerConnection = createWorkerConnection(redisUrl(), { name: 'test-delivery' });
  const worker = new Worker<DeliveryJobData>(
    notifyQueueName(RECEIVER),
    async (job) => {
      const outcome = await slack.deliver(job.data.notification, { attempt: job.attemptsMade + 1 });
      if (outcome.kind !== 'delivered') throw new Error(`slack: ${outcome.kind}`);
      delivered.push(job.data.notification);
    },
    { connection: workerConnection, prefix: bullPrefix(prefix), concurrency: 1 },
  );
  worker.on('error', () => {});
  const replicas: Replica[] = [];

  return {
    prefix,
    admin,
    standin,
    delivered,
    async replica(options = {}) {
      const redis = createProducerConnection(redisUrl(), { name: 'test-notify-replica' });
      await waitForReady(redis, { timeoutMs: 5_000 });
      const step = createNotificationStep({
        config: {
          notifications: {
            route: 'route' in options ? options.route : route(),
            entity_tags: options.entityTags ?? [],
            maintenance: options.maintenance ?? [],
            ...(options.inhibitRules ? { inhibit_rules: options.inhibitRules } : {}),
            ...(options.inhibitMaxWait === undefined ? {} : { inhibit_max_wait: options.inhibitMaxWait }),
          },
          receivers: [{ ...config }],
        },
        redis,
        prefix,
        logger,
        policy: { handOffRetryMs: 200, redeliveryMs: 0, ...options.policy },
        flusher: { pollMs: 50, leaseMs: 5_000 },
        silenceCacheMs: 0,
        ...(options.hooks ? { hooks: options.hooks } : {}),
        ...(options.now ? { now: options.now } : {}),
      });
      const replica: Replica = Object.assign(step, { redis });
      replicas.push(replica);
      if (options.start !== false) replica.start();
      return replica;
    },
    texts: () => standin.received.map((post) => String((post.payload as { text?: unknown }).text)),
    posts: () => standin.received,
    async close() {
      await Promise.all(replicas.map((replica) => replica.stop()));
      await worker.close();
      await slack.close?.();
      await standin.close();
      await deletePrefixKeys(admin, prefix);
      await closeQuietly([...replicas.map((replica) => replica.redis), workerConnection, admin]);
    },
  };
}

/** Shuffled copy (deterministic enough for a test: seeded by the array length). */
export function shuffled<T>(items: readonly T[], seed = items.length): T[] {
  const out = [...items];
  let state = seed * 2_654_435_761;
  for (let index = out.length - 1; index > 0; index -= 1) {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    const other = state % (index + 1);
    [out[index], out[other]] = [out[other] as T, out[index] as T];
  }
  return out;
}

/** Commits `count` lease changes of robot `id` (one version each), in order; returns their events. */
export async function commitChain(store: SnapshotStore, id: string, count: number): Promise<FleetEvent[]> {
  const events: FleetEvent[] = [];
  for (let version = 0; version < count; version += 1) {
    const result = await store.commit(
      { kind: 'robot', id, facet: 'lease' },
      version,
      {
        state: { holder: `op-${version + 1}` },
        observedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, version)).toISOString(),
      },
      [
        {
          type: 'robot.lease.changed',
          data: { severity: 'info', previous: `op-${version}`, current: `op-${version + 1}` },
        },
      ],
    );
    if (!result.committed) throw new Error(`commit ${version} refused`);
    events.push(...result.events);
  }
  return events;
}
