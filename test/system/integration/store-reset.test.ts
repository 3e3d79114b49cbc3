import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IncidentView } from '../../../src/incidents/view.js';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import { EventLog } from '../../../src/store/event-log.js';
import { newSecret } from '../../notifiers/receivers/webhook/helpers.js';
import { runCli } from '../../support/cli.js';
import {
  printOnFailure,
  ReplicaSet,
  removeConfigFiles,
  webhookNotifications,
  writeDaemonConfig,
} from '../../support/daemon-process.js';
import { PrivateRedis, redisServerAvailable } from '../../support/private-redis.js';
import {
  addQuietFleet,
  readAllEvents,
  robotSubject,
  vehicleSubject,
  waitFor,
  waitForEntityBaseline,
  waitForMembershipBaseline,
  waitForPollRound,
} from '../../support/scenario.js';
import { type VerifiedDelivery, WebhookReceiver } from '../../support/webhook-receiver.js';

/**
 * Redis emptied (FLUSHALL on a private redis-server) under two running replicas with five open
 * incidents: the loss is said once (`monitor.store.reset`, and an error in each replica's log), no
 * open incident is announced again, the one that ended meanwhile resolves, lists re-baseline
 * without `discovered`, and later changes are delivered as usual.
 */

const OPEN = [
  { type: 'vehicle.vpn.disconnected', subject: vehicleSubject('veh-0001') },
  { type: 'vehicle.vpn.disconnected', subject: vehicleSubject('veh-0002') },
  { type: 'vehicle.vpn.disconnected', subject: vehicleSubject('veh-0003') },
  { type: 'robot.health.down', subject: robotSubject('rb-0001') },
  { type: 'robot.health.down', subject: robotSubject('rb-0002') },
];

