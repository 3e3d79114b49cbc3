import type { Redis } from 'ioredis';
import { pino } from 'pino';
import type { FleetEvent } from '../../../src/events/types.js';
import {
  closeQuietly,
  createProducerConnection,
  createWorkerConnection,
  waitForReady,
} from '../../../src/lib/redis-connection.js';
import type { RetryPolicy } from '../../../src/lib/retry-policy.js';
import { SecretRegistry } from '../../../src/log/secrets.js';
import type {
  DeliveredMarkerStore,
  DeliveredMarkers,
} from '../../../src/notifiers/delivery/delivered-markers.js';
import {
  createDeliveryQueue,
  type DeliveryQueue,
  enqueueDelivery,
} from '../../../src/notifiers/delivery/delivery-queue.js';
import { deliveryState } from '../../../src/notifiers/delivery/delivery-service.js';
import {
  type DeliveryReport,
  type DeliveryResult,
  DeliveryWorker,
  type DeliveryWorkerTuning,
} from '../../../src/notifiers/delivery/delivery-worker.js';
import type { DisabledReceivers } from '../../../src/notifiers/delivery/disabled-receivers.js';
import type { ReceiverHold, ReceiverHolds } from '../../../src/notifiers/delivery/holds.js';
import type { Notification, Notifier } from '../../../src/notifiers/notifier.js';
import { slackNotifierFactory } from '../../../src/notifiers/receivers/slack/index.js';
import { webhookNotifierFactory } from '../../../src/notifiers/receivers/webhook/index.js';
import { EventLog } from '../../../src/store/event-log.js';
import { SnapshotStore } from '../../../src/store/snapshot-store.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../../support/redis.js';
import { waitFor } from '../../support/scenario.js';

/**
 * Delivery against a real Redis (a prefix of its own) and real BullMQ, with notifiers posting to
 * the loopback stand-ins. Jobs are followed through the worker's own `completed` / `failed` events,
 * never by sleeping.
 */

export const silent = pino({ level: 'silent' });

const BASE = Date.parse('2026-03-04T10:00:00.000Z');

export function vpnLost(vehicleId: string, offsetMs = 0): FleetEvent {
  return {
    specversion: '1.0',
    id: `evt-${vehicleId}-${offsetMs}`,
    source: 'fleetwatch/test',
    type: 'vehicle.vpn.disconnected',
    subject: `vehicle/${vehicleId}`,
    time: new Date(BASE + offsetMs).toISOString(),
    datacontenttype: 'application/json',
    data: {
      severity: 'warning',
      vehicleId,
      previous: 'connected',
      current: 'disconnected',
      since: new Date(BASE - 60_000 + offsetMs).toISOString(),
      consecutive: 3,
    },
  };
}

export function notification(id: string, receiver: string, events: FleetEvent[]): Notification {
  return {
    id,
    receiver,
    groupKey: 'type=vehicle.vpn.disconnected',
    groupLabels: { type: 'vehicle.vpn.disconnected' },
    status: 'firing',
    severity: 'warning',
    events,
    createdAt: new Date(BASE + 30_000).toISOString(),
  };
}

export interface Settled {
  state: 'completed' | 'failed';
  result?: DeliveryResult;
  reason?: string;
}

/** Every completion and failure a worker reports, per job id, in order; awaitable. */
export class JobWatch {
  readonly #settled = new Map<string, Settled[]>();
  readonly #waiters: Array<() => void> = [];

