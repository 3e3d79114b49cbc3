import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FleetEvent } from '../../../src/events/types.js';
import { closeQuietly, createWorkerConnection } from '../../../src/lib/redis-connection.js';
import { EntityOrder } from '../../../src/notifiers/dispatch/entity-order.js';
import { createEventsWorker, type EventsWorker } from '../../../src/notifiers/dispatch/events-worker.js';
import { createEventsQueue, type EventsQueue } from '../../../src/queues/events-queue.js';
import { SnapshotStore } from '../../../src/store/snapshot-store.js';
import { eventually, redisUrl } from '../../support/redis.js';
import { commitChain, fleetEvent, type Replica, type Rig, startRig } from './helpers.js';

/**
 * Guarantee 6 through the notification step as the daemon wires it (`dispatch: step.dispatch`,
 * daemon.ts): the dispatcher is called while the order gate is asked, and must write nothing to a
 * group until the gate lets the event go. A later event whose job comes first is held, and its
 * group stays as it was; once the earlier one is dispatched, the group holds the chain in commit
 * order. (A stub dispatcher that honours the gate, as in entity-order.test.ts, cannot show a step
 * that drops it.)
 */

let rig: Rig;
let replica: Replica;
let workerConnection: Redis;
const closers: Array<() => Promise<unknown>> = [];

beforeEach(async () => {
  rig = await startRig();
  // No flusher: what the dispatcher wrote stays pending, to be looked at.
  replica = await rig.replica({ start: false });
  workerConnection = createWorkerConnection(redisUrl(), { name: 'test-gated-dispatch' });
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await rig.close();
  await closeQuietly(workerConnection);
});

/** The ids pending in every group of the rig, by group key. */
async function pendingIds(): Promise<Record<string, string[]>> {
  const keys = await rig.admin.zrange(replica.groups.keys.wake, '0', '-1');
  const out: Record<string, string[]> = {};
  for (const key of keys) {
    const record = await replica.groups.get(key);
    if (record) out[key] = record.state.pending.map((event) => event.id);
  }
  return out;
}

function events(): { queue: EventsQueue } {
  const queue = createEventsQueue({ connection: rig.admin, prefix: rig.prefix });
  closers.push(() => queue.close());
  return { queue };
}

describe('the events worker with the notification step’s dispatch', () => {
  it('writes nothing for an event the gate holds, and takes a chain into its group in commit order', async () => {
    const store = new SnapshotStore({ redis: rig.admin, prefix: rig.prefix, installation: 'test' });
    const chain = await commitChain(store, 'rb-1', 3);
    const held = new Set<string>();
    const dispatched: string[] = [];
    const worker: EventsWorker = createEventsWorker({
      connection: workerConnection,
      prefix: rig.prefix,
      order: new EntityOrder({ redis: replica.redis, prefix: rig.prefix, maxWaitMs: 60_000 }),
      onOrder: { waited: (event) => held.add(event.id), gaveUp: () => {} },
      onEvent: (event) => {
        dispatched.push(event.id);
      },
      // As daemon.ts wires it.
      dispatch: replica.dispatch,
    });
    closers.push(() => worker.close());
    const { queue } = events();
    // The later two come first (the first one's job is held by a dead replica, say).
    for (const event of chain.slice(1).reverse()) await queue.add(event.type, event, { jobId: event.id });
    await eventually(
      async () => held.size,
      (n) => n === 2,
    );
    expect(dispatched).toEqual([]);
    // Held back: not in any group yet (they would be flushed ahead of the first one).
    expect(await pendingIds()).toEqual({});

    await queue.add(chain[0]!.type, chain[0]!, { jobId: chain[0]!.id });
    await eventually(
      async () => dispatched.length,
      (n) => n === chain.length,
    );
    expect(dispatched).toEqual(chain.map((event) => event.id));
    expect(Object.values(await pendingIds())).toEqual([chain.map((event) => event.id)]);
  });

  it('survives the order check failing after the dispatcher’s reads did (a Redis restart)', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    closers.push(async () => process.off('unhandledRejection', onUnhandled));
    let rejectPlace: ((error: Error) => void) | undefined;
    let readsFailed = false;
    // An order check still under way when the dispatcher's reads have failed, and failing too.
    const order = {
      maxWaitMs: 60_000,
      place: () =>
        new Promise((_, reject) => {
          rejectPlace = reject;
        }),
      retryDelay: () => 50,
      done: async () => {},
    } as unknown as EntityOrder;
    const failed: string[] = [];
    const worker: EventsWorker = createEventsWorker({
      connection: workerConnection,
      prefix: rig.prefix,
      order,
      dispatch: async () => {
        readsFailed = true;
        throw new Error('reads failed: connection lost');
      },
    });
    worker.on('failed', (job: Job<FleetEvent> | undefined) => {
      if (job) failed.push(job.id ?? '');
    });
    closers.push(() => worker.close());
    const { queue } = events();
    const event = fleetEvent('robot.lease.changed', 'robot/rb-2');
    await queue.add(event.type, event, { jobId: event.id, attempts: 1 });
    await eventually(
      async () => readsFailed && rejectPlace !== undefined,
      (ready) => ready,
    );
    rejectPlace?.(new Error('LPOS: connection lost'));
    await eventually(
      async () => failed.length,
      (n) => n === 1,
    );
    // Unhandled rejections are reported once the microtasks run out: two turns of the loop.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
  });
});
