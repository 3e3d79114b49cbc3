import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../../src/daemon/index.js';
import { closeQuietly } from '../../src/lib/redis-connection.js';
import type { DeadLetter } from '../../src/notifiers/delivery/dead-letters.js';
import { startSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/types.js';
import { newSecret } from '../notifiers/receivers/webhook/helpers.js';
import { testConfig, VEHICLE_LIST_ONLY } from '../pollers/harness.js';
import { connect, deletePrefixKeys, eventually, uniquePrefix } from '../support/redis.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { bearer, TOKEN } from './helpers.js';

/**
 * Dead letters with the ids the delivery path really makes (receiver, route, group labels, hash,
 * group time, sequence: well over 100 characters with `group_by: ['...']`), replayed and purged
 * through the daemon's own API on a loopback port.
 */

const RECEIVER = 'ops-bridge';
const prefix = uniquePrefix();
const secret = newSecret();
let sim: Simulator;
let admin: Redis;
let receiver: WebhookReceiver;
let daemon: Daemon;
let api: string;

beforeAll(async () => {
  sim = await startSimulator({ vehicles: 2, robots: 0, seed: 9, behaviours: false });
  for (const vehicle of sim.control.state().vehicles)
    sim.control.updateVehicle(vehicle.id, { vpnConnected: true });
  admin = connect();
  // Fails every delivery until the test says otherwise.
  receiver = await WebhookReceiver.start({ secret, fallback: 500 });
  const config = testConfig(sim.url, prefix, {
    pollers: VEHICLE_LIST_ONLY,
    receivers: [
      {
        kind: 'webhook',
        name: RECEIVER,
        url: receiver.url,
        secrets: [secret],
        retry_schedule: ['0s', '10ms'],
      },
    ],
    notifications: {
      route: { receiver: RECEIVER, group_by: ['...'], group_wait: '0s', group_interval: '1s' },
    },
    http: { port: 0, api_token: TOKEN },
  });
  daemon = startDaemon(config, {
    logger: pino({ enabled: false }),
    notifications: { flusher: { pollMs: 100 } },
    relay: { blockMs: 200 },
  });
  api = (await daemon.http?.listening) ?? '';
});

afterAll(async () => {
  await daemon?.stop();
  await receiver?.close();
  await sim?.close();
  await deletePrefixKeys(admin, prefix);
  await closeQuietly(admin);
});

const call = (method: 'GET' | 'POST' | 'DELETE', path: string) =>
  fetch(`${api}${path}`, { method, headers: bearer() });

const deadLetters = async (): Promise<DeadLetter[]> =>
  ((await (await call('GET', '/api/dead-letters')).json()) as { items: DeadLetter[] }).items;

describe('dead letters of the real delivery path', () => {
  it('are replayed and purged through the API by their ids', async () => {
    // Baseline learnt, then both vehicles lose the VPN: one incident group, one notification each.
    await eventually(
      () => admin.exists(`{${prefix}}:snap:vehicle:veh-0002:link`),
      (n) => n === 1,
    );
    for (const vehicle of sim.control.state().vehicles)
      sim.control.updateVehicle(vehicle.id, { vpnConnected: false });
    const letters = await eventually(deadLetters, (items) => items.length === 2, { timeoutMs: 20_000 });
    for (const letter of letters) {
      expect(letter.id.length).toBeGreaterThan(100);
      expect(letter).toMatchObject({ receiver: RECEIVER, attempts: 2, type: 'vehicle.vpn.disconnected' });
    }
    const [replayedLetter, purgedLetter] = letters as [DeadLetter, DeadLetter];

    receiver.answerWith(200);
    const replay = await call('POST', `/api/dead-letters/${encodeURIComponent(replayedLetter.id)}/replay`);
    expect(replay.status).toBe(200);
    expect(((await replay.json()) as { replayed: DeadLetter }).replayed.id).toBe(replayedLetter.id);
    await eventually(
      async () => receiver.accepted().map((delivery) => delivery.webhookId),
      (ids) => ids.includes(replayedLetter.notificationId),
    );
    const again = await call('POST', `/api/dead-letters/${encodeURIComponent(replayedLetter.id)}/replay`);
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('not_dead');

    const purge = await call('DELETE', `/api/dead-letters/${encodeURIComponent(purgedLetter.id)}`);
    expect(purge.status).toBe(200);
    expect(((await purge.json()) as { purged: DeadLetter }).purged.id).toBe(purgedLetter.id);
    expect(await deadLetters()).toEqual([]);
    expect((await call('DELETE', `/api/dead-letters/${encodeURIComponent(purgedLetter.id)}`)).status).toBe(
      404,
    );
  });
});
