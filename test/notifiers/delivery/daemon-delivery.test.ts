import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon } from '../../../src/daemon/index.js';
import type { DeliveryReport } from '../../../src/notifiers/delivery/delivery-worker.js';
import { startSimulator } from '../../../src/simulator/index.js';
import type { Simulator } from '../../../src/simulator/types.js';
import { testConfig } from '../../pollers/harness.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';
import { newSecret } from '../receivers/webhook/helpers.js';
import { DeliveryHarness, notification, silent, vpnLost } from './helpers.js';

const RECEIVER = 'ops-bridge';

let sim: Simulator;
let h: DeliveryHarness;
let receiver: WebhookReceiver;
const secret = newSecret();

beforeAll(async () => {
  sim = await startSimulator({ vehicles: 2, robots: 1, seed: 5, behaviours: false });
  h = await new DeliveryHarness().open();
  receiver = await WebhookReceiver.start({ secret });
});

afterAll(async () => {
  await h.close();
  await receiver.close();
  await sim.close();
});

describe('fleetwatch run delivers', () => {
  it('starts one delivery worker per receiver and lets a delivery under way finish on stop', async () => {
    const config = testConfig(sim.url, h.prefix, {
      receivers: [
        {
          kind: 'webhook',
          name: RECEIVER,
          url: receiver.url,
          secrets: [secret],
          retry_schedule: ['0s', '20ms'],
        },
      ],
      worker: { shutdown_grace: '5s' },
    });
    const reports: DeliveryReport[] = [];
    const daemon = startDaemon(config, { logger: silent, delivery: { onOutcome: (r) => reports.push(r) } });
    try {
      // The receiver is slow to answer the second one; it is under way when the daemon stops.
      receiver.respondWith(500, 200, { status: 200, delayMs: 600 });
      await h.enqueue(
        notification('ntf-1', RECEIVER, [vpnLost('veh-0001')]),
        notification('ntf-2', RECEIVER, [vpnLost('veh-0002')]),
      );
      await receiver.waitFor(3, 10_000);
    } finally {
      await daemon.stop();
    }
    const queue = h.queue(RECEIVER);
    expect(await queue.getJobState('ntf-1')).toBe('completed');
    expect(await queue.getJobState('ntf-2')).toBe('completed');
    expect(reports.map((report) => [report.notificationId, report.outcome.kind, report.attempt])).toEqual([
      ['ntf-1', 'retry', 1],
      ['ntf-1', 'delivered', 2],
      ['ntf-2', 'delivered', 1],
    ]);
    expect(await queue.getJobCounts('active', 'wait', 'failed')).toEqual({ active: 0, wait: 0, failed: 0 });
  });
});
