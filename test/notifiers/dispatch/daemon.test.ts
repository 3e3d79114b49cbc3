import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../../../src/daemon/index.js';
import { closeQuietly, createWorkerConnection } from '../../../src/lib/redis-connection.js';
import { SecretRegistry } from '../../../src/log/secrets.js';
import { GroupStore } from '../../../src/notifiers/aggregation/group-store.js';
import { createDeliveryQueue, type DeliveryJobData } from '../../../src/notifiers/delivery/delivery-queue.js';
import type { Notification } from '../../../src/notifiers/notifier.js';
import { slackReceiverSchema } from '../../../src/notifiers/receivers/slack/config.js';
import { SlackNotifier } from '../../../src/notifiers/receivers/slack/slack-notifier.js';
import { notifyQueueName } from '../../../src/queues/names.js';
import { startSimulator } from '../../../src/simulator/index.js';
import type { Simulator } from '../../../src/simulator/types.js';
import { bullPrefix } from '../../../src/store/keys.js';
import { testConfig, VEHICLE_LIST_ONLY } from '../../pollers/harness.js';
import { connect, deletePrefixKeys, eventually, redisUrl, uniquePrefix } from '../../support/redis.js';
import { SlackStandin } from '../../support/slack-standin.js';

/**
 * The whole way: simulator → vehicles poller → snapshot swap + outbox → relay → `events` queue →
 * events worker → dispatcher → group → flusher → `notify-ops` → Slack (stand-in), with two daemon
 * replicas on one Redis. A tiny delivery worker of the test's own competes with the daemon's
 * delivery workers, so the test holds whether or not those deliver.
 */

const VEHICLES = 40;
let sim: Simulator;
let admin: Redis;
let standin: SlackStandin;
const prefix = uniquePrefix();

beforeAll(async () => {
  sim = await startSimulator({ vehicles: VEHICLES, robots: 0, seed: 5, behaviours: false });
  for (const vehicle of sim.control.state().vehicles)
    sim.control.updateVehicle(vehicle.id, { vpnConnected: true });
  admin = connect();
  standin = await SlackStandin.start();
});

afterAll(async () => {
  await standin?.close();
  await sim?.close();
  await deletePrefixKeys(admin, prefix);
  await closeQuietly(admin);
});

describe('the daemon with notifications configured', () => {
  it('turns 40 vehicles losing VPN into one Slack message, across two replicas', async () => {
    const config = testConfig(sim.url, prefix, {
      pollers: VEHICLE_LIST_ONLY,
      receivers: [{ kind: 'slack', name: 'ops', url: standin.url }],
      notifications: {
        route: { receiver: 'ops', group_by: ['type'], group_wait: '1s', group_interval: '1s' },
      },
    });
    const logger = pino({ enabled: false });
    const tuning = { notifications: { flusher: { pollMs: 100 } }, relay: { blockMs: 200 } };
    const daemons: Daemon[] = [
      startDaemon(config, { logger, ...tuning }),
      startDaemon(config, { logger, ...tuning }),
    ];

    const slack = new SlackNotifier(
      slackReceiverSchema.parse({ kind: 'slack', name: 'ops', url: standin.url }),
      {
        logger,
        secrets: new SecretRegistry(),
      },
    );
    const queue = createDeliveryQueue({ receiver: 'ops', connection: admin, prefix });
    const workerConnection = createWorkerConnection(redisUrl(), { name: 'test-delivery' });
    const worker = new Worker<DeliveryJobData>(
      notifyQueueName('ops'),
      async (job) => {
        const outcome = await slack.deliver(job.data.notification, { attempt: job.attemptsMade + 1 });
        if (outcome.kind !== 'delivered') throw new Error(outcome.kind);
      },
      { connection: workerConnection, prefix: bullPrefix(prefix) },
    );
    worker.on('error', () => {});
    try {
      // Baseline learnt for every vehicle (the first list notifies nothing).
      const last = `veh-${String(VEHICLES).padStart(4, '0')}`;
      await eventually(
        () => admin.exists(`{${prefix}}:snap:vehicle:${last}:link`),
        (n) => n === 1,
      );
      for (const vehicle of sim.control.state().vehicles)
        sim.control.updateVehicle(vehicle.id, { vpnConnected: false });

      await standin.waitFor(1, 15_000);
      // The daemon's own delivery workers and this test's worker compete for the job: read it
      // from the queue, whoever delivered it.
      const jobs = await eventually(
        () => queue.getJobs(['completed']),
        (list) => list.length >= 1,
      );
      const notification: Notification | undefined = jobs[0]?.data.notification;
      const groups = new GroupStore({ redis: admin, prefix });
      // Settled: the group holds nothing more to send, so this stays the only message.
      await eventually(
        () => groups.get(notification?.groupKey ?? ''),
        (record) => record !== undefined && record.state.pending.length === 0 && record.outgoing.length === 0,
      );
      expect(standin.received).toHaveLength(1);
      expect(await queue.getJobCounts('completed', 'waiting', 'active', 'delayed')).toEqual({
        completed: 1,
        waiting: 0,
        active: 0,
        delayed: 0,
      });
      expect(notification?.events).toHaveLength(VEHICLES);
      expect(new Set(notification?.events.map((event) => event.subject)).size).toBe(VEHICLES);
      const payload = standin.received[0]?.payload as { text?: string } | undefined;
      const text = String(payload?.text);
      expect(text).toContain(`${VEHICLES} vehicles are off the VPN`);
      for (const vehicle of sim.control.state().vehicles) expect(text).toContain(vehicle.id);
    } finally {
      await Promise.all(daemons.map((daemon) => daemon.stop()));
      await worker.close();
      await queue.close();
      await slack.close();
      await closeQuietly(workerConnection);
    }
  });
});