describe.skipIf(!redisServerAvailable())('Redis emptied under running replicas', () => {
  const prefix = `ti-${randomBytes(5).toString('hex')}`;
  const secret = newSecret();
  let sim: Simulator;
  let redis: PrivateRedis | undefined;
  let admin: Redis | undefined;
  let receiver: WebhookReceiver;
  let replicas: ReplicaSet | undefined;

  beforeAll(async () => {
    sim = await startSimulator({ vehicles: 0, robots: 0, seed: 29, behaviours: false });
    redis = await PrivateRedis.start();
    admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    admin.on('error', () => {});
    receiver = await WebhookReceiver.start({ secret });
  });

  afterAll(async () => {
    await replicas?.killAll();
    admin?.disconnect();
    await redis?.stop('kill');
    await receiver?.close();
    await sim?.close();
    removeConfigFiles();
  });

  it('says so once and announces none of the 5 open incidents again', {
    timeout: 150_000,
  }, async (context) => {
    const client = admin!;
    const config = writeDaemonConfig({
      upstreamUrl: sim.url,
      redisUrl: redis!.url,
      prefix,
      // The store guards say at debug level how many open incidents they have read or followed.
      logLevel: 'debug',
      extra: {
        ...webhookNotifications(receiver.url, secret, '1h'),
      },
    });
    const set = new ReplicaSet(config);
    replicas = set;
    printOnFailure(context, () => `${set.output(200)}\n--- redis ---\n${redis!.output()}`);
    set.start(2);
    await set.waitUntilRunning();
    const log = new EventLog({ redis: client, prefix });
    await waitForMembershipBaseline(client, prefix);
    // Two unanswering robots of six: the gateway's other calls succeed, so it is the robots that
    // are down (all robots failing would read as the gateway failing, which inhibits them).
    const ids = addQuietFleet(sim.control, { vehicles: 4, robots: 6 });
    await waitForEntityBaseline(client, prefix, ids);

    for (const id of ['veh-0001', 'veh-0002', 'veh-0003'])
      sim.control.updateVehicle(id, { vpnConnected: false });
    for (const id of ['rb-0001', 'rb-0002']) sim.control.updateRobot(id, { healthy: false });
    const key = (type: string, subject: string) => `${type} ${subject}`;
    const opened = new Set(OPEN.map(({ type, subject }) => key(type, subject)));
    const announcing = (delivery: VerifiedDelivery) =>
      delivery.events.filter((event) => opened.has(key(event.type, event.subject)));
    await waitFor(
      'the 5 incidents announced',
      async () =>
        new Set(receiver.accepted().flatMap((delivery) => announcing(delivery).map((e) => e.subject))),
      (seen) => (seen.size === OPEN.length ? undefined : `${seen.size} of ${OPEN.length}`),
    );
    // Each replica holds the 5 open incidents, read or followed from its own commits (what it
    // carries over if it notices the loss first).
    await waitFor(
      'every replica holding the 5 open incidents',
      async () =>
        set.running.map(
          (daemon) => daemon.linesMatching(/"msg":"open incidents (read|followed)"/).at(-1) ?? '',
        ),
      (last) => {
        const behind = last.filter((line) => !line.includes('"open":5'));
        return behind.length === 0 ? undefined : `${behind.length} replicas behind`;
      },
    );
    const listed = await runCli(['incidents', '--json'], { FLEETWATCH_CONFIG: config });
    const before = (JSON.parse(listed.stdout) as IncidentView[]).map((view) => view.id).sort();
    expect(before).toHaveLength(5);

    const flushedAt = Date.now();
    await client.flushall();
    // rb-0002 recovers meanwhile; veh-0004 changes after the loss.
    sim.control.updateRobot('rb-0002', { healthy: true });
    sim.control.updateVehicle('veh-0004', { vpnConnected: false });

    const after = (type: string, subject: string) =>
      receiver
        .accepted()
        .some(
          (delivery) =>
            delivery.receivedAt > flushedAt &&
            delivery.events.some((event) => event.type === type && event.subject === subject),
        );
    await waitFor(
      'the loss, the resolution and the later change delivered',
      async () => [
        after('monitor.store.reset', 'store/redis'),
        after('robot.health.up', robotSubject('rb-0002')),
        after('vehicle.vpn.disconnected', vehicleSubject('veh-0004')),
      ],
      (seen) => (seen.every(Boolean) ? undefined : JSON.stringify(seen)),
      { timeoutMs: 60_000 },
    );
    // Every poller has read the fleet again since: nothing still on its way.
    await waitForPollRound(client, prefix, { timeoutMs: 45_000 });

    const events = (await readAllEvents(log)).map((entry) => entry.event);
    const resets = events.filter((event) => event.type === 'monitor.store.reset');
    expect(resets).toHaveLength(1);
    expect(resets[0]?.data).toMatchObject({ severity: 'critical', carriedOver: 5 });
    expect(events.filter((event) => opened.has(key(event.type, event.subject)))).toEqual([]);
    expect(events.filter((event) => event.type.endsWith('.discovered'))).toEqual([]);
    // The resolution carries the incident's true start, from before the loss.
    const recovered = events.find((event) => event.type === 'robot.health.up');
    expect(Date.parse(String(recovered?.data.since))).toBeLessThan(flushedAt);
    expect(recovered?.data.durationMs).toBe(
      Date.parse(recovered!.time) - Date.parse(String(recovered?.data.since)),
    );
    expect(
      receiver
        .accepted()
        .filter((delivery) => delivery.receivedAt > flushedAt)
        .flatMap(announcing)
        .map((event) => `${event.type} ${event.subject}`),
    ).toEqual([]);

    // Every replica noticed and said so once; the incidents keep their ids.
    for (const daemon of set.running) {
      expect(daemon.linesMatching(/"level":50.*the Redis store was emptied/), daemon.name).toHaveLength(1);
    }
    const now = await runCli(['incidents', '--json'], { FLEETWATCH_CONFIG: config });
    const open = JSON.parse(now.stdout) as IncidentView[];
    expect(open.map((view) => view.subject).sort()).toEqual([
      robotSubject('rb-0001'),
      vehicleSubject('veh-0001'),
      vehicleSubject('veh-0002'),
      vehicleSubject('veh-0003'),
      vehicleSubject('veh-0004'),
    ]);
    const carried = open.filter((view) => view.subject !== vehicleSubject('veh-0004')).map((view) => view.id);
    expect(before).toEqual(expect.arrayContaining(carried));
    expect(set.crashed).toEqual([]);
  });
});
