import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { robotCommandQueueDetector } from '../../src/events/detectors/robot-command-queue.js';
import { robotHealthDetector } from '../../src/events/detectors/robot-health.js';
import { upstreamHealthDetector } from '../../src/events/detectors/upstream-health.js';
import { vehicleLinkDetector } from '../../src/events/detectors/vehicle-link.js';
import { vehiclePowerDetector } from '../../src/events/detectors/vehicle-power.js';
import type { Detector, FleetEvent, Observation } from '../../src/events/types.js';
import { closeQuietly, createProducerConnection, waitForReady } from '../../src/lib/redis-connection.js';
import { ObservationPipeline } from '../../src/pollers/observation-pipeline.js';
import { StoreLossGuard } from '../../src/pollers/store-guard.js';
import { upstreamRef } from '../../src/pollers/upstream-windows.js';
import { EventLog } from '../../src/store/event-log.js';
import { IncidentStore } from '../../src/store/incidents.js';
import { storeKeys } from '../../src/store/keys.js';
import { type SnapshotRef, SnapshotStore } from '../../src/store/snapshot-store.js';
import { StoreMarker } from '../../src/store/store-marker.js';
import { connect, deletePrefixKeys, eventually, redisUrl } from '../support/redis.js';
import { readAllEvents } from '../support/scenario.js';

/**
 * A store emptied under running replicas (simulated by deleting every key of the prefix: the
 * shared Redis is never flushed; test/system/integration/redis-restart.test.ts empties a private
 * redis-server). The next commit is refused, one replica announces the loss once
 * (`monitor.store.reset`) and carries the open incidents over — in the incident records and seeded
 * into the facet snapshots — so a facet still bad does not fire again, and one now good resolves
 * with the incident's true duration.
 */

let admin: Redis;
let redis: Redis;
const prefixes: string[] = [];
const guards: StoreLossGuard[] = [];

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const thresholds = { failureThreshold: 1, successThreshold: 1 };

beforeAll(async () => {
  admin = connect();
  redis = createProducerConnection(redisUrl(), { name: 'test-store-guard' });
  await waitForReady(redis, { timeoutMs: 5_000 });
});

afterEach(async () => {
  await Promise.all(guards.splice(0).map((guard) => guard.stop()));
});

afterAll(async () => {
  for (const prefix of prefixes) await deletePrefixKeys(admin, prefix);
  await closeQuietly([redis, admin]);
});

/** The upstream detector names its subject, as the upstream poller does. */
const tokenHealth: Detector<unknown, unknown, unknown> = (previous, observation, context) => {
  const result = (upstreamHealthDetector as Detector<unknown, unknown, unknown>)(
    previous,
    observation,
    context,
  );
  return { ...result, events: result.events.map((d) => ({ ...d, data: { ...d.data, upstream: 'token' } })) };
};

/** One replica: its guard, its guarded store, its pipeline; `told`: the events its guard reported. */
function replica(
  prefix: string,
  options: {
    refreshMs?: number;
    shards?: number;
    onIncidentsChanged?: ConstructorParameters<typeof StoreLossGuard>[0]['onIncidentsChanged'];
  } = {},
) {
  const { shards = 1, ...guardOptions } = options;
  const identity = { redis, prefix, installation: 'test', shards };
  const incidents = new IncidentStore({ redis, prefix, shards });
  const told: FleetEvent[] = [];
  const guard = new StoreLossGuard({
    marker: new StoreMarker(identity),
    incidents,
    snapshots: new SnapshotStore(identity),
    logger: pino({ enabled: false }),
    onEvent: (events) => told.push(...events),
    ...guardOptions,
  });
  guards.push(guard);
  const store = new SnapshotStore({ ...identity, guard });
  const pipeline = new ObservationPipeline({ store, now: () => T0 + 3_600_000 });
  const observe = async (
    detector: Detector<unknown, unknown, unknown>,
    ref: SnapshotRef,
    observation: Observation<unknown>,
    options: unknown = thresholds,
  ): Promise<FleetEvent[]> => {
    const result = await pipeline.run({ poller: 'test', detector, options }, [{ ref, observation }]);
    return result.events;
  };
  return { guard, store, incidents, observe, told };
}

