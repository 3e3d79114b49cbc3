import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon } from '../../../src/daemon/index.js';
import { closeQuietly } from '../../../src/lib/redis-connection.js';
import { startSimulator } from '../../../src/simulator/index.js';
import type { Simulator } from '../../../src/simulator/types.js';
import { deliveryKeys } from '../../../src/store/keys.js';
import { testConfig, VEHICLE_LIST_ONLY } from '../../pollers/harness.js';
import { PagerDutyStandin } from '../../support/pagerduty-standin.js';
import { connect, deletePrefixKeys, eventually, uniquePrefix } from '../../support/redis.js';

/**
 * A site going dark, the whole way to PagerDuty: simulator → vehicles poller → events → a route
 * grouping by type → the `pagerduty` receiver (stand-in). 40 vehicles lose their VPN at once and
 * come back: PagerDuty sees one alert of the group, triggered and resolved, not 40.
 */

const VEHICLES = 40;
let sim: Simulator;
let admin: Redis;
let standin: PagerDutyStandin;
const prefix = uniquePrefix();

beforeAll(async () => {
  sim = await startSimulator({ vehicles: VEHICLES, robots: 0, seed: 5, behaviours: false });
  for (const vehicle of sim.control.state().vehicles)
    sim.control.updateVehicle(vehicle.id, { vpnConnected: true });
  admin = connect();
  standin = await PagerDutyStandin.start();
});

afterAll(async () => {
  await standin?.close();
  await sim?.close();
  await deletePrefixKeys(admin, prefix);
  await closeQuietly(admin);
});

describe('the daemon paging through PagerDuty', () => {
  it('pages 40 vehicles losing their VPN at once as one alert, and resolves it when they are back', async () => {
    const config = testConfig(sim.url, prefix, {
      pollers: VEHICLE_LIST_ONLY,
      receivers: [
        {
          kind: 'pagerduty',
          name: 'on-call',
          routing_key: standin.routingKey,
          url: standin.url,
          fold_above: 20,
        },
      ],
      notifications: {
        route: { receiver: 'on-call', group_by: ['type'], group_wait: '1s', group_interval: '1s' },
      },
    });
    const daemon = startDaemon(config, {
      logger: pino({ enabled: false }),
      notifications: { flusher: { pollMs: 100 } },
      relay: { blockMs: 200 },
    });
    const actions = () =>
      standin.received.map((item) => {
        const body = item.body as { event_action: string; dedup_key: string };
        return [body.event_action, body.dedup_key];
      });
    const stateKey = deliveryKeys(prefix).receiverState('pagerduty', 'on-call');
    try {
      const last = `veh-${String(VEHICLES).padStart(4, '0')}`;
      await eventually(
        () => admin.exists(`{${prefix}}:snap:vehicle:${last}:link`),
        (n) => n === 1,
      );
      for (const vehicle of sim.control.state().vehicles)
        sim.control.updateVehicle(vehicle.id, { vpnConnected: false });
      await eventually(
        async () => standin.open().length,
        (open) => open === 1,
        { timeoutMs: 15_000 },
      );
      await eventually(
        () => admin.hget(stateKey, `n:${standin.open()[0]?.dedupKey}`),
        (count) => count === String(VEHICLES),
      );

      for (const vehicle of sim.control.state().vehicles)
        sim.control.updateVehicle(vehicle.id, { vpnConnected: true });
      await eventually(
        async () => actions().at(-1)?.[0],
        (action) => action === 'resolve',
        { timeoutMs: 15_000 },
      );
      // One alert, of the group: triggered (again, if the storm came in two notifications), resolved.
      const group = 'test/group/on-call/';
      expect(new Set(actions().map(([, key]) => key))).toEqual(new Set([standin.alerts[0]?.dedupKey]));
      expect(standin.alerts[0]?.dedupKey.startsWith(group)).toBe(true);
      expect(standin.alerts.map((alert) => alert.status)).toEqual(['resolved']);
      expect(standin.received.every((item) => item.status === 202)).toBe(true);
      // The receiver's record of the alert goes once the resolve's answer is back, which is after the
      // stand-in has seen the resolve.
      await eventually(
        () => admin.exists(stateKey),
        (n) => n === 0,
      );
    } finally {
      await daemon.stop();
    }
  });
});
