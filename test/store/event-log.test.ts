import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventDraft } from '../../src/events/types.js';
import { closeQuietly, createProducerConnection, waitForReady } from '../../src/lib/redis-connection.js';
import { EventLog, globToRegExp } from '../../src/store/event-log.js';
import { type SnapshotRef, SnapshotStore } from '../../src/store/snapshot-store.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../support/redis.js';

let admin: Redis;
let redis: Redis;
const prefixes: string[] = [];

function setup(shards: number, eventLogCap?: number) {
  const prefix = uniquePrefix('hs');
  prefixes.push(prefix);
  const store = new SnapshotStore({
    redis,
    prefix,
    installation: 'test',
    shards,
    ...(eventLogCap ? { eventLogCap } : {}),
  });
  const log = new EventLog({ redis, prefix, shards });
  const versions = new Map<string, number>();
  let second = 0;
  async function emit(kind: 'vehicle' | 'robot', id: string, ...types: string[]): Promise<string[]> {
    const ref: SnapshotRef = { kind, id, facet: 's' };
    const version = versions.get(`${kind}/${id}`) ?? 0;
    const drafts: EventDraft[] = types.map((type) => ({ type, data: { severity: 'info' } }));
    second += 1;
    const observedAt = new Date(Date.UTC(2026, 2, 1, 10, 0, 0) + second * 1000).toISOString();
    const result = await store.commit(ref, version, { state: second, observedAt }, drafts);
    if (!result.committed) throw new Error('commit refused');
    versions.set(`${kind}/${id}`, result.version);
    return result.events.map((event) => event.id);
  }
  return { prefix, store, log, emit };
}

beforeAll(async () => {
  admin = connect();
  redis = createProducerConnection(redisUrl(), { name: 'test-event-log' });
  await waitForReady(redis, { timeoutMs: 5_000 });
});

afterAll(async () => {
  for (const prefix of prefixes) await deletePrefixKeys(admin, prefix);
  await closeQuietly([redis, admin]);
});

describe('globToRegExp', () => {
  it('matches like a shell glob on dotted types', () => {
    expect(globToRegExp('vehicle.vpn.*').test('vehicle.vpn.disconnected')).toBe(true);
    expect(globToRegExp('vehicle.vpn.*').test('vehicle.vpnx.disconnected')).toBe(false);
    expect(globToRegExp('*.changed').test('robot.lease.changed')).toBe(true);
    expect(globToRegExp('robot.?ealth.up').test('robot.health.up')).toBe(true);
    expect(globToRegExp('a+b').test('aab')).toBe(false);
  });
});

