import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeQuietly,
  createProducerConnection,
  createWorkerConnection,
  waitForReady,
} from '../../../src/lib/redis-connection.js';
import { EntityOrder } from '../../../src/notifiers/dispatch/entity-order.js';
import { createEventsWorker, type EventsWorker } from '../../../src/notifiers/dispatch/events-worker.js';
import { createEventsQueue, type EventsQueue } from '../../../src/queues/events-queue.js';
import { storeKeys } from '../../../src/store/keys.js';
import { SnapshotStore } from '../../../src/store/snapshot-store.js';
import { deletePrefixKeys, eventually, redisUrl, uniquePrefix } from '../../support/redis.js';
import { commitChain } from './helpers.js';

/**
 * Guarantee 6: a subject's events are dispatched in commit order, whatever order their jobs reach
 * the events worker in; an event waits for a missing earlier one at most the longest wait.
 */

let producer: Redis;
let workerConnection: Redis;
const prefixes: string[] = [];
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  producer = createProducerConnection(redisUrl(), { name: 'test-order' });
  workerConnection = createWorkerConnection(redisUrl(), { name: 'test-order-worker' });
  await waitForReady(producer, { timeoutMs: 5_000 });
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  for (const prefix of prefixes) await deletePrefixKeys(producer, prefix);
  await closeQuietly([producer, workerConnection]);
});

function setup(): { prefix: string; store: SnapshotStore } {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  return { prefix, store: new SnapshotStore({ redis: producer, prefix, installation: 'test' }) };
}

describe('the order gate', () => {
  it('lets a subject’s events go in commit order, and other subjects’ events regardless', async () => {
    const { prefix, store } = setup();
    const [first, second, third] = await commitChain(store, 'rb-1', 3);
    const [other] = await commitChain(store, 'rb-2', 1);
    expect(await producer.lrange(storeKeys(prefix).order('robot/rb-1'), 0, -1)).toEqual(
      [first, second, third].map((event) => event!.id),
    );
    const order = new EntityOrder({ redis: producer, prefix, maxWaitMs: 60_000 });
    const now = Date.now();
    expect(await order.place(third!, now)).toEqual({ go: false, ahead: 2 });
    expect(await order.place(second!, now)).toEqual({ go: false, ahead: 1 });
    expect(await order.place(other!, now)).toEqual({ go: true, skipped: 0 });
    expect(await order.place(first!, now)).toEqual({ go: true, skipped: 0 });
    await order.done(first!);
    expect(await order.place(third!, now)).toEqual({ go: false, ahead: 1 });
    expect(await order.place(second!, now)).toEqual({ go: true, skipped: 0 });
    await order.done(second!);
    // Dispatched before: a redelivery goes at once (the dispatcher dedups it).
    expect(await order.place(first!, now)).toEqual({ go: true, skipped: 0 });
  });

  it('gives up on earlier events after the longest wait, once', async () => {
    const { prefix, store } = setup();
    const [first, second, third] = await commitChain(store, 'rb-3', 3);
    let now = 1_000_000;
    const order = new EntityOrder({ redis: producer, prefix, maxWaitMs: 5_000, now: () => now });
    expect(await order.place(third!, now)).toEqual({ go: false, ahead: 2 });
    now += 5_000;
    expect(await order.place(third!, now - 5_000)).toEqual({ go: true, skipped: 2 });
    expect(await producer.lrange(storeKeys(prefix).order('robot/rb-3'), 0, -1)).toEqual([third!.id]);
    // The ones given up on go at once when they come (late, and counted as such by the caller).
    expect(await order.place(first!, now)).toEqual({ go: true, skipped: 0 });
    expect(await order.place(second!, now)).toEqual({ go: true, skipped: 0 });
  });
});

describe('the events worker with the order gate', () => {
  async function run(maxWaitMs: number, prefix: string) {
    const queue: EventsQueue = createEventsQueue({ connection: producer, prefix });
    const dispatched: string[] = [];
    const held: string[] = [];
    const skipped: number[] = [];
    const worker: EventsWorker = createEventsWorker({
      connection: workerConnection,
      prefix,
      concurrency: 16,
      order: new EntityOrder({ redis: producer, prefix, maxWaitMs }),
      onOrder: { waited: (event) => held.push(event.id), gaveUp: (_event, n) => skipped.push(n) },
      // As the dispatcher does: nothing is written unless the gate lets the event go.
      dispatch: async (event, gate) => {
        if (gate && !(await gate)) return;
        dispatched.push(event.id);
      },
    });
    closers.push(
      () => worker.close(),
      () => queue.close(),
    );
    return { queue, dispatched, held, skipped };
  }

  it('dispatches a chain in commit order although its jobs arrive last-first', async () => {
    const { prefix, store } = setup();
    const chain = await commitChain(store, 'rb-4', 6);
    const { queue, dispatched, held } = await run(60_000, prefix);
    // The later five are queued first (a dead replica's relay held the first one back).
    for (const event of chain.slice(1).reverse()) await queue.add(event.type, event, { jobId: event.id });
    await eventually(
      async () => held.length,
      (n) => n > 0,
    );
    expect(dispatched).toEqual([]);
    await queue.add(chain[0]!.type, chain[0]!, { jobId: chain[0]!.id });
    await eventually(
      async () => dispatched.length,
      (n) => n === chain.length,
    );
    expect(dispatched).toEqual(chain.map((event) => event.id));
    expect(new Set(held).size).toBe(held.length);
  });

  it('dispatches without an earlier event that never comes, after the longest wait', async () => {
    const { prefix, store } = setup();
    const [, second] = await commitChain(store, 'rb-5', 2);
    const { queue, dispatched, skipped } = await run(500, prefix);
    await queue.add(second!.type, second!, { jobId: second!.id });
    await eventually(
      async () => dispatched.length,
      (n) => n === 1,
    );
    expect(dispatched).toEqual([second!.id]);
    expect(skipped).toEqual([1]);
  });
});
