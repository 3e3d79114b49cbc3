import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { closeQuietly, createProducerConnection, waitForReady } from '../../../src/lib/redis-connection.js';
import { type GroupRecord, newRecord, reschedule } from '../../../src/notifiers/aggregation/group-record.js';
import { GroupStore, KNOWN_IDLE_MS } from '../../../src/notifiers/aggregation/group-store.js';
import {
  addEvent,
  closeSubject,
  flush,
  type GroupState,
  openGroup,
  reminders,
} from '../../../src/notifiers/aggregation/groups.js';
import { groupFor } from '../../../src/notifiers/routing/labels.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../../support/redis.js';
import { routeMatch, vpnBack, vpnLost } from '../routing/helpers.js';

const prefix = uniquePrefix();
const policy = { handOffRetryMs: 1_000, redeliveryMs: 0 };
const match = routeMatch({ groupWait: 1_000, groupInterval: 2_000 });
let admin: Redis;
let connections: Redis[];
let stores: GroupStore[];

beforeAll(async () => {
  admin = connect();
  connections = [0, 1].map(() => createProducerConnection(redisUrl(), { name: 'test-group-store' }));
  await Promise.all(connections.map((redis) => waitForReady(redis, { timeoutMs: 5_000 })));
  stores = connections.map((redis) => new GroupStore({ redis, prefix }));
});

afterAll(async () => {
  await deletePrefixKeys(admin, prefix);
  await closeQuietly([...connections, admin]);
});

function emptyGroup(key: string, now: number): GroupRecord {
  return reschedule(newRecord(openGroup({ key, labels: {} }, match, now)), now, policy);
}

/** Counts in `sequence`: a stand-in for any read-modify-write. */
function increment(now: number) {
  return (current: GroupRecord | undefined) => {
    const record = current ?? emptyGroup('counter', now);
    return {
      result: record.state.sequence + 1,
      next: { ...record, state: { ...record.state, sequence: record.state.sequence + 1 } },
    };
  };
}

