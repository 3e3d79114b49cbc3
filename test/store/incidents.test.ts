import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { draft, EVENT } from '../../src/events/catalogue.js';
import type { EventDraft } from '../../src/events/types.js';
import { closeQuietly, createProducerConnection, waitForReady } from '../../src/lib/redis-connection.js';
import { EventLog } from '../../src/store/event-log.js';
import { CLOSED_RETENTION_MS, type IncidentRecord, IncidentStore } from '../../src/store/incidents.js';
import { type SnapshotRef, SnapshotStore } from '../../src/store/snapshot-store.js';
import { connect, deletePrefixKeys, redisUrl } from '../support/redis.js';

/**
 * The incident records are kept by the commit itself (store/incidents.ts, commit-script.ts): a
 * firing event opens one, its counterpart closes it, a removal closes the entity's, and an
 * acknowledgement is committed only while its incident is open — each in the same Lua call as the
 * events, so the records are as exact as the event log.
 */

// One shard is the layout of every store so far; with four, each subject's incidents are in its shard.
describe.each([1, 4])('incidents with %i shard(s)', (shards) => {
  const prefix = `hs-ti-${randomBytes(5).toString('hex')}`;
  let admin: Redis;
  let redis: Redis;
  let store: SnapshotStore;
  let incidents: IncidentStore;
  let log: EventLog;

  const T0 = Date.parse('2026-03-01T10:00:00.000Z');
  const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

  /** Commits drafts on a vehicle's link facet as the next version. */
  async function commitOn(ref: SnapshotRef, seconds: number, drafts: EventDraft[]) {
    const [record] = await store.read([ref]);
    const result = await store.commit(
      ref,
      record?.version ?? 0,
      { state: { n: seconds }, observedAt: at(seconds) },
      drafts,
    );
    if (!result.committed) throw new Error(`not committed: ${result.reason}`);
    return result.events;
  }

  const link = (id: string): SnapshotRef => ({ kind: 'vehicle', id, facet: 'link' });
  const lost = (since: number) =>
    draft(EVENT.vpnDisconnected, {
      previous: 'connected',
      current: 'disconnected',
      since: at(since),
      consecutive: 1,
    });
  const back = (since: number, durationMs: number) =>
    draft(EVENT.vpnConnected, {
      previous: 'disconnected',
      current: 'connected',
      since: at(since),
      durationMs,
    });

  beforeAll(async () => {
    admin = connect();
    redis = createProducerConnection(redisUrl(), { name: 'test-incidents' });
    await waitForReady(redis, { timeoutMs: 5_000 });
    store = new SnapshotStore({ redis, prefix, installation: 'test', shards });
    incidents = new IncidentStore({ redis, prefix, shards });
    log = new EventLog({ redis, prefix, shards });
  });

  afterAll(async () => {
    await deletePrefixKeys(admin, prefix);
    await closeQuietly([redis, admin]);
  });

  describe('incident records', () => {
    it('are opened by a firing event, updated by another, and closed by the resolution', async () => {
      const [fired] = await commitOn(link('veh-1'), 0, [lost(-10)]);
      const open = await incidents.openOf('vehicle/veh-1', 'vpn');
      expect(open).toMatchObject({
        subject: 'vehicle/veh-1',
        key: 'vpn',
        type: 'vehicle.vpn.disconnected',
        severity: 'warning',
        since: at(-10),
        changedAt: at(0),
        eventId: fired?.id,
        state: 'open',
      });
      expect(open?.id).toMatch(/^vpn-veh-1-[0-9a-f]{8}$/);
      expect(open?.event.id).toBe(fired?.id);

      // Another firing event of the same incident (as after a re-seed) updates it: same id and start.
      await commitOn(link('veh-1'), 5, [{ ...lost(-10), data: { ...lost(-10).data, severity: 'critical' } }]);
      const updated = await incidents.get(open?.id ?? '');
      expect(updated).toMatchObject({ id: open?.id, since: at(-10), changedAt: at(5), severity: 'critical' });
      expect(updated?.eventId).toBe(fired?.id);

      const [resolved] = await commitOn(link('veh-1'), 20, [back(-10, 30_000)]);
      expect(await incidents.openOf('vehicle/veh-1', 'vpn')).toBeUndefined();
      expect(await incidents.get(open?.id ?? '')).toMatchObject({
        state: 'closed',
        closedAt: at(20),
        closedBy: resolved?.id,
      });
      expect((await incidents.closed(10)).map((record) => record.id)).toContain(open?.id);

      // The next incident of the same vehicle is another one, with another id.
      await commitOn(link('veh-1'), 30, [lost(30)]);
      const next = await incidents.openOf('vehicle/veh-1', 'vpn');
      expect(next?.id).not.toBe(open?.id);
    });

    it('of a removed entity are closed by its removal', async () => {
      await commitOn({ kind: 'vehicle', id: 'veh-2', facet: 'power' }, 0, [
        draft(EVENT.vehicleUnreachable, {
          previous: 'reachable',
          current: 'unreachable',
          since: at(0),
          consecutiveFailures: 3,
          lastError: { code: 'timeout' },
        }),
      ]);
      await commitOn(link('veh-2'), 1, [lost(1)]);
      expect((await incidents.open()).filter((record) => record.subject === 'vehicle/veh-2')).toHaveLength(2);
      // The part of the membership list that holds veh-2 (its shard's).
      const membership: SnapshotRef = {
        kind: 'fleet',
        id: 'vehicle',
        facet: 'membership',
        shard: store.keys.shardOf('vehicle/veh-2'),
      };
      const [removed] = await commitOn(membership, 2, [
        draft(EVENT.vehicleRemoved, { vehicleId: 'veh-2', missingSince: at(0), missedLists: 3 }),
      ]);
      expect((await incidents.open()).filter((record) => record.subject === 'vehicle/veh-2')).toEqual([]);
      const closed = (await incidents.closed(100)).filter((record) => record.subject === 'vehicle/veh-2');
      expect(closed.map((record) => record.closedBy)).toEqual([removed?.id, removed?.id]);
    });

    it('take an acknowledgement with its event only while open', async () => {
      await commitOn(link('veh-3'), 0, [lost(0)]);
      const open = await incidents.openOf('vehicle/veh-3', 'vpn');
      const ack = (comment: string) =>
        draft(EVENT.incidentAcknowledged, {
          incident: open?.id ?? '',
          entity: 'vehicle/veh-3',
          key: 'vpn',
          firing: EVENT.vpnDisconnected,
          since: at(0),
          by: 'dana',
          comment,
          until: at(7_200),
        });
      const result = await store.commitEvents({ at: at(10), drafts: [ack('on it')] });
      expect(result.committed).toBe(true);
      if (!result.committed) return;
      expect(result.events[0]).toMatchObject({
        type: 'incident.acknowledged',
        subject: `incident/${open?.id}`,
        data: { incident: open?.id, by: 'dana', comment: 'on it' },
      });
      expect((await incidents.get(open?.id ?? ''))?.ack).toEqual({
        by: 'dana',
        comment: 'on it',
        at: at(10),
        until: at(7_200),
        eventId: result.events[0]?.id,
      });

      await commitOn(link('veh-3'), 20, [back(0, 20_000)]);
      const before = (await log.range({ type: 'incident.acknowledged', limit: 100 })).length;
      const late = await store.commitEvents({ at: at(30), drafts: [ack('too late')] });
      expect(late).toEqual({ committed: false, currentVersion: 0, reason: 'incident-not-open' });
      expect((await log.range({ type: 'incident.acknowledged', limit: 100 })).length).toBe(before);
      expect((await incidents.get(open?.id ?? ''))?.ack?.comment).toBe('on it');
    });

    it('closed longer than the retention are dropped by a later close', async () => {
      await commitOn(link('veh-4'), 0, [lost(0)]);
      const old = await incidents.openOf('vehicle/veh-4', 'vpn');
      await commitOn(link('veh-4'), 10, [back(0, 10_000)]);
      expect(await incidents.get(old?.id ?? '')).toBeDefined();
      const later = CLOSED_RETENTION_MS / 1000 + 60;
      // Each shard prunes its own closed incidents: the later close is of a vehicle of veh-4's shard.
      const neighbour = Array.from({ length: 100 }, (_, i) => `veh-5-${i}`).find(
        (id) => store.keys.shardOf(`vehicle/${id}`) === store.keys.shardOf('vehicle/veh-4'),
      )!;
      await commitOn(link(neighbour), later, [lost(later)]);
      await commitOn(link(neighbour), later + 10, [back(later, 10_000)]);
      expect(await incidents.get(old?.id ?? '')).toBeUndefined();
      expect((await incidents.closed(10_000)).map((record) => record.id)).not.toContain(old?.id);
    });

    it('are read with the store marker, and again only when their revision moved', async () => {
      const first = await incidents.readOpen();
      expect(first.records?.length).toBeGreaterThan(0);
      const same = await incidents.readOpen(first.revision);
      expect(same).toEqual({ epoch: first.epoch, revision: first.revision });
      await commitOn(link('veh-6'), 0, [lost(0)]);
      const moved = await incidents.readOpen(first.revision);
      expect(moved.revision).not.toBe(first.revision);
      expect(moved.records?.map((record) => record.subject)).toContain('vehicle/veh-6');
    });

    it('are read a chunk of records per round trip, every open one and no closed one', async () => {
      for (const id of ['veh-c1', 'veh-c2', 'veh-c3', 'veh-c4', 'veh-c5'])
        await commitOn(link(id), 0, [lost(0)]);
      const chunked = new IncidentStore({ redis, prefix, shards, openReadChunk: 2 });
      const whole = await incidents.readOpen();
      const read = await chunked.readOpen();
      expect(read.revision).toBe(whole.revision);
      expect(read.records?.length).toBeGreaterThan(2);
      const ids = (records: readonly IncidentRecord[] | undefined) => (records ?? []).map((r) => r.id).sort();
      expect(ids(read.records)).toEqual(ids(whole.records));
      expect(read.records?.every((record) => record.state === 'open')).toBe(true);
    });

    it('report a marker replaced while their records were read, with no records', async () => {
      const markers = store.keys.allShards.map((shard) => shard.storeMarker);
      const epochs = await Promise.all(markers.map((key) => admin.hget(key, 'epoch')));
      for (const key of markers) await admin.hset(key, 'epoch', 'known');
      expect((await incidents.readOpen()).epoch).toBe('known');
      let pipelines = 0;
      // The store's connection, except that once the first chunk of records has been read, another
      // replica claims a loss: every shard's marker copy gets a new epoch.
      const racing = new Proxy(redis, {
        get(target, property, receiver) {
          if (property !== 'pipeline') return Reflect.get(target, property, receiver);
          return () => {
            const pipeline = target.pipeline();
            pipelines += 1;
            if (pipelines !== 2) return pipeline;
            const exec = pipeline.exec.bind(pipeline);
            return Object.assign(pipeline, {
              exec: async () => {
                const replies = await exec();
                for (const shard of store.keys.allShards)
                  await admin.hset(shard.storeMarker, 'epoch', 'replaced');
                return replies;
              },
            });
          };
        },
      });
      try {
        const read = await new IncidentStore({ redis: racing, prefix, shards, openReadChunk: 1 }).readOpen();
        expect(read.epoch).toBe('replaced');
        expect(read.records).toBeUndefined();
      } finally {
        for (const [i, key] of markers.entries()) {
          const epoch = epochs[i];
          await (epoch === null || epoch === undefined
            ? admin.hdel(key, 'epoch')
            : admin.hset(key, 'epoch', epoch));
        }
      }
    });
  });
});
