import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetEvent } from '../../../src/events/types.js';
import type { IncidentView } from '../../../src/incidents/view.js';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import { newSecret } from '../../notifiers/receivers/webhook/helpers.js';
import { runCli } from '../../support/cli.js';
import {
  printOnFailure,
  ReplicaSet,
  removeConfigFiles,
  webhookNotifications,
  writeDaemonConfig,
} from '../../support/daemon-process.js';
import { connect, deletePrefixKeys, redisUrl } from '../../support/redis.js';
import {
  addQuietFleet,
  fleetIds,
  vehicleSubject,
  waitFor,
  waitForEntityBaseline,
  waitForMembershipBaseline,
} from '../../support/scenario.js';
import { type VerifiedDelivery, WebhookReceiver } from '../../support/webhook-receiver.js';

/**
 * `fleetwatch ack` against running daemons: reminders of a firing incident (every 2 s here) stop
 * once it is acknowledged, the acknowledgement shows in the incident's next notification, it holds
 * while the replicas are SIGKILLed and replaced (it lives in Redis, not in a process), and the
 * reminders start again when it ends.
 */

const ACK_FOR_MS = 20_000;

describe('an acknowledged incident', () => {
  const prefix = `ti-${randomBytes(5).toString('hex')}`;
  const secret = newSecret();
  let sim: Simulator;
  let admin: Redis;
  let receiver: WebhookReceiver;
  let replicas: ReplicaSet | undefined;

  beforeAll(async () => {
    sim = await startSimulator({ vehicles: 0, robots: 0, seed: 23, behaviours: false });
    admin = connect();
    receiver = await WebhookReceiver.start({ secret });
  });

  afterAll(async () => {
    await replicas?.killAll();
    await receiver?.close();
    await sim?.close();
    if (admin) {
      await deletePrefixKeys(admin, prefix);
      admin.disconnect();
    }
    removeConfigFiles();
  });

  it('gets no reminder until the acknowledgement ends, across replica SIGKILLs', {
    timeout: 150_000,
  }, async (context) => {
    const config = writeDaemonConfig({
      upstreamUrl: sim.url,
      redisUrl: redisUrl(),
      prefix,
      logLevel: 'info',
      extra: {
        worker: { takeover_after: '2s' },
        ...webhookNotifications(receiver.url, secret, '2s'),
      },
    });
    const set = new ReplicaSet(config);
    replicas = set;
    printOnFailure(context, () => set.output(200));
    set.start(2);
    await set.waitUntilRunning();
    await waitForMembershipBaseline(admin, prefix);
    const ids = addQuietFleet(sim.control, { vehicles: 2, robots: 0 });
    await waitForEntityBaseline(admin, prefix, { ...fleetIds({ vehicles: 2, robots: 0 }), robots: [] });
    expect(ids.vehicles).toEqual(['veh-0001', 'veh-0002']);

    const subject = vehicleSubject('veh-0001');
    const firing = (delivery: VerifiedDelivery) =>
      delivery.events.some((event) => event.type === 'vehicle.vpn.disconnected' && event.subject === subject);
    const deliveriesOf = (match: (delivery: VerifiedDelivery) => boolean) => async () =>
      receiver.accepted().filter(match);

    sim.control.updateVehicle('veh-0001', { vpnConnected: false });
    sim.control.updateVehicle('veh-0002', { vpnConnected: false });
    const control = (delivery: VerifiedDelivery) =>
      delivery.events.some(
        (event) => event.type === 'vehicle.vpn.disconnected' && event.subject === vehicleSubject('veh-0002'),
      );
    // Announced, then reminded of every 2 s.
    await waitFor('the incident announced and reminded of twice', deliveriesOf(firing), (found) =>
      found.length >= 3 ? undefined : `${found.length} of 3 notifications`,
    );

    const env = { FLEETWATCH_CONFIG: config };
    const listed = await runCli(['incidents', '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    const [incident] = (JSON.parse(listed.stdout) as IncidentView[]).filter(
      (view) => view.subject === subject,
    );
    expect(incident).toMatchObject({ key: 'vpn', state: 'open', acknowledged: false });
    const acked = await runCli(
      ['ack', incident!.id, '--for', `${ACK_FOR_MS / 1000}s`, '--comment', 'on it', '--author', 'dana'],
      env,
    );
    expect(acked.code, acked.stderr).toBe(0);

    // The acknowledgement shows in the incident's next notification.
    const isAck = (delivery: VerifiedDelivery) =>
      delivery.events.some((event: FleetEvent) => event.type === 'incident.acknowledged');
    const [ackDelivery] = await waitFor('the acknowledgement delivered', deliveriesOf(isAck), (found) =>
      found.length > 0 ? undefined : 'not yet',
    );
    const ackEvent = ackDelivery!.events.find((event) => event.type === 'incident.acknowledged');
    expect(ackEvent?.data).toMatchObject({
      incident: incident!.id,
      entity: subject,
      by: 'dana',
      comment: 'on it',
    });
    const until = Date.parse(String(ackEvent?.data.until));
    // The incident nobody acknowledged is still reminded of meanwhile; the acknowledged one not.
    await waitFor(
      'a reminder of the other incident after the acknowledgement',
      deliveriesOf((delivery) => control(delivery) && delivery.receivedAt > ackDelivery!.receivedAt),
      (found) => (found.length > 0 ? undefined : 'none yet'),
    );
    expect((await deliveriesOf(firing)()).filter((d) => d.receivedAt > ackDelivery!.receivedAt)).toEqual([]);

    // Every replica SIGKILLed and replaced while it holds.
    for (const daemon of [...set.running]) await set.replace(daemon);
    await set.waitUntilRunning();

    // Reminded of again once it has ended (the replacements read the group from Redis).
    const after = await waitFor(
      'a reminder after the acknowledgement ended',
      deliveriesOf((delivery) => firing(delivery) && delivery.receivedAt > ackDelivery!.receivedAt),
      (found) => (found.length > 0 ? undefined : 'none yet'),
      { timeoutMs: 90_000 },
    );
    // None while it held.
    expect(after.map((delivery) => delivery.receivedAt).filter((at) => at < until)).toEqual([]);
    const view = await runCli(['incidents', '--json', '--state', 'all'], env);
    const [now] = (JSON.parse(view.stdout) as IncidentView[]).filter((item) => item.id === incident!.id);
    expect(now).toMatchObject({
      state: 'open',
      acknowledged: false,
      acknowledgement: { by: 'dana', active: false },
    });

    sim.control.updateVehicle('veh-0001', { vpnConnected: true });
    await waitFor(
      'the resolution delivered',
      deliveriesOf((delivery) => delivery.events.some((event) => event.type === 'vehicle.vpn.connected')),
      (found) => (found.length > 0 ? undefined : 'not yet'),
    );
    expect(set.crashed).toEqual([]);
  });
});
