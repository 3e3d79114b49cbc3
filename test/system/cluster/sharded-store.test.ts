import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { draft, EVENT } from '../../../src/events/catalogue.js';
import {
  closeQuietly,
  createProducerConnection,
  masters,
  type RedisClient,
  waitForReady,
} from '../../../src/lib/redis-connection.js';
import { membershipRef } from '../../../src/pollers/membership-view.js';
import { createEventsQueue, type EventsQueue } from '../../../src/queues/events-queue.js';
import { EventLog } from '../../../src/store/event-log.js';
import { IncidentStore } from '../../../src/store/incidents.js';
import { OutboxRelay } from '../../../src/store/outbox-relay.js';
import { PollLeases } from '../../../src/store/poll-lease.js';
import { type CommitItem, SnapshotStore } from '../../../src/store/snapshot-store.js';
import { eventually } from '../../support/redis.js';
import {
  type RedisCluster,
  redisClusterUnavailable,
  startRedisCluster,
} from '../../support/redis-cluster.js';

/**
 * The store over 12 shards on a real Redis Cluster of 3 masters: every batch (commits, reads,
 * touches, leases, deletes) is accepted although its keys span every master (one pipeline or Lua
 * call per shard), each master holds a fair share of the snapshots, the per-shard relay loops
 * turn every event into exactly one job, and the readers of the event log and the incidents see
 * every shard.
 */

const unavailable = redisClusterUnavailable();
const SHARDS = 12;
const VEHICLES = 600;
const prefix = 'hs-cluster';
const at = '2026-03-01T10:00:00.000Z';

