import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Notification } from '../../../src/notifiers/notifier.js';
import { groupFor } from '../../../src/notifiers/routing/labels.js';
import { eventually } from '../../support/redis.js';
import { RECEIVER, type Rig, route, startRig, vpnBack, vpnLost } from '../dispatch/helpers.js';

let rig: Rig;

beforeEach(async () => {
  rig = await startRig();
});

afterEach(async () => {
  await rig.close();
});

const keyOf = (config = route()) =>
  groupFor(vpnLost('any'), {}, { routeId: '0', receiver: config.receiver, groupBy: config.group_by }).key;

describe('flushing groups', () => {
  it('reminds every repeat_interval while an incident fires, and stops once it resolves (with its duration)', async () => {
    const config = route({ group_wait: 200, group_interval: 500, repeat_interval: 1_000 });
    const replica = await rig.replica({ route: config });
    await replica.dispatch(vpnLost('veh-0010'));

    const posts = await rig.standin.waitFor(3, 8_000);
    expect(rig.texts()[0]).toContain('veh-0010 is off the VPN');
    expect(rig.texts()[1]).toContain('Still firing (reminder 1)');
    expect(rig.texts()[2]).toContain('Still firing (reminder 2)');
    const gap = (posts[2]?.at ?? 0) - (posts[1]?.at ?? 0);
    expect(gap).toBeGreaterThanOrEqual(900);
    expect(gap).toBeLessThan(2_000);

    await replica.dispatch(vpnBack('veh-0010', 32_000));
    await eventually(
      async () => rig.delivered.at(-1),
      (last) => last?.status === 'resolved',
      { timeoutMs: 5_000 },
    );
    const resolved = rig.delivered.at(-1) as Notification;
    expect(resolved.events[0]?.data.durationMs).toBe(32_000);
    await eventually(
      async () => rig.texts().at(-1) ?? '',
      (text) => text.includes('Resolved'),
    );
    expect(rig.texts().at(-1)).toMatch(/veh-0010 .* after 32s/);

    // Idle after the resolution: the group is deleted after one group_interval, so no reminder
    // can follow.
    const key = keyOf(config);
    await eventually(
      () => replica.groups.get(key),
      (record) => record === undefined,
      { timeoutMs: 5_000 },
    );
    expect(await replica.groups.wakeScore(key)).toBeUndefined();
    const count = rig.delivered.length;
    const queue = replica.queues.get(RECEIVER);
    if (!queue) throw new Error('no delivery queue');
    await eventually(
      () => queue.getJobCounts('waiting', 'active'),
      (counts) => counts.waiting === 0 && counts.active === 0,
    );
    expect(rig.delivered).toHaveLength(count);
    expect(
      rig.delivered.filter((notification) => notification.reminder).map((n) => n.reminder?.count),
    ).toEqual(Array.from({ length: count - 2 }, (_, index) => index + 1));
  });

  it('a reminder held back by a pending event of its incident waits for that flush instead of waking at every poll', async () => {
    let clock = Date.now();
    const config = route({ group_wait: 1_000, group_interval: 5_000, repeat_interval: 2_000 });
    const replica = await rig.replica({ route: config, now: () => clock, start: false });
    const key = keyOf(config);
    const start = clock;
    await replica.dispatch(vpnLost('veh-0050'));
    clock = start + 1_000;
    expect(await replica.flusher.flushGroup(key)).toMatchObject({
      kind: 'flushed',
      made: [{ status: 'firing' }],
    });
    expect(await replica.groups.wakeScore(key)).toBe(start + 3_000);

    clock = start + 2_500;
    await replica.dispatch(vpnLost('veh-0050'));
    clock = start + 3_000;
    expect(await replica.flusher.flushGroup(key)).toMatchObject({ kind: 'flushed', made: [] });
    // The pending event is due at max(2.5 s + group_wait, 1 s + group_interval) = 6 s.
    expect(await replica.groups.wakeScore(key)).toBe(start + 6_000);
    clock = start + 6_000;
    const looked = await replica.flusher.flushGroup(key);
    expect(looked).toMatchObject({ kind: 'flushed', made: [{ status: 'firing' }] });
    expect(await replica.groups.wakeScore(key)).toBe(start + 8_000);
  });

  it('a flush killed between its state write and the hand-off is handed over once, by the next wake, under the same id', async () => {
    const made: Notification[] = [];
    const dying = await rig.replica({
      hooks: {
        beforeHandOff: (notification) => {
          made.push(notification);
          throw new Error('SIGKILL');
        },
      },
    });
    await dying.dispatch(vpnLost('veh-0030'));
    await dying.dispatch(vpnLost('veh-0031'));
    await eventually(
      async () => made.length,
      (count) => count >= 1,
    );
    await dying.stop();

    const key = keyOf();
    const stranded = await dying.groups.get(key);
    expect(stranded?.outgoing.map((notification) => notification.id)).toEqual([made[0]?.id]);
    expect(stranded?.state.pending).toEqual([]);
    expect(await dying.queues.get(RECEIVER)?.getJobCounts('waiting', 'active', 'completed')).toEqual({
      waiting: 0,
      active: 0,
      completed: 0,
    });

    const survivor = await rig.replica();
    await rig.standin.waitFor(1);
    await eventually(
      () => survivor.groups.get(key),
      (record) => record !== undefined && record.outgoing.length === 0,
    );
    await eventually(
      async () => rig.delivered.length,
      (count) => count === 1,
    );
    expect(rig.delivered[0]?.id).toBe(made[0]?.id);
    expect(rig.delivered[0]?.events.map((event) => event.subject)).toEqual([
      'vehicle/veh-0030',
      'vehicle/veh-0031',
    ]);
    expect((await survivor.groups.get(key))?.state.sequence).toBe(1);
    expect(rig.posts()).toHaveLength(1);
  });

  it('a flush killed after the hand-off but before clearing it hands over again: the delivery queue keeps one job', async () => {
    let handedOff = 0;
    const replica = await rig.replica({
      hooks: {
        onHandedOff: () => {
          handedOff += 1;
          if (handedOff === 1) throw new Error('killed after the hand-off');
        },
      },
    });
    await replica.dispatch(vpnLost('veh-0040'));
    await eventually(
      async () => handedOff,
      (count) => count >= 2,
    );
    const key = keyOf();
    await eventually(
      () => replica.groups.get(key),
      (record) => record !== undefined && record.outgoing.length === 0,
    );
    await eventually(
      async () => rig.delivered.length,
      (count) => count === 1,
    );
    const queue = replica.queues.get(RECEIVER);
    expect(await queue?.getJobCounts('waiting', 'active', 'delayed', 'completed')).toEqual({
      waiting: 0,
      active: 0,
      delayed: 0,
      completed: 1,
    });
    expect(rig.posts()).toHaveLength(1);
  });

  it('a group that comes due while another look is under way is not kept waiting behind it', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const blocked: string[] = [];
    const replica = await rig.replica({
      route: route({ group_by: ['...'], group_wait: 0 }),
      hooks: {
        // The first vehicle's hand-off hangs, and with it the look that took its group.
        beforeHandOff: async (notification) => {
          if (notification.events.some((event) => event.subject === 'vehicle/veh-0060')) {
            blocked.push(notification.id);
            await held;
          }
        },
      },
    });
    await replica.dispatch(vpnLost('veh-0060'));
    await eventually(
      async () => blocked.length,
      (count) => count === 1,
    );
    await replica.dispatch(vpnLost('veh-0061'));
    await eventually(
      async () => rig.delivered.map((notification) => notification.events[0]?.subject),
      (subjects) => subjects.includes('vehicle/veh-0061'),
      { timeoutMs: 5_000 },
    );
    expect(rig.delivered.map((notification) => notification.events[0]?.subject)).toEqual([
      'vehicle/veh-0061',
    ]);

    release();
    await eventually(
      async () => rig.delivered.length,
      (count) => count === 2,
    );
    expect(blocked).toHaveLength(1);
  });

  it('a new event’s group is flushed by itself, not after every group that came due before it', async () => {
    // Due groups ahead of it, and the look that took the first of them stuck in their hand-offs.
    const backlog = 150;
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const config = route({ group_by: ['...'], group_wait: 0 });
    const idle = await rig.replica({ route: config, start: false });
    for (let i = 0; i < backlog; i += 1) await idle.dispatch(vpnLost(`veh-${String(1000 + i)}`));
    const stuck = new Set<string>();
    const replica = await rig.replica({
      route: config,
      hooks: {
        beforeHandOff: async (notification) => {
          if (notification.events.every((event) => event.subject !== 'vehicle/veh-0001')) {
            stuck.add(notification.id);
            await held;
          }
        },
      },
    });
    try {
      await eventually(
        async () => stuck.size,
        (count) => count >= 8,
      );
      // A look started now would take the 50 groups left, oldest first, before this one.
      await replica.dispatch(vpnLost('veh-0001'));
      await eventually(
        async () => rig.delivered.map((notification) => notification.events[0]?.subject),
        (subjects) => subjects.includes('vehicle/veh-0001'),
        { timeoutMs: 5_000 },
      );
      expect(rig.delivered).toHaveLength(1);
    } finally {
      release();
    }
    await eventually(
      async () => rig.delivered.length,
      (count) => count === backlog + 1,
      { timeoutMs: 15_000 },
    );
  }, 30_000);
});
