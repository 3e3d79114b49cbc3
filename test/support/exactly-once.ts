import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisClient } from '../../src/lib/redis-connection.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { EventLog } from '../../src/store/event-log.js';
import { newSecret } from '../notifiers/receivers/webhook/helpers.js';
import { reorderedEvents } from '../resilience/entity-order.js';
import {
  printOnFailure,
  ReplicaSet,
  removeConfigFiles,
  webhookNotifications,
  writeDaemonConfig,
} from './daemon-process.js';
import { deletePrefixKeys, uniquePrefix } from './redis.js';
import {
  addQuietFleet,
  discoveredEvents,
  fleetIds,
  longLease,
  readAllEvents,
  robotSubject,
  Scenario,
  vehicleSubject,
  waitFor,
  waitForEntityBaseline,
  waitForHandOff,
  waitForMembershipBaseline,
  waitForPollRound,
} from './scenario.js';
import { WebhookReceiver } from './webhook-receiver.js';

/**
 * Guarantee 1 with three replicas polling the same fleet through one Redis: every scripted change
 * is in the event log exactly once, and nothing else is; and (Guarantee 6) every event reaches a
 * webhook receiver, each entity's in commit order. One scenario, run against the shared
 * Redis (test/system/integration/) and against a Redis Cluster (test/system/cluster/).
 *
 * The replicas start on an empty fleet and the fleet is added once their first lists are committed:
 * a first list is a silent baseline, so this is how every vehicle and robot gets exactly one
 * `*.discovered`. The tests run in order against the same replicas and share one expected log.
 */

const v = vehicleSubject;
const r = robotSubject;

/** The Redis a run of the scenario uses: where the daemons connect and the test's own client. */
export interface ScenarioRedis {
  /** For the test's probes and the event log reader (closed by the scenario). */
  admin: RedisClient;
  /** `redis.url` of the daemons, or `redis.cluster.nodes` with `cluster`. */
  url: string;
  cluster?: readonly string[];
  /** `redis` settings besides the endpoint and prefix (e.g. `shards`). */
  settings?: Record<string, unknown>;
  /** Called after the test: checks of the keys left (before they are deleted). */
  afterRun?: (prefix: string) => Promise<void>;
}

/**
 * The scenario as a `describe` block; `redis` is called in `beforeAll` (a cluster may be started
 * there) and returns undefined when the run must be skipped.
 */