const ok = (seconds: number, value: unknown): Observation<unknown> => ({ ok: true, at: at(seconds), value });
const failed = (seconds: number): Observation<unknown> => ({
  ok: false,
  at: at(seconds),
  error: { code: 'timeout', message: 'timed out' },
});

const LINK = { kind: 'vehicle', id: 'veh-1', facet: 'link' } as const;
const POWER = { kind: 'vehicle', id: 'veh-2', facet: 'power' } as const;
const HEALTH = { kind: 'robot', id: 'rb-1', facet: 'health' } as const;
const QUEUE = { kind: 'robot', id: 'rb-2', facet: 'command_queue' } as const;
const detectors = {
  link: vehicleLinkDetector as Detector<unknown, unknown, unknown>,
  power: vehiclePowerDetector as Detector<unknown, unknown, unknown>,
  health: robotHealthDetector as Detector<unknown, unknown, unknown>,
  queue: robotCommandQueueDetector as Detector<unknown, unknown, unknown>,
};
const window = (requests: number, serverErrors: number) => ({
  requests,
  serverErrors,
  authFailures: 0,
  timeouts: 0,
});
const upstreamOptions = { ...thresholds, minRequests: 5, errorRatio: 0.5, authFailures: 10 };

/** Five open incidents, one per detector that owns an incident key. */
async function openFive(r: ReturnType<typeof replica>): Promise<FleetEvent[]> {
  return [
    ...(await r.observe(detectors.link, LINK, ok(0, { vpnConnected: false, id: 'veh-1' }))),
    ...(await r.observe(
      detectors.power,
      POWER,
      ok(0, { state: 'on', pendingCommand: null, updatedAt: null }),
    )),
    ...(await r.observe(detectors.health, HEALTH, failed(0))),
    ...(await r.observe(detectors.queue, QUEUE, ok(0, { length: 0 }), { backlogThreshold: 3 })),
    ...(await r.observe(detectors.queue, QUEUE, ok(1, { length: 7 }), { backlogThreshold: 3 })),
    ...(await r.observe(tokenHealth, upstreamRef('token'), ok(0, window(10, 9)), upstreamOptions)),
  ];
}

/** How many records each read of the open incidents fetched (0: the revision had not moved). */
function recordsFetched(incidents: IncidentStore): number[] {
  const fetched: number[] = [];
  const readOpen = incidents.readOpen.bind(incidents);
  incidents.readOpen = async (revision) => {
    const read = await readOpen(revision);
    fetched.push(read.records?.length ?? 0);
    return read;
  };
  return fetched;
}

function newPrefix(): string {
  const prefix = `hs-ti-${randomBytes(5).toString('hex')}`;
  prefixes.push(prefix);
  return prefix;
}

