import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeQuietly, createProducerConnection, waitForReady } from '../../../src/lib/redis-connection.js';
import {
  createNotificationStep,
  type NotificationStep,
  type NotificationStepConfig,
} from '../../../src/notifiers/dispatch/notification-step.js';
import type { Notification } from '../../../src/notifiers/notifier.js';
import { connect, deletePrefixKeys, eventually, redisUrl, uniquePrefix } from '../../support/redis.js';
import { route, vpnBack, vpnLost } from './helpers.js';

/**
 * The notification step's part of a reload: routes and queues swap between two dispatches. An
 * event whose dispatch began before the swap goes where the old routes said, the next one where
 * the new ones say — each into one group, never both. A group of the old route still flushes; its
 * receiver gone, the notification is dropped as after a restart without it.
 */

let admin: Redis;
let redis: Redis;
const prefix = uniquePrefix();
let step: NotificationStep;
const handedOff: Notification[] = [];
const dropped: Notification[] = [];

const section = (receiver: string, receivers: string[]): NotificationStepConfig => ({
  notifications: {
    route: route({ receiver, group_by: ['subject'], group_wait: 0 }),
    entity_tags: [],
    maintenance: [],
  },
  receivers: receivers.map((name) => ({ name })),
});

beforeAll(async () => {
  admin = connect();
  redis = createProducerConnection(redisUrl(), { name: 'test-reload-step' });
  await waitForReady(redis, { timeoutMs: 5_000 });
  step = createNotificationStep({
    config: section('a', ['a', 'b']),
    redis,
    prefix,
    logger: pino({ enabled: false }),
    policy: { handOffRetryMs: 200, redeliveryMs: 0 },
    hooks: {
      onHandedOff: (notification) => handedOff.push(notification),
      onDropped: (notification) => dropped.push(notification),
    },
  });
});

afterAll(async () => {
  await step?.stop();
  await deletePrefixKeys(admin, prefix);
  await closeQuietly([redis, admin]);
});

/** Receiver → ids of the events pending in its groups (a group key begins with its receiver). */
async function groups(): Promise<Record<string, string[]>> {
  const keys = await admin.zrange(`{${prefix}}:notify:wake`, '0', '-1');
  const out: Record<string, string[]> = {};
  for (const key of keys) {
    const receiver = key.split('~')[0] ?? key;
    const pending = (await step.groups.get(key))?.state.pending ?? [];
    out[receiver] = [...(out[receiver] ?? []), ...pending.map((event) => event.id)];
  }
  return out;
}

describe('NotificationStep.prepareReload', () => {
  it('routes an event under way by the old routes, the next by the new, each once', async () => {
    const before = vpnLost('veh-0001');
    const after = vpnLost('veh-0002');
    const underWay = step.dispatch(before);
    const change = step.prepareReload(section('b', ['b']));
    const committed = change.commit();
    await Promise.all([underWay, committed]);
    await step.dispatch(after);

    expect(await groups()).toEqual({ a: [before.id], b: [after.id] });
    expect([...step.queues.keys()]).toEqual(['b']);

    // Both groups flush: b's goes to its queue; a's receiver is gone, so it is dropped.
    await step.flusher.runOnce();
    expect(
      handedOff.map((notification) => [notification.receiver, notification.events.map((e) => e.id)]),
    ).toEqual([['b', [after.id]]]);
    expect(
      dropped.map((notification) => [notification.receiver, notification.events.map((e) => e.id)]),
    ).toEqual([['a', [before.id]]]);
    expect(await step.queues.get('b')?.getJob(handedOff[0]!.id)).toBeDefined();
  });

  it('sends a resolution to the group that announced its incident, not to the new route', async () => {
    await step.prepareReload(section('a', ['a', 'b'])).commit();
    const lost = vpnLost('veh-0003');
    await step.dispatch(lost);
    await step.flusher.runOnce();
    expect(handedOff.at(-1)).toMatchObject({ receiver: 'a', events: [{ id: lost.id }] });

    await step.prepareReload(section('b', ['a', 'b'])).commit();
    const back = vpnBack('veh-0003', 60_000);
    const result = await step.dispatch(back);
    expect(result).toMatchObject({ groups: 1, added: 1 });
    expect((await groups()).b ?? []).not.toContain(back.id);
    // Due group_interval after the firing's flush.
    await eventually(
      async () => {
        await step.flusher.runOnce();
        return handedOff.at(-1)?.events[0]?.id;
      },
      (id) => id === back.id,
    );
    expect(handedOff.at(-1)).toMatchObject({ receiver: 'a', status: 'resolved', events: [{ id: back.id }] });
    const everywhere = handedOff.flatMap((notification) => notification.events.map((event) => event.id));
    expect(everywhere.filter((id) => id === back.id)).toHaveLength(1);
    // The incident is closed where it was open: no more reminders to a.
    expect(await step.groups.groupsOfSubject('vehicle/veh-0003')).toEqual([]);
  });
});