export function describeReplicasExactlyOnce(title: string, redis: () => Promise<ScenarioRedis>): void {
  describe(title, () => {
    const prefix = uniquePrefix();
    let sim: Simulator;
    let admin: RedisClient;
    let target: ScenarioRedis;
    /** `redis.shards` of the daemons. */
    let shards = 1;
    let replicas: ReplicaSet | undefined;
    const secret = newSecret();
    let receiver: WebhookReceiver;

    beforeAll(async () => {
      receiver = await WebhookReceiver.start({ secret });
      // Power commands complete when the test says so (a step below), not on a timer.
      sim = await startSimulator({
        vehicles: 0,
        robots: 0,
        seed: 7,
        powerDelayMs: 3_600_000,
        behaviours: false,
      });
      target = await redis();
      admin = target.admin;
      shards = Number(target.settings?.shards ?? 1);
    });

    afterAll(async () => {
      await replicas?.killAll();
      await sim?.close();
      await receiver?.close();
      if (admin) {
        await deletePrefixKeys(admin, prefix);
        admin.disconnect();
      }
      removeConfigFiles();
    });

    let shared: { set: ReplicaSet; scenario: Scenario; log: EventLog } | undefined;
    const need = () => {
      if (!shared) throw new Error('the first test did not get the replicas running');
      return shared;
    };
    const report = (context: Parameters<typeof printOnFailure>[0]) =>
      printOnFailure(context, async () => {
        const { set, scenario } = need();
        return (
          `--- daemon output ---\n${set.output()}\n--- steps ---\n${JSON.stringify(scenario.steps)}\n` +
          `--- log vs. expected ---\n${JSON.stringify(await scenario.diff(), null, 2)}\n` +
          `--- events behind duplicated/unexpected ---\n${await scenario.offending()}`
        );
      });

    it('turn every scripted change into exactly one event', { timeout: 120_000 }, async (context) => {
      const config = writeDaemonConfig({
        upstreamUrl: sim.url,
        redisUrl: target.url,
        ...(target.cluster ? { redisCluster: target.cluster } : {}),
        prefix,
        batchSize: 10,
        extra: {
          ...webhookNotifications(receiver.url, secret, '1h'),
          ...(target.settings ? { redis: target.settings } : {}),
        },
      });
      const set = new ReplicaSet(config);
      replicas = set;
      const log = new EventLog({ redis: admin, prefix, shards });
      const scenario = new Scenario(log, { intervalMs: 50 });
      shared = { set, scenario, log };
      report(context);

      set.start(3);
      // The first lists are the baseline; what is added after them is discovered.
      await waitForMembershipBaseline(admin, prefix, { shards });
      const fleet = fleetIds({ vehicles: 30, robots: 5 });
      await scenario.step(
        'discover 30 vehicles and 5 robots',
        () => addQuietFleet(sim.control, { vehicles: 30, robots: 5 }),
        discoveredEvents(fleet),
      );
      // A poll round planned after the discovery has polled every entity: the baseline is complete.
      await waitForPollRound(admin, prefix);
      await waitForEntityBaseline(admin, prefix, fleet, { stableMs: 0, shards });
      // Baselines of the per-entity signals are silent.
      expect(await scenario.diff()).toEqual({ missing: [], duplicated: [], unexpected: [] });

      const control = sim.control;
      const dropped = ['veh-0003', 'veh-0007', 'veh-0011'];
      await scenario.step(
        'VPN drops on three vehicles',
        () => {
          for (const id of dropped) control.updateVehicle(id, { vpnConnected: false });
        },
        dropped.map((id) => ({ type: 'vehicle.vpn.disconnected', subject: v(id) })),
      );
      await scenario.step(
        'VPN comes back on the three',
        () => {
          for (const id of dropped) control.updateVehicle(id, { vpnConnected: true });
        },
        dropped.map((id) => ({ type: 'vehicle.vpn.connected', subject: v(id) })),
      );
      await scenario.step('power reported on', () => control.updateVehicle('veh-0005', { state: 'on' }), [
        { type: 'vehicle.power.changed', subject: v('veh-0005') },
      ]);
      await scenario.step('power reported off', () => control.updateVehicle('veh-0005', { state: 'off' }), [
        { type: 'vehicle.power.changed', subject: v('veh-0005') },
      ]);
      await scenario.step('an address changes and another disappears', () => {
        control.updateVehicle('veh-0009', { ipAddress: '10.99.0.9' });
        control.updateVehicle('veh-0010', { ipAddress: null });
      }, [
        { type: 'vehicle.ip.changed', subject: v('veh-0009') },
        { type: 'vehicle.ip.changed', subject: v('veh-0010') },
      ]);
      await scenario.step(
        'the address comes back',
        () => control.updateVehicle('veh-0010', { ipAddress: '10.99.0.10' }),
        [{ type: 'vehicle.ip.changed', subject: v('veh-0010') }],
      );
      await scenario.step(
        'a power-on command is pending',
        () => control.updateVehicle('veh-0012', { pendingCommand: { state: 'on' } }),
        [{ type: 'vehicle.power.command.pending', subject: v('veh-0012') }],
      );
      await scenario.step(
        'the vehicle reports the command done',
        () => control.updateVehicle('veh-0012', { state: 'on', pendingCommand: null }),
        [
          { type: 'vehicle.power.command.completed', subject: v('veh-0012') },
          { type: 'vehicle.power.changed', subject: v('veh-0012') },
        ],
      );
      await scenario.step('a robot goes down', () => control.updateRobot('rb-0002', { healthy: false }), [
        { type: 'robot.health.down', subject: r('rb-0002') },
      ]);
      await scenario.step('the robot comes back', () => control.updateRobot('rb-0002', { healthy: true }), [
        { type: 'robot.health.up', subject: r('rb-0002') },
      ]);
      await scenario.step(
        'a teleop lease is taken',
        () => control.updateRobot('rb-0003', { lease: longLease('teleop-1') }),
        [{ type: 'robot.lease.changed', subject: r('rb-0003') }],
      );
      await scenario.step(
        'the lease is handed over',
        () => control.updateRobot('rb-0003', { lease: longLease('teleop-2') }),
        [{ type: 'robot.lease.changed', subject: r('rb-0003') }],
      );
      await scenario.step('the lease is released', () => control.updateRobot('rb-0003', { lease: null }), [
        { type: 'robot.lease.changed', subject: r('rb-0003') },
      ]);
      await scenario.step(
        'feedback: vehicle state',
        () => control.updateRobot('rb-0004', { feedback: { vehicleState: 'DRIVING' } }),
        [{ type: 'robot.state.changed', subject: r('rb-0004') }],
      );
      await scenario.step(
        'feedback: autonomy and navigation at once',
        () => control.updateRobot('rb-0004', { feedback: { cortexStatus: 2, navStatus: 6 } }),
        [
          { type: 'robot.autonomy.changed', subject: r('rb-0004') },
          { type: 'robot.navigation.changed', subject: r('rb-0004') },
        ],
      );
      await scenario.step(
        'another route is loaded',
        () => control.updateRobot('rb-0005', { loadedRoute: 'route-2' }),
        [{ type: 'robot.config.changed', subject: r('rb-0005') }],
      );
      await scenario.step(
        'a vehicle joins',
        () => addQuietFleet(control, { vehicles: 1, robots: 0, firstVehicle: 31 }),
        [{ type: 'vehicle.discovered', subject: v('veh-0031') }],
      );

      // Late or duplicate work (three replicas, every tick) lands before the judging: whatever was
      // polled before is finished, and every poller has read the final state once more.
      await waitForPollRound(admin, prefix);
      expect(await scenario.diff()).toEqual({ missing: [], duplicated: [], unexpected: [] });
      // ...and each of them went on to the events queue (the notification path) too.
      await waitForHandOff(admin, log, prefix, { timeoutMs: 20_000, shards });
      // ...and through the notification step to the receiver, each entity's in commit order.
      const entries = await readAllEvents(log);
      await waitFor(
        'every logged event at the webhook receiver',
        async () =>
          new Set(receiver.accepted().flatMap((delivery) => delivery.events.map((event) => event.id))),
        (delivered) => {
          const missing = entries.filter(({ event }) => !delivered.has(event.id));
          return missing.length === 0
            ? undefined
            : `${missing.length} not delivered (${missing
                .slice(0, 5)
                .map(({ event }) => `${event.type} ${event.subject}`)
                .join(', ')})`;
        },
        { timeoutMs: 30_000 },
      );
      expect(reorderedEvents(entries, receiver.accepted())).toEqual([]);
      expect(set.crashed.map((daemon) => daemon.name)).toEqual([]);
    });

    it('report an entity that leaves the list as removed, and nothing else', {
      timeout: 60_000,
    }, async (context) => {
      const { scenario } = need();
      report(context);
      const control = sim.control;
      await scenario.step('a vehicle leaves the list', () => control.removeVehicle('veh-0030'), [
        { type: 'vehicle.removed', subject: v('veh-0030') },
      ]);
      await scenario.step('a robot leaves the list', () => control.removeRobot('rb-0001'), [
        { type: 'robot.removed', subject: r('rb-0001') },
      ]);
      await waitForPollRound(admin, prefix);
      // Until the next list drops it from the poll targets, a removed entity's per-entity polls get
      // 404s; those must not read as "power unsupported" or "health down".
      expect(await scenario.diff()).toEqual({ missing: [], duplicated: [], unexpected: [] });
    });

    it('stop on SIGTERM with exit status 0', { timeout: 60_000 }, async (context) => {
      const { set } = need();
      report(context);
      expect(set.crashed.map((daemon) => daemon.name)).toEqual([]);
      const exits = await set.stopAll();
      expect(exits.map((exit) => exit.code)).toEqual([0, 0, 0]);
      await target.afterRun?.(prefix);
    });
  });
}