  constructor(worker: DeliveryWorker) {
    worker.worker.on('completed', (job, result) => this.#add(job.id ?? '', { state: 'completed', result }));
    worker.worker.on('failed', (job, error) => {
      if (job) this.#add(job.id ?? '', { state: 'failed', reason: error.message });
    });
  }

  /** All settlements of `jobId` so far. */
  of(jobId: string): Settled[] {
    return this.#settled.get(jobId) ?? [];
  }

  /** Resolves with the `n`-th settlement (1-based) of `jobId`. */
  nth(jobId: string, n = 1, timeoutMs = 10_000): Promise<Settled> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.of(jobId)[n - 1];
        if (!found) return false;
        clearTimeout(timer);
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        const index = this.#waiters.indexOf(waiter);
        if (index >= 0) this.#waiters.splice(index, 1);
        reject(new Error(`job ${jobId}: settlement ${n} did not come within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = () => {
        if (check()) this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
      };
      if (!check()) this.#waiters.push(waiter);
    });
  }

  #add(jobId: string, settled: Settled): void {
    this.#settled.set(jobId, [...this.of(jobId), settled]);
    for (const waiter of [...this.#waiters]) waiter();
  }
}

export interface StartOptions {
  name: string;
  /** The receiver's kind, as the delivery worker names it (`slack`, `webhook`, `pagerduty`, …). */
  kind: string;
  notifier: Notifier;
  policy: RetryPolicy;
  tuning?: DeliveryWorkerTuning;
  markers?: DeliveredMarkerStore;
  /** The receiver's max_hold (the default when absent). */
  maxHoldMs?: number;
}

export interface StartedWorker {
  worker: DeliveryWorker;
  watch: JobWatch;
  reports: DeliveryReport[];
}

export class DeliveryHarness {
  readonly prefix = uniquePrefix();
  readonly secrets = new SecretRegistry();
  admin!: Redis;
  /** Worker-style connection shared by the workers. */
  connection!: Redis;
  producer!: Redis;
  store!: SnapshotStore;
  disabledReceivers!: DisabledReceivers;
  holds!: ReceiverHolds;
  markers!: DeliveredMarkers;
  eventLog!: EventLog;
  readonly #workers: DeliveryWorker[] = [];
  readonly #notifiers: Notifier[] = [];
  readonly #queues = new Map<string, DeliveryQueue>();

  async open(): Promise<this> {
    this.admin = connect();
    this.connection = createWorkerConnection(redisUrl(), { name: 'test-delivery' });
    this.producer = createProducerConnection(redisUrl(), { name: 'test-delivery-producer' });
    await waitForReady(this.producer, { timeoutMs: 5_000 });
    this.store = new SnapshotStore({ redis: this.producer, prefix: this.prefix, installation: 'test' });
    // What the daemon's delivery workers share, built as the daemon builds it.
    const shared = deliveryState({ connection: this.connection, prefix: this.prefix, store: this.store });
    this.disabledReceivers = shared.disabledReceivers;
    this.holds = shared.holds;
    this.markers = shared.markers;
    this.eventLog = new EventLog({ redis: this.producer, prefix: this.prefix });
    return this;
  }

  queue(receiver: string): DeliveryQueue {
    let queue = this.#queues.get(receiver);
    if (!queue) {
      queue = createDeliveryQueue({ receiver, connection: this.producer, prefix: this.prefix });
      this.#queues.set(receiver, queue);
    }
    return queue;
  }

  async enqueue(...notifications: Notification[]): Promise<void> {
    for (const item of notifications) await enqueueDelivery(this.queue(item.receiver), item);
  }

  slackNotifier(name: string, url: string, compatible = 'slack'): Notifier {
    const config = slackNotifierFactory.configSchema.parse({
      kind: 'slack',
      name,
      url,
      compatible,
      timeout: '2s',
    });
    return this.#keep(slackNotifierFactory.create(config, { logger: silent, secrets: this.secrets }));
  }

  webhookNotifier(name: string, url: string, secret: string): Notifier {
    const config = webhookNotifierFactory.configSchema.parse({
      kind: 'webhook',
      name,
      url,
      secrets: [secret],
      timeout: '2s',
    });
    return this.#keep(webhookNotifierFactory.create(config, { logger: silent, secrets: this.secrets }));
  }

  async start(options: StartOptions): Promise<StartedWorker> {
    const reports: DeliveryReport[] = [];
    const worker = new DeliveryWorker({
      receiver: { name: options.name, kind: options.kind },
      notifier: options.notifier,
      policy: options.policy,
      connection: this.connection,
      prefix: this.prefix,
      disabledReceivers: this.disabledReceivers,
      markers: options.markers ?? this.markers,
      holds: this.holds,
      ...(options.maxHoldMs === undefined ? {} : { maxHoldMs: options.maxHoldMs }),
      secrets: this.secrets,
      logger: silent,
      onOutcome: (report) => reports.push(report),
      tuning: { errorHoldMs: 50, ...options.tuning },
    });
    this.#workers.push(worker);
    const watch = new JobWatch(worker);
    await worker.ready;
    return { worker, watch, reports };
  }

  /** Resolves with the receiver's hold once one is recorded (the worker writes it after the answer). */
  async held(receiver: string): Promise<ReceiverHold> {
    const hold = await waitFor(
      `a hold of ${receiver} recorded`,
      async () => (await this.holds.status(receiver)) ?? null,
      (found) => (found ? undefined : 'no hold yet'),
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    if (!hold) throw new Error(`no hold of ${receiver}`);
    return hold;
  }

  async receiverEvents(): Promise<FleetEvent[]> {
    const entries = await this.eventLog.range({ type: 'monitor.receiver.*', limit: 1_000 });
    return entries.map((entry) => entry.event);
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.map((worker) => worker.close(1_000)));
    await Promise.all(this.#notifiers.map((notifier) => notifier.close?.()));
    await Promise.all([...this.#queues.values()].map((queue) => queue.close()));
    await deletePrefixKeys(this.admin, this.prefix);
    await closeQuietly([this.connection, this.producer, this.admin]);
  }

  #keep(notifier: Notifier): Notifier {
    this.#notifiers.push(notifier);
    return notifier;
  }
}
