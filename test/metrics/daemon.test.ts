import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon } from '../../src/daemon/index.js';
import { METRIC_DEFINITIONS } from '../../src/metrics/index.js';
import { startSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/types.js';
import { VERSION } from '../../src/version.js';
import { DeliveryHarness, notification, silent, vpnLost } from '../notifiers/delivery/helpers.js';
import { newSecret } from '../notifiers/receivers/webhook/helpers.js';
import { testConfig } from '../pollers/harness.js';
import { eventually } from '../support/redis.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { exposedValue } from './helpers.js';

/**
 * `startDaemon` wires its metrics into every stage: upstream requests, poll jobs, committed
 * events, deliveries (outcomes, end-to-end time, dead letters) and the scrape-time queue and fleet
 * gauges, all in `daemon.metrics.registry`.
 */

const RECEIVER = 'ops';

let sim: Simulator;
let h: DeliveryHarness;
let receiver: WebhookReceiver;
const secret = newSecret();

beforeAll(async () => {
  sim = await startSimulator({ vehicles: 3, robots: 1, seed: 11, behaviours: false });
  for (const vehicle of sim.control.state().vehicles) {
    sim.control.updateVehicle(vehicle.id, { vpnConnected: true, pendingCommand: null });
  }
  h = await new DeliveryHarness().open();
  receiver = await WebhookReceiver.start({ secret });
});

afterAll(async () => {
  await h?.close();
  await receiver?.close();
  await sim?.close();
});

describe('daemon metrics', () => {
  it('feeds every stage into daemon.metrics', async () => {
    const config = testConfig(sim.url, h.prefix, {
      pollers: { robot_config: { enabled: false }, upstream: { interval: '2s' } },
      receivers: [
        { kind: 'webhook', name: RECEIVER, url: receiver.url, secrets: [secret], retry_schedule: ['0s'] },
      ],
      metrics: { fleet_cache: '0s' },
    });
    expect(config.metrics).toEqual({ per_entity: true, fleet_cache: 0 });
    const daemon = startDaemon(config, { logger: silent });
    const scrape = () => daemon.metrics.registry.metrics();
    try {
      // Without a poll thread (the default), every family but the poll thread's own.
      for (const { name, pollThread } of METRIC_DEFINITIONS)
        if (!pollThread) expect(daemon.metrics.names).toContain(name);

      // The fleet is learned; then a vehicle drops off the VPN: one event.
      await eventually(scrape, (text) =>
        [exposedValue(text, 'fleetwatch_vehicles{vpn="connected"}')].includes(3),
      );
      const [first] = sim.control.state().vehicles;
      sim.control.updateVehicle(first!.id, { vpnConnected: false });
      const text = await eventually(
        scrape,
        (now) => exposedValue(now, 'fleetwatch_events_total{type="vehicle.vpn.disconnected"}') === 1,
      );
      expect(exposedValue(text, 'fleetwatch_vehicles{vpn="disconnected"}')).toBe(1);
      expect(exposedValue(text, `fleetwatch_vehicle_vpn_connected{vehicle="${first!.id}"}`)).toBe(0);
      expect(
        exposedValue(text, 'fleetwatch_upstream_requests_total{operation="list_vehicles",status="200"}'),
      ).toBeGreaterThan(0);
      expect(exposedValue(text, 'fleetwatch_poll_jobs_total{poller="vehicles",result="ok"}')).toBeGreaterThan(
        0,
      );
      expect(exposedValue(text, 'fleetwatch_poll_duration_seconds_count{poller="vehicles"}')).toBeGreaterThan(
        0,
      );
      expect(exposedValue(text, 'fleetwatch_poll_lag_seconds_count{poller="vehicles"}')).toBeGreaterThan(0);
      expect(
        exposedValue(text, 'fleetwatch_queue_jobs{queue="poll-fleet",state="completed"}'),
      ).toBeGreaterThan(0);
      expect(text).toContain('fleetwatch_process_cpu_seconds_total');
      expect(text).toContain(`fleetwatch_build_info{version="${VERSION}",installation="test"} 1`);

      // Deliveries: one delivered, one rejected (a dead letter at once).
      receiver.respondWith(200, 400);
      await h.enqueue(
        notification('ntf-1', RECEIVER, [vpnLost('veh-1')]),
        notification('ntf-2', RECEIVER, [vpnLost('veh-2')]),
      );
      const after = await eventually(
        scrape,
        (now) => exposedValue(now, `fleetwatch_dead_letters{receiver="${RECEIVER}"}`) === 1,
      );
      expect(
        exposedValue(after, `fleetwatch_notifications_total{receiver="${RECEIVER}",outcome="delivered"}`),
      ).toBe(1);
      expect(
        exposedValue(after, `fleetwatch_notifications_total{receiver="${RECEIVER}",outcome="rejected"}`),
      ).toBe(1);
      expect(
        exposedValue(after, `fleetwatch_notification_delivery_seconds_count{receiver="${RECEIVER}"}`),
      ).toBe(1);
      expect(
        exposedValue(after, `fleetwatch_notification_send_duration_seconds_count{receiver="${RECEIVER}"}`),
      ).toBe(2);
      expect(exposedValue(after, `fleetwatch_queue_jobs{queue="notify-${RECEIVER}",state="failed"}`)).toBe(1);
    } finally {
      await daemon.stop();
    }
    // Stopped: the registry still renders (last readings), without touching the closed connections.
    expect(exposedValue(await scrape(), 'fleetwatch_vehicles{vpn="disconnected"}')).toBe(1);
  });
});
