import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeQuietly, createProducerConnection, waitForReady } from '../../src/lib/redis-connection.js';
import { createEventsQueue, type EventsQueue } from '../../src/queues/events-queue.js';
import { OutboxRelay, type OutboxRelayOptions } from '../../src/store/outbox-relay.js';
import { SnapshotStore } from '../../src/store/snapshot-store.js';
import {
  connect,
  deletePrefixKeys,
  eventually,
  killClientByName,
  redisUrl,
  uniquePrefix,
} from '../support/redis.js';

let admin: Redis;
let producer: Redis;
const prefixes: string[] = [];
const queues: EventsQueue[] = [];
const relays: OutboxRelay[] = [];

interface Fixture {
  prefix: string;
  store: SnapshotStore;
  queue: EventsQueue;
  relay(options?: Partial<OutboxRelayOptions>): OutboxRelay;
  /** Commits `count` new entities with one event each; returns the event ids. */
  commit(count: number, tag?: string): Promise<string[]>;
  jobCount(): Promise<number>;
  /** Entries in the outboxes of every shard. */
  outboxLength(): Promise<number>;
  /** Entries pending in the `relay` group, over every shard. */
  pending(): Promise<number>;
}

function fixture(shards: number): Fixture {
  const prefix = uniquePrefix('hs');
  prefixes.push(prefix);
  const store = new SnapshotStore({ redis: producer, prefix, installation: 'test', shards });
  const outboxes = store.keys.allShards.map((shard) => shard.outbox);
  const sum = (counts: number[]) => counts.reduce((total, n) => total + n, 0);
  const queue = createEventsQueue({ connection: producer, prefix });
  queues.push(queue);
  let serial = 0;
  return {
    prefix,
    store,
    queue,
    relay(options = {}) {
      const relay = new OutboxRelay({ redis: producer, queue, prefix, shards, blockMs: 200, ...options });
      relays.push(relay);
      return relay;
    },
    async commit(count, tag = 'v') {
      const results = await store.commitMany(
        Array.from({ length: count }, () => {
          const id = `${tag}-${serial++}`;
          return {
            ref: { kind: 'vehicle' as const, id, facet: 'list' },
            expectedVersion: 0,
            next: { state: { present: true }, observedAt: '2026-03-01T10:00:00.000Z' },
            drafts: [{ type: 'vehicle.discovered', data: { severity: 'info' as const, current: { id } } }],
          };
        }),
      );
      return results.flatMap((result) => (result.committed ? result.events.map((event) => event.id) : []));
    },
    async jobCount() {
      const counts = await queue.getJobCounts(
        'waiting',
        'active',
        'delayed',
        'prioritized',
        'completed',
        'failed',
      );
      return sum(Object.values(counts));
    },
    async outboxLength() {
      return sum(await Promise.all(outboxes.map((key) => admin.xlen(key))));
    },
    async pending() {
      const replies = await Promise.all(
        outboxes.map(async (key) => {
          try {
            return ((await admin.xpending(key, 'relay')) as [number])[0];
          } catch {
            return 0; // no group on an outbox nothing was committed to
          }
        }),
      );
      return sum(replies);
    },
  };
}