// One shard is the layout of every store so far; with four, readers merge four streams.
describe.each([1, 4])('EventLog with %i shard(s)', (shards) => {
  /**
   * Across shards the log is in time order to the millisecond only (entries of one millisecond by
   * shard), and a tail passes on whichever shard answers first: lists of several subjects are
   * compared as sets there. One subject's events are in one shard, in commit order.
   */
  const inOrder = (ids: ReadonlyArray<string | undefined>) => (shards === 1 ? [...ids] : [...ids].sort());
  describe('reading and following', () => {
    it('keeps roughly the configured number of entries', async () => {
      const { log, emit } = setup(shards, 100);
      for (let i = 0; i < 30 * shards; i += 1)
        await emit('vehicle', `V-${i}`, ...Array.from({ length: 20 }, () => 'vehicle.ip.changed'));
      const count = await log.count();
      // MAXLEN ~ trims whole radix-tree nodes (100 entries by default), so allow one node of slack
      // (per shard: each keeps its share of the cap, 100 / shards).
      expect(count).toBeGreaterThanOrEqual(100);
      expect(count).toBeLessThan(shards === 1 ? 300 : shards * 150);
    });

    it('filters by type glob and subject, newest last, with a limit', async () => {
      const { log, emit } = setup(shards);
      const [d1] = await emit('vehicle', 'V-1', 'vehicle.vpn.disconnected');
      await emit('vehicle', 'V-2', 'vehicle.power.changed');
      const [c1] = await emit('vehicle', 'V-1', 'vehicle.vpn.connected');
      const [d3] = await emit('vehicle', 'V-3', 'vehicle.vpn.disconnected');
      await emit('robot', 'R-1', 'robot.health.down');

      const vpn = await log.range({ type: 'vehicle.vpn.*' });
      expect(inOrder(vpn.map((entry) => entry.event.id))).toEqual(inOrder([d1, c1, d3]));
      const v1 = await log.range({ subject: 'vehicle/V-1' });
      expect(v1.map((entry) => entry.event.type)).toEqual([
        'vehicle.vpn.disconnected',
        'vehicle.vpn.connected',
      ]);
      const both = await log.range({ type: 'vehicle.vpn.*', subject: 'vehicle/V-3' });
      expect(both.map((entry) => entry.event.id)).toEqual([d3]);
      const newest2 = await log.range({ type: 'vehicle.vpn.*', limit: 2 });
      if (shards === 1) {
        expect(newest2.map((entry) => entry.event.id)).toEqual([c1, d3]);
        expect((await log.range()).map((entry) => entry.event.type).at(-1)).toBe('robot.health.down');
      } else {
        expect(newest2).toHaveLength(2);
        expect((await log.range()).map((entry) => entry.event.type)).toContain('robot.health.down');
      }
      expect(await log.range({ type: 'nothing.*' })).toEqual([]);
    });

    it('pages forward from a stream id and starts at an ISO time', async () => {
      const { log, emit } = setup(shards);
      for (let i = 0; i < 10; i += 1) await emit('vehicle', `V-${i}`, 'vehicle.discovered');
      const all = await log.range({ limit: 100 });
      expect(all).toHaveLength(10);

      const page1 = await log.range({ since: '0-0', limit: 4 });
      const page2 = await log.range({ since: page1.at(-1)!.streamId, limit: 4 });
      const page3 = await log.range({ since: page2.at(-1)!.streamId, limit: 4 });
      expect([...page1, ...page2, ...page3].map((entry) => entry.streamId)).toEqual(
        all.map((entry) => entry.streamId),
      );
      expect(page3).toHaveLength(2);

      const future = new Date(Date.now() + 3_600_000).toISOString();
      expect(await log.range({ since: future })).toEqual([]);
      const past = new Date(Date.now() - 3_600_000).toISOString();
      expect(await log.range({ since: past })).toHaveLength(10);
      await expect(log.range({ since: 'last tuesday' })).rejects.toThrow(RangeError);
    });

    it('tails new events as they are committed', async () => {
      const { log, emit } = setup(shards);
      await emit('vehicle', 'V-old', 'vehicle.discovered');
      const tail = log.tail({ blockMs: 500 });
      await tail.ready;
      const first = tail.next();
      const [id1] = await emit('vehicle', 'V-1', 'vehicle.vpn.disconnected');
      expect((await first).value?.event.id).toBe(id1);
      const [id2, id3] = await emit('robot', 'R-1', 'robot.health.down', 'robot.lease.changed');
      expect((await tail.next()).value?.event.id).toBe(id2);
      expect((await tail.next()).value?.event.id).toBe(id3);
      await tail.close();
      expect((await tail.next()).done).toBe(true);
    });

    it('tails with a filter, resumes from an id and ends on abort', async () => {
      const { log, emit } = setup(shards);
      const [before] = await emit('vehicle', 'V-1', 'vehicle.vpn.disconnected');
      const start = (await log.range()).at(-1)!.streamId;
      const [after] = await emit('vehicle', 'V-1', 'vehicle.vpn.connected');

      const controller = new AbortController();
      const resumed = log.tail({
        fromId: '0-0',
        type: 'vehicle.vpn.*',
        signal: controller.signal,
        blockMs: 500,
      });
      const seen: string[] = [];
      const done = (async () => {
        for await (const entry of resumed) {
          seen.push(entry.event.id);
          if (seen.length === 3) controller.abort();
        }
      })();
      await emit('vehicle', 'V-2', 'vehicle.power.changed');
      const [third] = await emit('vehicle', 'V-2', 'vehicle.vpn.disconnected');
      await done;
      expect(inOrder(seen)).toEqual(inOrder([before, after, third]));

      // After `start`: of V-1 only `after` (other subjects may be in shards that answer first).
      const fromStart = log.tail({ fromId: start, subject: 'vehicle/V-1', blockMs: 500 });
      expect((await fromStart.next()).value?.event.id).toBe(after);
      await fromStart.close();
    });
  });

  it.skipIf(shards === 1)(
    "follows every shard in merged-id order, an entry waiting for another shard's earlier one",
    async () => {
      const { log } = setup(shards);
      const tail = log.tail({ blockMs: 500, holdMs: 60_000 });
      await tail.ready;
      const ms = Date.now() + 60_000;
      const entry = (id: string) => ['type', 'x.test', 'subject', 'x/1', 'event', JSON.stringify({ id })];
      // The last shard logs first, the first shard an entry stamped before it a moment later.
      const [first, last] = [log.keys.allShards[0]!, log.keys.allShards.at(-1)!];
      await redis.xadd(last.events, `${ms}-0`, ...entry('later'));
      const next = tail.next();
      await new Promise((resolve) => setTimeout(resolve, 200));
      await redis.xadd(first.events, `${ms - 5}-0`, ...entry('earlier'));
      // Each goes once every other shard has logged past it (after the hold otherwise).
      for (const shard of log.keys.allShards.slice(0, -1)) {
        await redis.xadd(shard.events, `${ms + 5}-0`, ...entry(`past-${shard.shard}`));
      }
      expect((await next).value?.event.id).toBe('earlier');
      expect((await tail.next()).value?.event.id).toBe('later');
      await tail.close();
    },
  );

  it.skipIf(shards === 1)('names entries by merged ids that page without loss or repeat', async () => {
    const { log, emit } = setup(shards);
    // Several subjects per commit round, so that shards get entries in the same millisecond.
    for (let i = 0; i < 40; i += 1)
      await emit('vehicle', `V-${i % 8}`, 'vehicle.ip.changed', 'vehicle.ip.changed');
    const all = await log.range({ limit: 1_000 });
    expect(all).toHaveLength(80);
    expect(new Set(all.map((entry) => entry.streamId)).size).toBe(80);
    const pages: string[] = [];
    let since = '0-0';
    for (;;) {
      const page = await log.range({ since, limit: 7 });
      if (page.length === 0) break;
      pages.push(...page.map((entry) => entry.streamId));
      since = page.at(-1)!.streamId;
    }
    expect(pages).toEqual(all.map((entry) => entry.streamId));
    const back: string[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await log.range({ limit: 9, ...(before ? { before } : {}) });
      if (page.length === 0) break;
      back.unshift(...page.map((entry) => entry.streamId));
      before = page[0]!.streamId;
    }
    expect(back).toEqual(pages);
    expect(await log.count()).toBe(80);
  });
});