describe('GroupStore', () => {
  it('applies concurrent read-modify-writes from two replicas exactly once each', async () => {
    const now = Date.now();
    const [one, two] = stores as [GroupStore, GroupStore];
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, index) =>
        (index % 2 === 0 ? one : two).update('counter', increment(now)),
      ),
    );
    expect(new Set(results).size).toBe(60);
    const record = await one.get('counter');
    expect(record?.state.sequence).toBe(60);
    // The wake set holds the record's wake time (an idle group: the end of its grace).
    expect(await one.wakeScore('counter')).toBe(record?.wakeAt);
  });

  it('keeps the wake set and the subject sets in step with the record, and deletes cleanly', async () => {
    const now = Date.now();
    const [store] = stores as [GroupStore];
    const event = vpnLost('veh-0001');
    const group = groupFor(event, {}, match);
    await store.update(group.key, (current) => {
      const state = addEvent(current?.state ?? openGroup(group, match, now), event, now, match);
      return { result: undefined, next: reschedule(newRecord(state), now, policy) };
    });
    expect(await store.groupsOfSubject('vehicle/veh-0001')).toEqual([group.key]);
    expect(await store.wakeScore(group.key)).toBe(now + 1_000);

    await store.update(group.key, (current) => ({
      result: undefined,
      next: current && { ...current, state: closeSubject(current.state, 'vehicle/veh-0001') },
    }));
    expect(await store.groupsOfSubject('vehicle/veh-0001')).toEqual([]);

    await store.update(group.key, () => ({ result: undefined, next: null }));
    expect(await store.get(group.key)).toBeUndefined();
    expect(await store.wakeScore(group.key)).toBeUndefined();
  });

  it('leases due groups to one flusher at a time; a lease that runs out makes them due again', async () => {
    const now = Date.now();
    const [one, two] = stores as [GroupStore, GroupStore];
    await one.update('lease', () => ({
      result: undefined,
      next: { ...emptyGroup('lease', now), wakeAt: now },
    }));
    expect(await one.claimDue(now, now + 500, 10)).toContain('lease');
    expect(await two.claimDue(now + 100, now + 600, 10)).not.toContain('lease');
    expect(await two.claimDue(now + 500, now + 1_000, 10)).toContain('lease');
    // A wake entry whose group is gone is dropped by `forget`, not by a live group.
    await one.forget('lease');
    expect(await one.wakeScore('lease')).toBe(now + 1_000);
    await admin.del(one.keys.group('lease'));
    await one.forget('lease');
    expect(await one.wakeScore('lease')).toBeUndefined();
  });

  it('applies queued changes to one group in call order; a throwing change fails alone', async () => {
    const now = Date.now();
    const [store] = stores as [GroupStore];
    const failing = store.update('batch', () => {
      throw new Error('a bug in one mutator');
    });
    const results = await Promise.all([
      ...Array.from({ length: 20 }, () => store.update('batch', increment(now))),
      failing.catch((error: Error) => error.message),
    ]);
    expect(results.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
    expect(results[20]).toBe('a bug in one mutator');
    expect((await store.get('batch'))?.state.sequence).toBe(20);
  });

  it('grows the lists of the versions it wrote in place, never of those it read', async () => {
    // A storm's pending events are copied neither per event nor per write (group-store.ts, `Stored`).
    const [store, other] = stores as [GroupStore, GroupStore];
    const now = Date.now();
    const key = `${groupFor(vpnLost('any'), {}, match).key}-batch`;
    const seen: Array<readonly unknown[]> = [];
    const add = (id: string) => (current: GroupRecord | undefined) => {
      const before = current?.state ?? openGroup({ key, labels: {} }, match, now);
      seen.push(before.pending);
      const state = addEvent(before, vpnLost(id, { id }), now, match);
      return {
        result: state.pending.length,
        next: reschedule({ ...(current ?? newRecord(state)), state }, now, policy),
      };
    };
    const ids = async () => (await other.get(key))?.state.pending.map((event) => event.id);
    expect(await store.update(key, add('first'))).toBe(1);
    const read = (await store.get(key))?.state.pending;
    // `get` read it: the next change copies what it read, and grows that copy from then on.
    expect(await store.update(key, add('a'))).toBe(2);
    const lengths = await Promise.all(['b', 'c', 'd'].map((id) => store.update(key, add(id))));
    expect(lengths).toEqual([3, 4, 5]);
    expect(seen[1]).toBe(read);
    expect(new Set(seen.slice(2)).size).toBe(1);
    expect(seen[2]).not.toBe(read);
    expect(read).toHaveLength(1);
    expect(await ids()).toEqual(['first', 'a', 'b', 'c', 'd']);
    // Another replica writes: the compare-and-set fails, the store reads again and grows its read.
    await other.update(key, add('from-other'));
    expect(await store.update(key, add('e'))).toBe(7);
    expect(seen.at(-1)).not.toBe(seen[2]);
    expect(await ids()).toEqual(['first', 'a', 'b', 'c', 'd', 'from-other', 'e']);
    // A change that throws after growing the list: nothing of it reaches Redis, nor the next change.
    const failing = store.update(key, (current) => {
      add('lost')(current);
      throw new Error('a bug after the change');
    });
    await expect(failing).rejects.toThrow('a bug after the change');
    expect(await store.update(key, add('f'))).toBe(8);
    expect(await ids()).toEqual(['first', 'a', 'b', 'c', 'd', 'from-other', 'e', 'f']);
    // A write Redis fails after the change grew the list: the next change starts from a read.
    const writes = vi
      .spyOn(connections[0] as unknown as Record<string, () => unknown>, 'fleetwatchNotifyGroupWrite')
      .mockRejectedValueOnce(new Error('Redis went away'));
    try {
      await expect(store.update(key, add('unwritten'))).rejects.toThrow('Redis went away');
    } finally {
      writes.mockRestore();
    }
    expect(await store.update(key, add('g'))).toBe(9);
    expect(await ids()).toEqual(['first', 'a', 'b', 'c', 'd', 'from-other', 'e', 'f', 'g']);
  });

  it('changes a group it just read or wrote without reading it again, never on a stale version', async () => {
    const now = Date.now();
    const [one, two] = stores as [GroupStore, GroupStore];
    // The store defines its read script on the connection as it is made (group-store.ts).
    const reads = vi.spyOn(
      connections[0] as unknown as Record<string, () => unknown>,
      'fleetwatchNotifyGroupRead',
    );
    try {
      expect(await one.update('known', increment(now))).toBe(1);
      expect(await one.update('known', increment(now))).toBe(2);
      expect(reads).toHaveBeenCalledTimes(1);
      // Another replica replaced the version `one` remembers: its compare-and-set fails, it reads
      // and applies its change on top.
      expect(await two.update('known', increment(now))).toBe(3);
      expect(await one.update('known', increment(now))).toBe(4);
      expect(reads).toHaveBeenCalledTimes(2);
      // A change that changes nothing is answered from a fresh read, not from memory.
      expect(await two.update('known', increment(now))).toBe(5);
      expect(await one.update('known', (current) => ({ result: current?.state.sequence }))).toBe(5);
      expect((await one.get('known'))?.state.sequence).toBe(5);
    } finally {
      reads.mockRestore();
    }
  });

  it('lets go of a group it has not touched for KNOWN_IDLE_MS: the next change reads it', async () => {
    const now = Date.now();
    let clock = now;
    const store = new GroupStore({ redis: connections[0]!, prefix, now: () => clock });
    const reads = vi.spyOn(
      connections[0] as unknown as Record<string, () => unknown>,
      'fleetwatchNotifyGroupRead',
    );
    try {
      const counter = increment(now);
      expect(await store.update('idle', counter)).toBe(1);
      clock += KNOWN_IDLE_MS;
      expect(await store.update('idle', counter)).toBe(2);
      expect(reads).toHaveBeenCalledTimes(1);
      // Past the idle time, the next change of any group lets it go.
      clock += KNOWN_IDLE_MS + 1;
      expect(await store.update('other', increment(now))).toBe(1);
      expect(reads).toHaveBeenCalledTimes(2);
      expect(await store.update('idle', counter)).toBe(3);
      expect(reads).toHaveBeenCalledTimes(3);
    } finally {
      reads.mockRestore();
    }
  });

  it('stores a group in parts: a change to a group of hundreds writes the event it adds, not the group', async () => {
    const now = Date.now();
    const [store] = stores as [GroupStore];
    const redis = connections[0] as Redis;
    const add = (vehicle: string) => (current: GroupRecord | undefined) => {
      const event = vpnLost(vehicle);
      const state = addEvent(
        current?.state ?? openGroup(groupFor(event, {}, match), match, now),
        event,
        now,
        match,
      );
      return {
        result: undefined,
        next: reschedule({ ...(current ?? newRecord(state)), state }, now, policy),
      };
    };
    const key = groupFor(vpnLost('any'), {}, match).key;
    for (let index = 0; index < 300; index += 1) await store.update(key, add(`big-${index}`));
    // 300 open incidents (one field each, beside `v` and `h`) and 300 pending events.
    expect(await admin.hlen(store.keys.group(key))).toBe(302);
    expect(await admin.llen(store.keys.groupList(key, 'pending'))).toBe(300);
    const whole = JSON.stringify(await store.get(key)).length;
    expect(whole).toBeGreaterThan(100_000);
    const sent = redis.stream.bytesWritten;
    await store.update(key, add('big-300'));
    // The header, one incident, one pending event: a small fraction of the group's JSON.
    expect(redis.stream.bytesWritten - sent).toBeLessThan(whole / 20);
    expect((await store.get(key))?.state.pending).toHaveLength(301);
  });

  it('writes a muted storm as it goes: the recent ids slide, they are not rewritten', async () => {
    // A maintenance window over a site going dark: every event is muted, so each is remembered
    // among the group's recent ids, and with no redelivery window (one event a millisecond), past
    // the last 512 each one pushes the oldest out.
    const [store] = stores as [GroupStore];
    const redis = connections[0]!;
    let now = Date.now();
    const key = `${groupFor(vpnLost('any'), {}, match).key}-muted`;
    const mute = (id: string) => (current: GroupRecord | undefined) => {
      now += 1;
      const state = addEvent(
        current?.state ?? openGroup({ key, labels: {} }, match, now),
        vpnLost(id),
        now,
        match,
        { muted: true, rememberMs: 0 },
      );
      return {
        result: undefined,
        next: reschedule({ ...(current ?? newRecord(state)), state }, now, policy),
      };
    };
    for (let index = 0; index < 600; index += 1) await store.update(key, mute(`quiet-${index}`));
    const recent = store.keys.groupList(key, 'recent');
    expect(await admin.llen(recent)).toBe(512);
    const sent = redis.stream.bytesWritten;
    await store.update(key, mute('quiet-600'));
    // The header, the new incident, one id and the count to drop: not 512 ids again.
    expect(redis.stream.bytesWritten - sent).toBeLessThan(3_000);
    const ids = await admin.lrange(recent, 0, -1);
    expect(ids).toEqual((await stores[1]!.get(key))?.state.recentIds);
    expect(ids).toHaveLength(512);
  });

  it('reads back exactly what it wrote, change after change, from another replica', async () => {
    const start = Date.now();
    const [one, two] = stores as [GroupStore, GroupStore];
    const key = groupFor(vpnLost('any'), {}, match).key.replace('=', '=mixed-');
    // Opens, resolutions, flushes and reminders in a fixed mix: appends, rewrites of the pending
    // list, incident fields set and deleted.
    let now = start;
    const most = { pending: 0, incidents: 0, closing: 0, recent: 0 };
    for (let step = 0; step < 120; step += 1) {
      now += 700;
      const vehicle = `mix-${step % 17}`;
      const phase = step % 12;
      const written = await one.update(key, (current) => {
        let state = current?.state ?? openGroup({ key, labels: {} }, match, now);
        if (phase === 10) state = flush(state, now).state;
        else if (phase === 11) state = reminders(state, now).state;
        else
          state = addEvent(state, (phase % 3 === 2 ? vpnBack : vpnLost)(vehicle, { time: now }), now, match);
        const next = reschedule({ ...(current ?? newRecord(state)), state }, now, policy);
        return { result: next, next };
      });
      if (step % 10 === 9) {
        expect(await two.get(key)).toEqual(written);
        // The subject sets list the group exactly for the subjects it holds an incident of.
        for (let other = 0; other < 17; other += 1) {
          const subject = `vehicle/mix-${other}`;
          const holds = [...written.state.incidents.values()].some(
            (incident) => incident.subject === subject,
          );
          expect(await two.groupsOfSubject(subject)).toEqual(holds ? [key] : []);
        }
      }
      most.pending = Math.max(most.pending, written.state.pending.length);
      most.incidents = Math.max(most.incidents, [...written.state.incidents.keys()].length);
      most.closing = Math.max(most.closing, written.state.closing?.length ?? 0);
      most.recent = Math.max(most.recent, written.state.recentIds.length);
    }
    // The mix did grow and empty every part.
    expect(most.pending).toBeGreaterThan(3);
    expect(most.incidents).toBeGreaterThan(3);
    expect(most.closing).toBeGreaterThan(0);
    expect(most.recent).toBeGreaterThan(3);
    // `two` changes it from its own fresh read; `one`'s remembered version is stale and is read again.
    await two.update(key, (current) => ({
      result: undefined,
      next: current && { ...current, state: closeSubject(current.state, 'vehicle/mix-0') },
    }));
    const after = await one.update(key, (current) => ({ result: current, next: current && { ...current } }));
    expect(after?.state.incidents.get('vehicle/mix-0#vpn')).toBeUndefined();
    expect(await two.get(key)).toEqual(after);
  });

  it('reads a group stored whole (before the parts) and stores it in parts at its next change', async () => {
    const now = Date.now();
    const [store] = stores as [GroupStore];
    const event = vpnLost('legacy-1');
    const group = groupFor(event, {}, match);
    const key = `${group.key}-legacy`;
    const record = reschedule(
      newRecord(addEvent(openGroup({ ...group, key }, match, now), event, now, match)),
      now,
      policy,
    );
    await admin.hset(store.keys.group(key), 'v', 'old-version', 's', JSON.stringify(record));
    expect(await store.get(key)).toEqual(record);
    expect(await store.holding([key], 'vehicle/legacy-1#vpn')).toEqual([key]);
    expect(await store.holding([key], 'vehicle/legacy-2#vpn')).toEqual([]);

    await store.update(key, (current) => ({
      result: undefined,
      next: current && { ...current, wakeAt: now + 5 },
    }));
    expect(await admin.hexists(store.keys.group(key), 's')).toBe(0);
    expect(await admin.hexists(store.keys.group(key), 'i:vehicle/legacy-1#vpn')).toBe(1);
    expect(await store.get(key)).toEqual({ ...record, wakeAt: now + 5 });
    expect(await store.holding([key, 'no-such-group'], 'vehicle/legacy-1#vpn')).toEqual([key]);

    await store.update(key, () => ({ result: undefined, next: null }));
    expect(await admin.exists(store.keys.group(key), store.keys.groupList(key, 'pending'))).toBe(0);
  });

  it('hands mutators frozen records: one that changes its input fails alone and changes nothing', async () => {
    const now = Date.now();
    const [store] = stores as [GroupStore];
    await store.update('frozen', increment(now));
    const bad = store.update('frozen', (current) => {
      if (current) current.state.sequence = 99;
      return { result: undefined, next: current };
    });
    await expect(bad).rejects.toThrow(TypeError);
    expect(await store.update('frozen', increment(now))).toBe(2);
    expect((await store.get('frozen'))?.state.sequence).toBe(2);
  });

  it('stores what the changes make, batch after batch, through conflicts and failures (model)', async () => {
    // The store grows the lists of the versions it wrote in place and writes only what changed;
    // whatever happens, a fresh read from another replica is what the same changes make in order.
    const [store, other] = stores as [GroupStore, GroupStore];
    type Step =
      | { kind: 'batch'; adds: Array<{ vehicle: number; back: boolean; muted: boolean }> }
      | { kind: 'other'; vehicle: number }
      | { kind: 'flush' }
      | { kind: 'failing' }
      | { kind: 'redis-fails'; vehicle: number };
    const add = fc.record({
      vehicle: fc.integer({ min: 0, max: 40 }),
      back: fc.boolean(),
      muted: fc.boolean(),
    });
    const step: fc.Arbitrary<Step> = fc.oneof(
      {
        weight: 5,
        arbitrary: fc.record({
          kind: fc.constant('batch' as const),
          adds: fc.array(add, { minLength: 1, maxLength: 60 }),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant('other' as const),
          vehicle: fc.integer({ min: 0, max: 40 }),
        }),
      },
      // A muted storm: past 512 recent ids each write drops the oldest (no redelivery window here).
      {
        weight: 1,
        arbitrary: fc.integer({ min: 200, max: 400 }).map(
          (size): Step => ({
            kind: 'batch',
            adds: Array.from({ length: size }, (_, vehicle) => ({ vehicle, back: false, muted: true })),
          }),
        ),
      },
      { weight: 1, arbitrary: fc.constant({ kind: 'flush' as const }) },
      { weight: 1, arbitrary: fc.constant({ kind: 'failing' as const }) },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant('redis-fails' as const),
          vehicle: fc.integer({ min: 0, max: 40 }),
        }),
      },
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        run += 1;
        const key = `${groupFor(vpnLost('any'), {}, match).key}-model-${run}`;
        let now = Date.now();
        let serial = 0;
        let model: GroupState | undefined;
        // A change as a pure function of the state, applied to the model and through the store alike.
        const change = (apply: (state: GroupState) => GroupState) => (current: GroupRecord | undefined) => {
          const state = apply(current?.state ?? openGroup({ key, labels: {} }, match, now));
          return {
            result: undefined,
            next: reschedule({ ...(current ?? newRecord(state)), state }, now, policy),
          };
        };
        const event = (vehicle: number, back: boolean) => {
          serial += 1;
          return (back ? vpnBack : vpnLost)(`m-${vehicle}`, { id: `${run}-${serial}` });
        };
        const adding = (vehicle: number, back: boolean, muted: boolean) => {
          const taken = event(vehicle, back);
          return (state: GroupState) => addEvent(state, taken, now, match, { muted, rememberMs: 0 });
        };
        const model1 = (apply: (state: GroupState) => GroupState) => {
          model = apply(model ?? openGroup({ key, labels: {} }, match, now));
        };
        for (const next of steps) {
          now += 700;
          if (next.kind === 'batch') {
            const applies = next.adds.map(({ vehicle, back, muted }) => adding(vehicle, back, muted));
            applies.forEach(model1);
            await Promise.all(applies.map((apply) => store.update(key, change(apply))));
          } else if (next.kind === 'other') {
            const apply = adding(next.vehicle, false, false);
            model1(apply);
            await other.update(key, change(apply));
          } else if (next.kind === 'flush') {
            now += 5_000;
            const apply = (state: GroupState) => flush(state, now, { rememberMs: 0 }).state;
            model1(apply);
            await store.update(key, change(apply));
          } else if (next.kind === 'failing') {
            const apply = adding(1, false, false);
            await expect(
              store.update(key, (current) => {
                change(apply)(current);
                throw new Error('a bug after the change');
              }),
            ).rejects.toThrow('a bug');
          } else {
            const apply = adding(next.vehicle, false, false);
            const writes = vi
              .spyOn(connections[0] as unknown as Record<string, () => unknown>, 'fleetwatchNotifyGroupWrite')
              .mockRejectedValueOnce(new Error('Redis went away'));
            try {
              await expect(store.update(key, change(apply))).rejects.toThrow('Redis went away');
            } finally {
              writes.mockRestore();
            }
          }
          const stored = (await other.get(key))?.state;
          const ids = (state: GroupState | undefined) => ({
            pending: state?.pending.map((pending) => pending.id) ?? [],
            closing: state?.closing ?? [],
            recent: state?.recentIds ?? [],
            incidents: [...(state?.incidents.keys() ?? [])].sort(),
          });
          expect(ids(stored)).toEqual(ids(model));
        }
      }),
      { numRuns: 25 },
    );
  });
});