// One shard is the layout of every store so far; with four, every shard holds a copy of the marker.
describe.each([1, 4])('with %i shard(s)', (shards) => {
  describe('a store emptied under running replicas', () => {
    it('is announced once, and the open incidents neither fire again nor lose their start', async () => {
      const prefix = newPrefix();
      const log = new EventLog({ redis, prefix, shards });
      const a = replica(prefix, { shards });
      const b = replica(prefix, { shards });
      const fired = await openFive(a);
      expect(fired.map((event) => event.type).sort()).toEqual([
        'monitor.upstream.degraded',
        'robot.command_queue.backlog',
        'robot.health.down',
        'vehicle.power.report.stale',
        'vehicle.vpn.disconnected',
      ]);
      const before = await a.incidents.open();
      expect(before).toHaveLength(5);
      await Promise.all([a.guard.refresh(), b.guard.refresh()]);
      expect(b.guard.openIncidents).toHaveLength(5);
      const lostEpoch = a.guard.marker?.epoch;

      await deletePrefixKeys(admin, prefix);

      // Both replicas commit at once: each commit is refused, one replica announces the loss.
      const after = await Promise.all([
        a.observe(detectors.link, LINK, ok(10, { vpnConnected: false, id: 'veh-1' })),
        b.observe(detectors.health, HEALTH, failed(10)),
        b.observe(detectors.queue, QUEUE, ok(10, { length: 6 }), { backlogThreshold: 3 }),
        a.observe(tokenHealth, upstreamRef('token'), ok(60, window(10, 8)), upstreamOptions),
      ]);
      expect(after.flat()).toEqual([]);
      const resets = (await readAllEvents(log)).filter((entry) => entry.event.type === 'monitor.store.reset');
      expect(resets).toHaveLength(1);
      expect(resets[0]?.event).toMatchObject({
        subject: 'store/redis',
        data: { severity: 'critical', store: 'redis', previousEpoch: lostEpoch, carriedOver: 5 },
      });
      expect(a.guard.marker?.epoch).toBe(b.guard.marker?.epoch);
      expect(a.guard.marker?.epoch).not.toBe(lostEpoch);
      // The replica that wrote it says so once (fleetwatch_events_total counts it); the other does not.
      expect([...a.told, ...b.told].map((event) => event.id)).toEqual([resets[0]?.event.id]);
      const carried = await a.incidents.open();
      expect(carried.map((record) => record.id).sort()).toEqual(before.map((record) => record.id).sort());
      // The snapshots seeded for them are in the change feed, as committed ones are: a reader
      // following it (the fleet gauges) reads them.
      const keys = storeKeys(prefix, shards);
      const fed = (await Promise.all(keys.allShards.map((shard) => admin.xrange(shard.changes, '-', '+'))))
        .flat()
        .map(([, fields]) => fields[1]);
      expect(fed).toEqual(
        expect.arrayContaining([
          keys.snapshot('vehicle', 'veh-1', 'link'),
          keys.snapshot('robot', 'rb-1', 'health'),
        ]),
      );

      // Now good: each resolves once, with the duration since the incident began before the loss.
      const resolved = [
        ...(await a.observe(detectors.link, LINK, ok(100, { vpnConnected: true, id: 'veh-1' }))),
        ...(await b.observe(
          detectors.power,
          POWER,
          ok(100, { state: 'on', pendingCommand: null, updatedAt: at(3_600) }),
        )),
        ...(await a.observe(detectors.health, HEALTH, ok(100, {}))),
        ...(await b.observe(detectors.queue, QUEUE, ok(100, { length: 0 }), { backlogThreshold: 3 })),
        ...(await a.observe(tokenHealth, upstreamRef('token'), ok(120, window(10, 0)), upstreamOptions)),
      ];
      expect(resolved.map((event) => [event.type, event.data.durationMs]).sort()).toEqual([
        ['monitor.upstream.recovered', 120_000],
        ['robot.command_queue.drained', 99_000],
        ['robot.health.up', 100_000],
        ['vehicle.power.report.fresh', 100_000],
        ['vehicle.vpn.connected', 100_000],
      ]);
      expect(await a.incidents.open()).toEqual([]);
      // The event log went with the store: what it holds now is the reset and the resolutions.
      const types = (await readAllEvents(log)).map((entry) => entry.event.type);
      expect(types.sort()).toEqual(['monitor.store.reset', ...resolved.map((event) => event.type)].sort());
    });

    it('gets the incidents only another replica had read carried over by that one, without a second event', async () => {
      const prefix = newPrefix();
      const log = new EventLog({ redis, prefix, shards });
      const a = replica(prefix, { shards });
      const b = replica(prefix, { shards });
      await a.observe(detectors.link, LINK, ok(0, { vpnConnected: false, id: 'veh-1' }));
      await b.guard.refresh();
      // Opened by a just before the loss: b has not read it yet.
      await a.observe(detectors.health, HEALTH, failed(1));
      expect(b.guard.openIncidents).toHaveLength(1);
      await deletePrefixKeys(admin, prefix);

      expect(await b.observe(detectors.link, LINK, ok(10, { vpnConnected: false, id: 'veh-1' }))).toEqual([]);
      expect(await a.observe(detectors.health, HEALTH, failed(10))).toEqual([]);
      const events = (await readAllEvents(log)).map((entry) => entry.event);
      expect(events.map((event) => [event.type, event.data.carriedOver])).toEqual([
        ['monitor.store.reset', 1],
      ]);
      expect((await a.incidents.open()).map((record) => record.subject).sort()).toEqual([
        'robot/rb-1',
        'vehicle/veh-1',
      ]);
      expect(await b.observe(detectors.health, HEALTH, ok(20, {}))).toMatchObject([
        { type: 'robot.health.up', data: { since: at(1), durationMs: 19_000 } },
      ]);
    });

    it('is claimed by a running replica when a replica that started meanwhile wrote a new marker', async () => {
      const prefix = newPrefix();
      const log = new EventLog({ redis, prefix, shards });
      const running = replica(prefix, { shards });
      await running.observe(detectors.link, LINK, ok(0, { vpnConnected: false, id: 'veh-1' }));
      await running.guard.refresh();
      const lostEpoch = running.guard.marker?.epoch;

      await deletePrefixKeys(admin, prefix);
      // A replica starting now cannot tell a lost store from a new one: it writes a fresh marker.
      const started = replica(prefix, { shards });
      expect(await started.observe(detectors.health, HEALTH, ok(5, {}))).toEqual([]);
      const fresh = started.guard.marker?.epoch;
      expect(fresh).not.toBe(lostEpoch);

      expect(
        await running.observe(detectors.link, LINK, ok(10, { vpnConnected: false, id: 'veh-1' })),
      ).toEqual([]);
      const resets = (await readAllEvents(log)).filter((entry) => entry.event.type === 'monitor.store.reset');
      expect(resets.map((entry) => entry.event.data)).toMatchObject([
        { epoch: fresh, previousEpoch: lostEpoch, carriedOver: 1 },
      ]);
      // Both go on with the marker the starting replica wrote.
      expect(running.guard.marker?.epoch).toBe(fresh);
      expect(await started.observe(detectors.health, HEALTH, failed(20))).toHaveLength(1);
      expect(
        (await readAllEvents(log)).filter((entry) => entry.event.type === 'monitor.store.reset'),
      ).toHaveLength(1);
    });

    it("carries over a replica's own incidents committed just before, without waiting for a read", async () => {
      const prefix = newPrefix();
      const log = new EventLog({ redis, prefix, shards });
      const r = replica(prefix, { shards });
      await r.observe(detectors.health, HEALTH, failed(0));
      await r.observe(detectors.link, LINK, ok(0, { vpnConnected: false, id: 'veh-1' }));
      await r.observe(detectors.link, LINK, ok(5, { vpnConnected: true, id: 'veh-1' }));
      expect(r.guard.openIncidents.map((record) => record.subject)).toEqual(['robot/rb-1']);
      await deletePrefixKeys(admin, prefix);
      expect(await r.observe(detectors.health, HEALTH, failed(10))).toEqual([]);
      const [reset] = (await readAllEvents(log)).map((entry) => entry.event);
      expect(reset).toMatchObject({ type: 'monitor.store.reset', data: { carriedOver: 1 } });
    });

    it("follows its own commits without reading every open incident again, and reads them after another replica's", async () => {
      const prefix = newPrefix();
      // `daemon` stands for the daemon's guard, which a's commits are told to, as the poll thread's are.
      const daemon = replica(prefix, { shards });
      const a = replica(prefix, {
        shards,
        onIncidentsChanged: (events, moved) => daemon.guard.threadChanged(events, moved),
      });
      const b = replica(prefix, { shards });
      const fetched = recordsFetched(a.incidents);
      const daemonFetched = recordsFetched(daemon.incidents);
      await a.observe(detectors.health, HEALTH, failed(0));
      await Promise.all([a.guard.refresh(), daemon.guard.refresh()]);
      expect(fetched).toEqual([1]);
      expect(daemonFetched).toEqual([1]);
      // Its own commits: an incident opened, another opened and closed.
      await a.observe(detectors.link, LINK, ok(0, { vpnConnected: false, id: 'veh-1' }));
      await a.observe(detectors.queue, QUEUE, ok(0, { length: 0 }), { backlogThreshold: 3 });
      await a.observe(detectors.queue, QUEUE, ok(1, { length: 7 }), { backlogThreshold: 3 });
      await a.observe(detectors.queue, QUEUE, ok(2, { length: 0 }), { backlogThreshold: 3 });
      await Promise.all([a.guard.refresh(), daemon.guard.refresh()]);
      expect(fetched).toEqual([1, 0]);
      expect(daemonFetched).toEqual([1, 0]);
      for (const guard of [a.guard, daemon.guard]) {
        expect(guard.openIncidents.map((record) => record.subject).sort()).toEqual([
          'robot/rb-1',
          'vehicle/veh-1',
        ]);
      }
      // Another replica's commit: the records are read again, and the copy has it.
      await b.observe(detectors.power, POWER, ok(0, { state: 'on', pendingCommand: null, updatedAt: null }));
      await a.guard.refresh();
      expect(fetched).toEqual([1, 0, 3]);
      expect(a.guard.openIncidents.map((record) => record.subject).sort()).toEqual([
        'robot/rb-1',
        'vehicle/veh-1',
        'vehicle/veh-2',
      ]);
    });

    it('follows its own commits made while it was reading, from the revision the read returned', async () => {
      const prefix = newPrefix();
      const a = replica(prefix, { shards });
      const fetched = recordsFetched(a.incidents);
      await a.observe(detectors.health, HEALTH, failed(0));
      // A commit of its own lands after the read took the revision, before the read is done.
      const readOpen = a.incidents.readOpen.bind(a.incidents);
      let overlapped = false;
      a.incidents.readOpen = async (revision) => {
        const read = await readOpen(revision);
        if (!overlapped) {
          overlapped = true;
          await a.observe(detectors.link, LINK, ok(0, { vpnConnected: false, id: 'veh-1' }));
        }
        return read;
      };
      await a.guard.refresh();
      await a.guard.refresh();
      expect(fetched).toEqual([1, 0]);
      expect(a.guard.openIncidents.map((record) => record.subject).sort()).toEqual([
        'robot/rb-1',
        'vehicle/veh-1',
      ]);
    });

    it('is noticed by the periodic read when nothing commits', async () => {
      const prefix = newPrefix();
      const log = new EventLog({ redis, prefix, shards });
      const r = replica(prefix, { refreshMs: 100, shards });
      await r.observe(detectors.link, LINK, ok(0, { vpnConnected: false, id: 'veh-1' }));
      r.guard.start();
      await eventually(
        async () => r.guard.openIncidents.length,
        (count) => count === 1,
      );
      await deletePrefixKeys(admin, prefix);
      const entries = await eventually(
        async () => (await readAllEvents(log)).filter((entry) => entry.event.type === 'monitor.store.reset'),
        (found) => found.length > 0,
      );
      expect(entries[0]?.event.data).toMatchObject({ carriedOver: 1 });
      expect((await r.incidents.open()).map((record) => record.subject)).toEqual(['vehicle/veh-1']);
    });

    it.skipIf(shards === 1)(
      'is claimed once when one shard alone was emptied, and only its incidents are carried over',
      async () => {
        const prefix = newPrefix();
        const log = new EventLog({ redis, prefix, shards });
        const a = replica(prefix, { shards });
        const b = replica(prefix, { shards });
        await openFive(a);
        await Promise.all([a.guard.refresh(), b.guard.refresh()]);
        const lostEpoch = a.guard.marker?.epoch;
        const before = await a.incidents.open();
        // The shard of veh-1 loses everything (one master failed over to an empty replica).
        const lost = a.store.keys.shardKeys(a.store.keys.shardOf('vehicle/veh-1'));
        const keys = await admin.keys(`${lost.tag}*`);
        expect(keys).toContain(lost.storeMarker);
        await admin.unlink(...keys);
        const survivors = before.filter((record) => a.store.keys.shardOf(record.subject) !== lost.shard);

        expect(await b.observe(detectors.link, LINK, ok(10, { vpnConnected: false, id: 'veh-1' }))).toEqual(
          [],
        );
        const resets = (await readAllEvents(log)).filter(
          (entry) => entry.event.type === 'monitor.store.reset',
        );
        expect(resets).toHaveLength(1);
        expect(resets[0]?.event.data).toMatchObject({
          previousEpoch: lostEpoch,
          carriedOver: before.length - survivors.length,
        });
        expect((await a.incidents.open()).map((record) => record.id).sort()).toEqual(
          before.map((record) => record.id).sort(),
        );
        // The other replica notices on its next read (an unchanged poll commits nothing); no second announcement.
        await a.guard.refresh();
        expect(a.guard.marker?.epoch).toBe(b.guard.marker?.epoch);
        expect(a.guard.marker?.epoch).not.toBe(lostEpoch);
        expect(
          (await readAllEvents(log)).filter((entry) => entry.event.type === 'monitor.store.reset'),
        ).toHaveLength(1);
      },
    );
  });
});