describe.skipIf(unavailable !== undefined)('the store over 12 shards on a Redis Cluster of 3 masters', () => {
  let cluster: RedisCluster;
  let redis: RedisClient;
  let store: SnapshotStore;
  let queue: EventsQueue;
  const ids = Array.from({ length: VEHICLES }, (_, i) => `veh-${String(i).padStart(4, '0')}`);
  const link = (id: string) => ({ kind: 'vehicle' as const, id, facet: 'link' });

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    redis = createProducerConnection({ cluster: cluster.nodes }, { name: 'test-sharded-store' });
    await waitForReady(redis, { timeoutMs: 10_000 });
    store = new SnapshotStore({ redis, prefix, installation: 'test', shards: SHARDS });
    queue = createEventsQueue({ connection: redis, prefix });
  });

  afterAll(async () => {
    await queue?.close();
    await closeQuietly(redis);
    await cluster?.stop();
  });

  it('commits, reads, touches and leases batches spanning every master, each master a fair share', async () => {
    const items: CommitItem[] = ids.map((id) => ({
      ref: link(id),
      expectedVersion: 0,
      next: { state: { vpnConnected: false }, observedAt: at },
      drafts: [
        draft(EVENT.vpnDisconnected, {
          previous: 'connected',
          current: 'disconnected',
          since: at,
          consecutive: 1,
        }),
      ],
      index: 'add',
    }));
    const results = await store.commitMany(items);
    expect(results.every((result) => result.committed)).toBe(true);
    const records = await store.read(ids.map(link));
    expect(records.map((record) => record.version)).toEqual(ids.map(() => 1));
    // Every shard's change feed names what was committed after the cursors, read from every
    // master in one go.
    const cursors = await store.changeCursors();
    expect(cursors.every((cursor) => cursor !== '')).toBe(true);
    const again = ids.filter((_, i) => i % 7 === 0);
    const next = {
      state: { vpnConnected: true },
      observedAt: new Date(Date.parse(at) + 1_000).toISOString(),
    };
    const second = await store.commitMany(
      again.map((id) => ({ ref: link(id), expectedVersion: 1, next, drafts: [] })),
    );
    expect(second.every((result) => result.committed)).toBe(true);
    const since = await store.changesSince(cursors);
    expect(since?.refs.map((ref) => ref.id).sort()).toEqual([...again].sort());
    await store.touch(ids.map((id) => ({ ref: link(id), polledAt: at })));
    expect((await store.readHeaders(ids.map(link))).every((record) => record.lastPolledAt === at)).toBe(true);
    expect((await store.listIds('vehicle')).sort()).toEqual(ids);

    const leases = new PollLeases({ redis, prefix, shards: SHARDS });
    const refs = ids.map((id) => ({ kind: 'vehicle' as const, id, scope: 'vehicles' }));
    expect(await leases.acquire(refs, 10_000, 'a')).toEqual(refs);
    expect(await leases.acquire(refs, 10_000, 'b')).toEqual([]);
    expect(await leases.release(refs, 'a')).toBe(VEHICLES);

    // Each master holds between 20 % and 50 % of the snapshot keys.
    const perMaster = await Promise.all(
      masters(redis).map(async (node) => {
        let count = 0;
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(
            cursor,
            'MATCH',
            `{${prefix}.*}:snap:vehicle:*`,
            'COUNT',
            1_000,
          );
          count += keys.length;
          cursor = next;
        } while (cursor !== '0');
        return count;
      }),
    );
    expect(perMaster).toHaveLength(3);
    expect(perMaster.reduce((sum, n) => sum + n, 0)).toBe(VEHICLES);
    for (const count of perMaster) {
      expect(count).toBeGreaterThanOrEqual(VEHICLES * 0.2);
      expect(count).toBeLessThanOrEqual(VEHICLES * 0.5);
    }
  });

  it("commits each membership part with its shard's events, and reads incidents of every shard", async () => {
    const removed = ids.slice(0, 24);
    const parts = Array.from({ length: SHARDS }, (_, shard) =>
      removed.filter((id) => store.keys.shardOf(`vehicle/${id}`) === shard),
    );
    expect(parts.filter((part) => part.length > 0).length).toBeGreaterThan(1);
    const results = await store.commitMany(
      parts.map((part, shard) => ({
        ref: membershipRef('vehicle', shard),
        expectedVersion: 0,
        next: { state: { known: [] }, observedAt: at },
        drafts: part.map((vehicleId) =>
          draft(EVENT.vehicleRemoved, { vehicleId, missingSince: at, missedLists: 3 }),
        ),
      })),
    );
    expect(results.every((result) => result.committed)).toBe(true);

    const incidents = new IncidentStore({ redis, prefix, shards: SHARDS });
    const open = await incidents.open();
    expect(open).toHaveLength(VEHICLES - removed.length);
    const some = open.find((record) => record.subject === `vehicle/${ids[100]}`);
    expect(some).toBeDefined();
    expect((await incidents.get(some?.id ?? ''))?.subject).toBe(`vehicle/${ids[100]}`);
    expect((await incidents.closed(1_000)).map((record) => record.subject).sort()).toEqual(
      removed.map((id) => `vehicle/${id}`),
    );
    const ack = await store.commitEvents({
      at,
      drafts: [
        draft(EVENT.incidentAcknowledged, {
          incident: some?.id ?? '',
          entity: some?.subject ?? '',
          key: 'vpn',
          firing: EVENT.vpnDisconnected,
          since: at,
          by: 'dana',
          comment: 'on it',
          until: '2026-03-01T12:00:00.000Z',
        }),
      ],
    });
    expect(ack.committed).toBe(true);
    expect((await incidents.get(some?.id ?? ''))?.ack?.by).toBe('dana');
  });

  it("relays every shard's outbox into the one events queue, and reads the log of every shard", async () => {
    const log = new EventLog({ redis, prefix, shards: SHARDS });
    const events = await log.range({ limit: 10_000 });
    expect(events).toHaveLength(VEHICLES + 24 + 1);
    expect(new Set(events.map((entry) => entry.streamId)).size).toBe(events.length);
    expect(await log.count()).toBe(events.length);

    const relay = new OutboxRelay({ redis, queue, prefix, shards: SHARDS, blockMs: 200 });
    await relay.start();
    await eventually(
      () => queue.getJobCountByTypes('waiting'),
      (n) => n === events.length,
      { timeoutMs: 20_000 },
    );
    await relay.stop();
    expect(relay.relayed).toBe(events.length);
    const lengths = await Promise.all(store.keys.allShards.map((shard) => redis.xlen(shard.outbox)));
    expect(lengths.every((n) => n === 0)).toBe(true);
    const jobs = await queue.getJobs(['waiting'], 0, -1);
    expect(jobs.map((job) => job.id).sort()).toEqual(events.map((entry) => entry.event.id).sort());
  });
});
