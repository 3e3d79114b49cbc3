import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeQuietly, createProducerConnection, waitForReady } from '../../../src/lib/redis-connection.js';
import { DisabledReceivers } from '../../../src/notifiers/delivery/disabled-receivers.js';
import { SnapshotStore } from '../../../src/store/snapshot-store.js';
import { redisUrl } from '../../support/redis.js';
import { DeliveryHarness } from './helpers.js';

let h: DeliveryHarness;
let other: Redis;
let replicaB: DisabledReceivers;

beforeEach(async () => {
  h = await new DeliveryHarness().open();
  // A second replica: its own connection and store.
  other = createProducerConnection(redisUrl(), { name: 'test-replica-b' });
  await waitForReady(other, { timeoutMs: 5_000 });
  const store = new SnapshotStore({ redis: other, prefix: h.prefix, installation: 'test' });
  replicaB = new DisabledReceivers({ redis: other, prefix: h.prefix, store });
});

afterEach(async () => {
  await closeQuietly(other);
  await h.close();
});

const GONE = { kind: 'webhook', reason: 'HTTP 410: endpoint removed', status: 410 };

describe('DisabledReceivers', () => {
  it('two replicas seeing the 410 at once: disabled once, one monitor.receiver.disabled', async () => {
    const [a, b] = await Promise.all([
      h.disabledReceivers.disable('hook', GONE),
      replicaB.disable('hook', GONE),
    ]);
    expect([a.first, b.first].sort()).toEqual([false, true]);
    expect(a.disabled).toEqual(b.disabled);

    const reported = await Promise.all([
      h.disabledReceivers.report('hook', a.disabled),
      replicaB.report('hook', b.disabled),
      h.disabledReceivers.report('hook', a.disabled),
    ]);
    expect(reported.filter(Boolean)).toHaveLength(1);
    const events = await h.receiverEvents();
    expect(events.map((event) => [event.type, event.subject, event.data.reason])).toEqual([
      ['monitor.receiver.disabled', 'receiver/hook', 'HTTP 410: endpoint removed'],
    ]);

    // Whoever finds it disabled later reports again: still one event.
    expect(await replicaB.report('hook', (await replicaB.status('hook')) ?? a.disabled)).toBeUndefined();
    expect(await h.receiverEvents()).toHaveLength(1);
  });

  it('enable clears it; the next disabling is a new episode with an event of its own', async () => {
    const first = await h.disabledReceivers.disable('hook', GONE);
    await h.disabledReceivers.report('hook', first.disabled);
    expect(await h.disabledReceivers.enable('hook')).toEqual(first.disabled);
    expect(await h.disabledReceivers.status('hook')).toBeUndefined();
    expect(await h.disabledReceivers.enable('hook')).toBeUndefined();

    const second = await replicaB.disable('hook', { kind: 'webhook', reason: 'HTTP 410' });
    expect(second.first).toBe(true);
    expect(second.disabled.episode).not.toBe(first.disabled.episode);
    expect(second.disabled.status).toBeUndefined();
    await replicaB.report('hook', second.disabled);
    expect((await h.receiverEvents()).map((event) => event.data.reason)).toEqual([
      'HTTP 410: endpoint removed',
      'HTTP 410',
    ]);
  });
});
