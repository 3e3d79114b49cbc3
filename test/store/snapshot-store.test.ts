import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventDraft } from '../../src/events/types.js';
import { closeQuietly, createProducerConnection, waitForReady } from '../../src/lib/redis-connection.js';
import type { ShardKeys } from '../../src/store/keys.js';
import { eventId, SCRIPT_BATCH, type SnapshotRef, SnapshotStore } from '../../src/store/snapshot-store.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../support/redis.js';

function vehicle(id: string, facet = 'power'): SnapshotRef {
  return { kind: 'vehicle', id, facet };
}

function draft(type: string, current: unknown): EventDraft {
  return { type, data: { severity: 'info', current } };
}

// One shard is the layout of every store so far; four spread the keys over four hash tags.
describe.each([1, 4])('SnapshotStore with %i shard(s)', (shards) => {
  const prefix = uniquePrefix('hs');
  let admin: Redis;
  let redis: Redis;
  let store: SnapshotStore;

  /** The keys of the shard `ref` lives in. */
  function shardOf(ref: SnapshotRef): ShardKeys {
    return store.keys.shardKeys(store.shardOf(ref));
  }

  /** An entity id (`V-<n>`) whose subject `<kind>/<id>` is in `shard` (default: the shard of `subject`). */
  function idInShardOf(subject: string, shard = store.keys.shardOf(subject)): string {
    const kind = subject.slice(0, subject.indexOf('/'));
    for (let n = 0; ; n++) if (store.keys.shardOf(`${kind}/V-${n}`) === shard) return `V-${n}`;
  }

  async function streamLength(key: string): Promise<number> {
    return admin.xlen(key);
  }

  /** The length of a stream summed over every shard. */
  async function totalLength(stream: 'outbox' | 'events'): Promise<number> {
    const lengths = await Promise.all(store.keys.allShards.map((shard) => admin.xlen(shard[stream])));
    return lengths.reduce((sum, n) => sum + n, 0);
  }

  async function outboxEventIds(): Promise<string[]> {
    const ids: string[] = [];
    for (const shard of store.keys.allShards) {
      const entries = await admin.xrange(shard.outbox, '-', '+');
      ids.push(...entries.map(([, fields]) => fields[fields.indexOf('id') + 1]!));
    }
    return ids;
  }

  beforeAll(async () => {
    admin = connect();
    redis = createProducerConnection(redisUrl(), { name: 'test-store' });
    await waitForReady(redis, { timeoutMs: 5_000 });
    store = new SnapshotStore({ redis, prefix, installation: 'test', shards });
  });

  afterAll(async () => {
    await deletePrefixKeys(admin, prefix);
    await closeQuietly([redis, admin]);
  });

  describe('commits and reads', () => {
    it('reads an absent snapshot as version 0 without state', async () => {
      const [record] = await store.read([vehicle('absent')]);
      expect(record).toEqual({ version: 0, state: undefined });
    });

    it('commits at version 0, builds CloudEvents and reads the state back', async () => {
      const ref = vehicle('V-first');
      const observedAt = '2026-03-01T10:00:00.000Z';
      const result = await store.commit(
        ref,
        0,
        { state: { state: 'on', n: 12345678901234567890n.toString() }, observedAt, lastSeenAt: observedAt },
        [draft('vehicle.power.changed', 'on'), draft('vehicle.discovered', { id: 'V-first' })],
      );
      expect(result.committed).toBe(true);
      if (!result.committed) return;
      expect(result.version).toBe(1);
      expect(result.events).toHaveLength(2);
      const [first] = result.events;
      expect(first).toMatchObject({
        specversion: '1.0',
        source: 'fleetwatch/test',
        type: 'vehicle.power.changed',
        subject: 'vehicle/V-first',
        time: observedAt,
        datacontenttype: 'application/json',
        data: { severity: 'info', current: 'on', vehicleId: 'V-first' },
      });

      const [record] = await store.read([ref]);
      expect(record).toEqual({
        version: 1,
        state: { state: 'on', n: '12345678901234567890' },
        observedAt,
        lastSeenAt: observedAt,
      });

      const outbox = await admin.xrange(shardOf(ref).outbox, '-', '+');
      const mine = outbox.filter(([, fields]) => result.events.some((event) => fields.includes(event.id)));
      expect(mine).toHaveLength(2);
      const [, fields] = mine[0]!;
      expect(fields[0]).toBe('id');
      expect(JSON.parse(fields[3]!)).toEqual(first);
      const log = await admin.xrange(shardOf(ref).events, '-', '+');
      const logged = log.find(([, f]) => f.includes(first!.id));
      expect(logged?.[1]).toEqual([
        'id',
        first!.id,
        'type',
        first!.type,
        'subject',
        first!.subject,
        'event',
        fields[3],
      ]);
    });

    it('refuses a stale expected version and appends nothing', async () => {
      const ref = vehicle('V-stale');
      const at = (s: number) => new Date(Date.UTC(2026, 2, 1, 10, 0, s)).toISOString();
      expect(
        (await store.commit(ref, 0, { state: 1, observedAt: at(1) }, [draft('vehicle.power.changed', 1)]))
          .committed,
      ).toBe(true);
      const before = [await streamLength(shardOf(ref).outbox), await streamLength(shardOf(ref).events)];
      const result = await store.commit(ref, 0, { state: 2, observedAt: at(2) }, [
        draft('vehicle.power.changed', 2),
      ]);
      expect(result).toEqual({ committed: false, currentVersion: 1, reason: 'version-conflict' });
      expect([await streamLength(shardOf(ref).outbox), await streamLength(shardOf(ref).events)]).toEqual(
        before,
      );
      expect((await store.read([ref]))[0]).toMatchObject({ version: 1, state: 1 });
    });

    it('refuses a reading older than the stored one', async () => {
      const ref = vehicle('V-late');
      await store.commit(ref, 0, { state: 'new', observedAt: '2026-03-01T10:00:05.000Z' }, []);
      const before = await streamLength(shardOf(ref).outbox);
      const late = await store.commit(ref, 1, { state: 'old', observedAt: '2026-03-01T10:00:04.999Z' }, [
        draft('vehicle.power.changed', 'old'),
      ]);
      expect(late).toEqual({ committed: false, currentVersion: 1, reason: 'stale-observation' });
      expect(await streamLength(shardOf(ref).outbox)).toBe(before);
      expect((await store.read([ref]))[0]).toMatchObject({ version: 1, state: 'new' });
      // Same timestamp (coarse clocks) is still accepted.
      const same = await store.commit(ref, 1, { state: 'same', observedAt: '2026-03-01T10:00:05.000Z' }, []);
      expect(same.committed).toBe(true);
    });

    it('lets exactly one of 20 concurrent writers win, with exactly its events', async () => {
      const ref = vehicle('V-race');
      await store.commit(ref, 0, { state: 'start', observedAt: '2026-03-01T10:00:00.000Z' }, []);
      const connections = Array.from({ length: 20 }, (_, i) =>
        createProducerConnection(redisUrl(), { name: `test-racer-${i}` }),
      );
      try {
        await Promise.all(connections.map((connection) => waitForReady(connection, { timeoutMs: 5_000 })));
        const racers = connections.map(
          (connection) => new SnapshotStore({ redis: connection, prefix, installation: 'test', shards }),
        );
        const outboxBefore = new Set(await outboxEventIds());
        const logBefore = await streamLength(shardOf(ref).events);
        const results = await Promise.all(
          racers.map((racer, i) =>
            racer.commit(ref, 1, { state: `writer-${i}`, observedAt: '2026-03-01T10:00:01.000Z' }, [
              draft('vehicle.power.changed', i),
              draft('vehicle.power.command.completed', i),
            ]),
          ),
        );
        const winners = results.filter((result) => result.committed);
        expect(winners).toHaveLength(1);
        const winner = winners[0]!;
        if (!winner.committed) return;
        expect(results.filter((r) => !r.committed && r.reason === 'version-conflict')).toHaveLength(19);

        const added = (await outboxEventIds()).filter((id) => !outboxBefore.has(id));
        expect(added).toEqual(winner.events.map((event) => event.id));
        expect((await streamLength(shardOf(ref).events)) - logBefore).toBe(2);
        const winnerIndex = results.indexOf(winner);
        expect((await store.read([ref]))[0]).toMatchObject({ version: 2, state: `writer-${winnerIndex}` });
      } finally {
        await closeQuietly(connections);
      }
    });

    it("names each committed snapshot in its shard's change feed, once per reading, from where the last left", async () => {
      const at = (s: number) => new Date(Date.UTC(2026, 2, 1, 11, 0, s)).toISOString();
      const refs = ['V-feed-1', 'V-feed-2', 'V-feed:3'].map((id) => vehicle(id));
      for (const ref of refs) await store.commit(ref, 0, { state: 1, observedAt: at(1) }, []);
      const cursors = await store.changeCursors();
      expect(cursors).toHaveLength(shards);
      expect(await store.changesSince(cursors)).toEqual({ refs: [], cursors });
      // Two commits of one snapshot and one of another; a refused commit and a touch add nothing.
      await store.commit(refs[0]!, 1, { state: 2, observedAt: at(2) }, []);
      await store.commit(refs[0]!, 2, { state: 3, observedAt: at(3) }, []);
      await store.commit(refs[2]!, 1, { state: 2, observedAt: at(2) }, []);
      await store.commit(refs[1]!, 0, { state: 9, observedAt: at(9) }, []);
      await store.touch([{ ref: refs[1]!, polledAt: at(10) }]);
      const since = await store.changesSince(cursors);
      expect(
        since?.refs
          .map(({ kind, id, facet }) => ({ kind, id, facet }))
          .sort((a, b) => a.id.localeCompare(b.id)),
      ).toEqual([vehicle('V-feed-1'), vehicle('V-feed:3')]);
      // Followed on from the answer's cursors: nothing new.
      expect((await store.changesSince(since!.cursors))?.refs).toEqual([]);
      // More changes than asked for, a cursor the feed no longer holds, or none: read everything.
      expect(await store.changesSince(cursors, 1)).toBeUndefined();
      expect(await store.changesSince(cursors.map(() => ''))).toBeUndefined();
      expect(await store.changesSince(cursors.map(() => '1-0'))).toBeUndefined();
      expect(await store.changesSince([])).toBeUndefined();
    });

    it('derives stable, BullMQ-safe event ids', async () => {
      const key = store.keyOf(vehicle('V-ids'));
      const a = eventId(key, 3, 1_700_000_000_000, 0);
      expect(eventId(key, 3, 1_700_000_000_000, 0)).toBe(a);
      expect(eventId(key, 3, 1_700_000_000_000, 1)).not.toBe(a);
      expect(eventId(key, 4, 1_700_000_000_000, 0)).not.toBe(a);
      expect(a).toMatch(/^evt_[A-Za-z0-9_-]{22}$/);
      expect(a).not.toContain(':');
      expect(a).not.toMatch(/^\d+$/);

      const ref = vehicle('V-ids');
      const observedAt = '2026-03-01T10:00:00.000Z';
      const result = await store.commit(ref, 0, { state: 1, observedAt }, [
        draft('vehicle.power.changed', 1),
      ]);
      expect(result.committed && result.events[0]!.id).toBe(eventId(key, 1, Date.parse(observedAt), 0));
    });

    it('keeps and clears lastSeenAt / lastError as asked', async () => {
      const ref = vehicle('V-errors');
      const error = { code: 'http_503', status: 503, message: 'Service Unavailable' };
      await store.commit(
        ref,
        0,
        { state: 's', observedAt: '2026-03-01T10:00:00.000Z', lastSeenAt: '2026-03-01T10:00:00.000Z' },
        [],
      );
      await store.commit(
        ref,
        1,
        { state: 's', observedAt: '2026-03-01T10:00:10.000Z', lastError: error },
        [],
      );
      expect((await store.read([ref]))[0]).toEqual({
        version: 2,
        state: 's',
        observedAt: '2026-03-01T10:00:10.000Z',
        lastSeenAt: '2026-03-01T10:00:00.000Z',
        lastError: error,
      });
      await store.commit(
        ref,
        2,
        {
          state: 's',
          observedAt: '2026-03-01T10:00:20.000Z',
          lastSeenAt: '2026-03-01T10:00:20.000Z',
          lastError: null,
        },
        [],
      );
      const [record] = await store.read([ref]);
      expect(record?.lastError).toBeUndefined();
      expect(record?.lastSeenAt).toBe('2026-03-01T10:00:20.000Z');
    });

    it('maintains the entity index in the same call', async () => {
      const observedAt = '2026-03-01T10:00:00.000Z';
      await store.commit(vehicle('V-idx-1', 'list'), 0, { state: 1, observedAt }, [], { index: 'add' });
      await store.commit(
        vehicle('V-idx:2', 'list'),
        0,
        { state: 1, observedAt: '2026-03-01T10:00:01.000Z' },
        [],
        {
          index: 'add',
        },
      );
      expect(await store.listIds('vehicle')).toEqual(['V-idx-1', 'V-idx:2']);
      // ZADD NX keeps the first-seen score.
      await store.commit(
        vehicle('V-idx-1', 'list'),
        1,
        { state: 2, observedAt: '2026-03-01T11:00:00.000Z' },
        [],
        {
          index: 'add',
        },
      );
      expect(await admin.zscore(shardOf(vehicle('V-idx-1')).index('vehicle'), 'V-idx-1')).toBe(
        String(Date.parse(observedAt)),
      );
      await store.commit(
        vehicle('V-idx-1', 'list'),
        2,
        { state: 3, observedAt: '2026-03-01T12:00:00.000Z' },
        [],
        {
          index: 'remove',
        },
      );
      expect(await store.listIds('vehicle')).toEqual(['V-idx:2']);
      // A refused commit does not touch the index.
      await store.commit(vehicle('V-idx-3', 'list'), 5, { state: 1, observedAt }, [], { index: 'add' });
      expect(await store.listIds('vehicle')).toEqual(['V-idx:2']);
      await expect(
        store.commit(
          { kind: 'fleet', id: 'vehicle', facet: 'membership' },
          0,
          { state: [], observedAt },
          [],
          {
            index: 'add',
          },
        ),
      ).rejects.toThrow(/index/);
    });

    it('commits and reads 200 items in one pipelined round trip each', async () => {
      const refs = Array.from({ length: 200 }, (_, i) => vehicle(`V-bulk-${i}`, 'vpn'));
      const observedAt = '2026-03-01T10:00:00.000Z';
      const outboxBefore = await totalLength('outbox');
      const results = await store.commitMany(
        refs.map((ref, i) => ({
          ref,
          expectedVersion: 0,
          next: { state: { vpnConnected: i % 2 === 0 }, observedAt },
          drafts: [draft('vehicle.discovered', ref.id)],
          index: 'add' as const,
        })),
      );
      expect(results.every((result) => result.committed)).toBe(true);
      expect((await totalLength('outbox')) - outboxBefore).toBe(200);
      const ids = new Set(
        results.flatMap((result) => (result.committed ? result.events.map((e) => e.id) : [])),
      );
      expect(ids.size).toBe(200);

      const records = await store.read(refs);
      expect(records.map((record) => record.state)).toEqual(
        refs.map((_, i) => ({ vpnConnected: i % 2 === 0 })),
      );
      expect(records.every((record) => record.version === 1)).toBe(true);

      // A second round with one stale item: per-item outcomes.
      const again = await store.commitMany(
        refs.slice(0, 3).map((ref, i) => ({
          ref,
          expectedVersion: i === 1 ? 0 : 1,
          next: { state: 'x', observedAt: '2026-03-01T10:01:00.000Z' },
          drafts: [],
        })),
      );
      expect(again.map((result) => result.committed)).toEqual([true, false, true]);
    });

    it('takes the subject from the draft on fleet refs and from the ref on entity refs', async () => {
      const observedAt = '2026-03-01T10:00:00.000Z';
      const member = idInShardOf('vehicle/membership');
      const membership = await store.commit(
        { kind: 'fleet', id: 'vehicle', facet: 'membership' },
        0,
        { state: { known: [member] }, observedAt },
        [{ type: 'vehicle.discovered', data: { severity: 'info', vehicleId: member } }],
      );
      expect(membership.committed && membership.events[0]).toMatchObject({
        subject: `vehicle/${member}`,
        data: { vehicleId: member },
      });
      const robot = await store.commit(
        { kind: 'robot', id: 'R-1', facet: 'lease' },
        0,
        { state: 1, observedAt },
        [
          {
            type: 'robot.lease.changed',
            data: { severity: 'info', previous: null, current: 'op', expiresAt: null },
          },
        ],
      );
      expect(robot.committed && robot.events[0]).toMatchObject({
        subject: 'robot/R-1',
        data: { deviceId: 'R-1' },
      });
      // A fleet-level draft that names no entity is a programming error, caught before Redis.
      await expect(
        store.commit({ kind: 'fleet', id: 'robot', facet: 'membership' }, 0, { state: 1, observedAt }, [
          { type: 'robot.discovered', data: { severity: 'info' } },
        ]),
      ).rejects.toThrow(/subject/);
      expect((await store.read([{ kind: 'fleet', id: 'robot', facet: 'membership' }]))[0]?.version).toBe(0);
    });

    it.skipIf(shards === 1)('refuses a commit whose events belong to another shard', async () => {
      const ref = { kind: 'fleet', id: 'robot', facet: 'membership' } as const;
      const other = store.keys.allShards.find((shard) => shard.shard !== store.shardOf(ref))!;
      const stranger = idInShardOf('robot/membership', other.shard);
      const before = await totalLength('outbox');
      await expect(
        store.commit(ref, 0, { state: 1, observedAt: '2026-03-01T10:00:00.000Z' }, [
          { type: 'robot.discovered', data: { severity: 'info', deviceId: stranger } },
        ]),
      ).rejects.toThrow(
        /carries an event of robot\/.* which belongs to shard \d+: a commit's events must share/,
      );
      expect(await totalLength('outbox')).toBe(before);
      expect((await store.read([ref]))[0]?.version).toBe(0);
    });

    it('touches seen / err / polled without a new version', async () => {
      const ref = vehicle('V-touch');
      await store.commit(ref, 0, { state: { a: 1 }, observedAt: '2026-03-01T10:00:00.000Z' }, []);
      const error = { code: 'timeout', message: 'no answer' };
      await store.touch([{ ref, polledAt: '2026-03-01T10:00:30.000Z', lastError: error }]);
      expect((await store.read([ref]))[0]).toEqual({
        version: 1,
        state: { a: 1 },
        observedAt: '2026-03-01T10:00:00.000Z',
        lastError: error,
        lastPolledAt: '2026-03-01T10:00:30.000Z',
      });
      await store.touch([
        {
          ref,
          polledAt: '2026-03-01T10:01:00.000Z',
          lastSeenAt: '2026-03-01T10:01:00.000Z',
          lastError: null,
        },
      ]);
      expect((await store.read([ref]))[0]).toEqual({
        version: 1,
        state: { a: 1 },
        observedAt: '2026-03-01T10:00:00.000Z',
        lastSeenAt: '2026-03-01T10:01:00.000Z',
        lastPolledAt: '2026-03-01T10:01:00.000Z',
      });
      await expect(store.touch([{ ref, polledAt: 'later' }])).rejects.toThrow(/polledAt/);
    });

    it('reads and touches more snapshots than one script call takes, each in its place', async () => {
      const count = SCRIPT_BATCH * 2 + 7;
      const refs = Array.from({ length: count }, (_, n) => vehicle(`V-many-${n}`));
      const stored = refs.filter((_, n) => n % 3 === 0);
      const error = { code: 'timeout', message: 'no answer' };
      await store.commitMany(
        stored.map((ref) => ({
          ref,
          expectedVersion: 0,
          next: { state: { id: ref.id }, observedAt: '2026-03-01T10:00:00.000Z', lastError: error },
          drafts: [],
        })),
      );
      const records = await store.read(refs);
      expect(records).toHaveLength(count);
      records.forEach((record, n) => {
        if (n % 3 === 0)
          expect(record).toMatchObject({ version: 1, state: { id: `V-many-${n}` }, lastError: error });
        else expect(record).toEqual({ version: 0, state: undefined });
      });
      const headers = await store.readHeaders(stored);
      expect(headers.map((record) => [record.version, record.state, record.observedAt])).toEqual(
        stored.map(() => [1, undefined, '2026-03-01T10:00:00.000Z']),
      );
      // Stamps: the version and the observation time in ms, nothing else.
      const atMs = Date.parse('2026-03-01T10:00:00.000Z');
      expect(await store.readStamps(stored.slice(0, 2))).toEqual([
        { version: 1, state: undefined, observedAtMs: atMs },
        { version: 1, state: undefined, observedAtMs: atMs },
      ]);

      // Every other one clears its error, the rest leave it; only some are seen.
      await store.touch(
        stored.map((ref, n) => ({
          ref,
          polledAt: '2026-03-01T10:00:30.000Z',
          ...(n % 2 === 0 ? { lastSeenAt: '2026-03-01T10:00:30.000Z', lastError: null } : {}),
        })),
      );
      const touched = await store.read(stored);
      touched.forEach((record, n) => {
        expect(record.version).toBe(1);
        expect(record.lastPolledAt).toBe('2026-03-01T10:00:30.000Z');
        if (n % 2 === 0) {
          expect(record.lastError).toBeUndefined();
          expect(record.lastSeenAt).toBe('2026-03-01T10:00:30.000Z');
        } else {
          expect(record.lastError).toEqual(error);
          expect(record.lastSeenAt).toBeUndefined();
        }
      });
    });

    it('rejects malformed input before touching Redis', async () => {
      await expect(
        store.commit(vehicle('V-bad'), -1, { state: 1, observedAt: '2026-03-01T10:00:00Z' }, []),
      ).rejects.toThrow(RangeError);
      await expect(
        store.commit(vehicle('V-bad'), 0, { state: 1, observedAt: 'yesterday' }, []),
      ).rejects.toThrow(/observedAt/);
    });
  });
});