async function jobIds(queue: EventsQueue): Promise<string[]> {
  const jobs = await queue.getJobs(['waiting'], 0, -1);
  return jobs.map((job) => job.id!).sort();
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

beforeAll(async () => {
  admin = connect();
  producer = createProducerConnection(redisUrl(), { name: 'test-relay-producer' });
  await waitForReady(producer, { timeoutMs: 5_000 });
});

afterAll(async () => {
  await Promise.all(relays.map((relay) => relay.stop()));
  await Promise.all(queues.map((queue) => queue.close()));
  for (const prefix of prefixes) await deletePrefixKeys(admin, prefix);
  await closeQuietly([producer, admin]);
});

// One shard is the layout of every store so far; with four, one loop (and connection) per shard.
describe.each([1, 4])('OutboxRelay with %i shard(s)', (shards) => {
  describe('relaying', () => {
    it('turns N committed events into exactly N jobs with job id = event id', async () => {
      const f = fixture(shards);
      const before = await f.commit(120);
      const relay = f.relay();
      await relay.start();
      const after = await f.commit(80);
      const expected = [...before, ...after].sort();

      await eventually(
        () => f.jobCount(),
        (n) => n >= 200,
      );
      await eventually(
        () => f.outboxLength(),
        (n) => n === 0,
      );
      expect(await jobIds(f.queue)).toEqual(expected);
      const job = await f.queue.getJob(expected[0]!);
      expect(job?.name).toBe('vehicle.discovered');
      expect(job?.data).toMatchObject({ specversion: '1.0', id: expected[0], source: 'fleetwatch/test' });
      // BullMQ keys share the store's hash tag.
      expect(await admin.exists(`{${f.prefix}}:events:${expected[0]}`)).toBe(1);
      await relay.stop();
      expect(relay.relayed).toBe(200);
      expect(await f.jobCount()).toBe(200);
    });

    it('recovers entries a crashed relay added but never acknowledged, without duplicate jobs', async () => {
      const f = fixture(shards);
      const ids = await f.commit(50);
      const release = deferred();
      const crashed = f.relay({
        consumer: 'crashed',
        hooks: {
          // "Killed" here, in every shard's loop: jobs added, entries still pending.
          afterAdd: () => release.promise,
        },
      });
      void crashed.start();
      await eventually(
        () => f.jobCount(),
        (n) => n === 50,
      );
      expect(await f.pending()).toBe(50);

      const rescuer = f.relay({ consumer: 'rescuer', claimIdleMs: 150, claimIntervalMs: 50 });
      await rescuer.start();
      await eventually(
        () => f.outboxLength(),
        (n) => n === 0,
      );
      expect(rescuer.reclaimed).toBe(50);
      expect(await jobIds(f.queue)).toEqual([...ids].sort());

      // The "dead" relay wakes up late and acknowledges: still no duplicate, nothing pending.
      release.resolve();
      await crashed.stop();
      await rescuer.stop();
      expect(await f.jobCount()).toBe(50);
      expect(await f.pending()).toBe(0);
    });

    it('reclaims entries left pending by a consumer that vanished, even when some jobs exist already', async () => {
      const f = fixture(shards);
      const ids = await f.commit(30);
      const entries: Array<[string, string[]]> = [];
      for (const { outbox } of f.store.keys.allShards) {
        await admin.xgroup('CREATE', outbox, 'relay', '0', 'MKSTREAM');
        const read = (await admin.xreadgroup(
          'GROUP',
          'relay',
          'ghost',
          'COUNT',
          100,
          'STREAMS',
          outbox,
          '>',
        )) as Array<[string, Array<[string, string[]]>]> | null;
        entries.push(...(read?.[0]?.[1] ?? []));
      }
      expect(entries).toHaveLength(30);
      // The ghost got as far as adding the first ten jobs.
      for (const [, fields] of entries.slice(0, 10)) {
        const event = JSON.parse(fields[3]!);
        await f.queue.add(event.type, event, { jobId: event.id });
      }
      const relay = f.relay({ claimIdleMs: 100, claimIntervalMs: 50 });
      await relay.start();
      await eventually(
        () => f.outboxLength(),
        (n) => n === 0,
      );
      await relay.stop();
      expect(await jobIds(f.queue)).toEqual([...ids].sort());
      expect(await f.jobCount()).toBe(30);
    });

    it('runs side by side with other relays: every event exactly once', async () => {
      const f = fixture(shards);
      const a = f.relay({ consumer: 'a', batchSize: 7 });
      const b = f.relay({ consumer: 'b', batchSize: 11 });
      const c = f.relay({ consumer: 'c', batchSize: 100 });
      await Promise.all([a.start(), b.start(), c.start()]);
      const ids: string[] = [];
      for (let round = 0; round < 6; round += 1) ids.push(...(await f.commit(50, `r${round}`)));
      await eventually(
        () => f.jobCount(),
        (n) => n >= 300,
      );
      await eventually(
        () => f.outboxLength(),
        (n) => n === 0,
      );
      await Promise.all([a.stop(), b.stop(), c.stop()]);
      expect(a.relayed + b.relayed + c.relayed).toBe(300);
      expect(await jobIds(f.queue)).toEqual([...ids].sort());
    });

    it('survives its connection being dropped and keeps relaying', async () => {
      const f = fixture(shards);
      const relay = f.relay({ consumer: 'droppy' });
      await relay.start();
      await f.commit(5);
      await eventually(
        () => f.jobCount(),
        (n) => n === 5,
      );
      // With shards, each shard's loop has a connection of its own: drop shard 0's.
      expect(await killClientByName(admin, `fleetwatch:relay:droppy${shards === 1 ? '' : ':0'}`)).toBe(1);
      await f.commit(5);
      await eventually(
        () => f.jobCount(),
        (n) => n === 10,
      );
      await eventually(
        () => f.outboxLength(),
        (n) => n === 0,
      );
      await relay.stop();
      expect(relay.running).toBe(false);
    });

    it('moves unparseable entries aside instead of looping on them', async () => {
      const f = fixture(shards);
      await admin.xadd(f.store.keys.shardKeys(0).outbox, '*', 'id', 'evt_broken', 'event', '{not json');
      const good = await f.commit(1);
      const relay = f.relay();
      await relay.start();
      await eventually(
        () => f.outboxLength(),
        (n) => n === 0,
      );
      await relay.stop();
      expect(await jobIds(f.queue)).toEqual(good);
      const rejected = await admin.xrange(f.store.keys.shardKeys(0).outboxRejected, '-', '+');
      expect(rejected).toHaveLength(1);
      expect(rejected[0]![1]).toContain('evt_broken');
    });
  });
});
