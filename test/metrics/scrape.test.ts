import { describe, expect, it } from 'vitest';
import type { FleetStore } from '../../src/fleet/index.js';
import { createMetrics } from '../../src/metrics/index.js';
import type { QueueSource } from '../../src/metrics/queue-gauges.js';
import type { SnapshotRecord, SnapshotRef } from '../../src/store/snapshot-store.js';
import { within } from '../support/daemon-process.js';
import { samples, sampleValue } from './helpers.js';

/** Scrape-time reads: cached, shared by all gauges of a scrape, bounded in round trips, failure-proof. */

const GOOD = { alerting: false, streak: 0, streakSince: null, incidentSince: null };
const BAD = { alerting: true, streak: 0, streakSince: null, incidentSince: 0 };

/** An in-memory store of `vehicles` vehicles (every third disconnected, power on) and no robots. */
function fakeStore(vehicles: number) {
  const ids = Array.from({ length: vehicles }, (_, i) => `V-${String(i).padStart(6, '0')}`);
  const store = {
    reads: 0,
    refsRead: 0,
    failing: false,
    /** While set, reads wait for it (a Redis that takes commands and never answers). */
    hanging: undefined as Promise<void> | undefined,
    async read(refs: readonly SnapshotRef[]): Promise<SnapshotRecord[]> {
      store.reads += 1;
      store.refsRead += refs.length;
      if (store.hanging) await store.hanging;
      if (store.failing) throw new Error('connect ECONNREFUSED 127.0.0.1:6379');
      return refs.map((ref): SnapshotRecord => {
        if (ref.kind === 'fleet') {
          return { version: 1, state: { v: 1, known: ref.id === 'vehicle' ? ids : [], missing: [] } };
        }
        const n = Number(ref.id.slice(2));
        if (ref.facet === 'link')
          return { version: 1, state: { v: 1, vpn: n % 3 === 0 ? BAD : GOOD, ip: null } };
        return {
          version: 1,
          state: {
            v: 1,
            powerCapable: true,
            reading: { state: 'on', pending: null, updatedAt: null },
            pendingSince: null,
            stuck: false,
            staleSince: null,
            reachability: null,
          },
        };
      });
    },
  };
  return store satisfies FleetStore;
}

describe('fleet gauges at scrape time', () => {
  it('read 40,000 vehicles in pipelined batches, once per scrape however many gauges', async () => {
    const store = fakeStore(40_000);
    const metrics = createMetrics({ perEntity: true, fleetCacheMs: 60_000, defaultMetrics: false });
    metrics.bind({ store });
    const text = await metrics.registry.metrics();
    // One read of both membership lists, then 80,000 signal snapshots 1,000 at a time, and one of
    // the monitor's own incidents (the three upstreams' health, the two lists').
    expect(store.reads).toBe(1 + 80 + 1);
    expect(store.refsRead).toBe(2 + 80_000 + 5);
    expect(text).toContain('fleetwatch_vehicles{vpn="disconnected"} 13334');
    expect(text).toContain('fleetwatch_vehicles{vpn="connected"} 26666');
    expect(text).toContain('fleetwatch_vehicle_vpn_connected{vehicle="V-039998"} 1');
    // Within fleet_cache a scrape reads nothing.
    await metrics.registry.metrics();
    expect(store.reads).toBe(82);
  });

  it('decode at each scrape only the snapshots the change feed names since the last one', async () => {
    const store = fakeStore(40_000);
    // The fake's snapshots, with versions: V-000000's link is replaced by a connected one at version 2.
    let replaced = false;
    const versionOf = (ref: SnapshotRef) =>
      replaced && ref.id === 'V-000000' && ref.facet === 'link' ? 2 : 1;
    // The change feed: one entry per commit, a cursor is the number of entries seen.
    const feed: SnapshotRef[] = [{ kind: 'fleet', id: 'vehicle', facet: 'membership' }];
    let stampsRead = 0;
    const versioned = {
      async read(refs: readonly SnapshotRef[]): Promise<SnapshotRecord[]> {
        const records = await store.read(refs);
        return records.map((record, i) => {
          const ref = refs[i]!;
          if (versionOf(ref) === 1) return record;
          return { version: 2, state: { v: 1, vpn: GOOD, ip: null } };
        });
      },
      async readStamps(refs: readonly SnapshotRef[]): Promise<SnapshotRecord[]> {
        stampsRead += refs.length;
        return refs.map((ref) => ({ version: versionOf(ref), state: undefined }));
      },
      async changeCursors(): Promise<string[]> {
        return [String(feed.length)];
      },
      async changesSince(cursors: readonly string[]) {
        return { refs: feed.slice(Number(cursors[0])), cursors: [String(feed.length)] };
      },
    } satisfies FleetStore;
    const metrics = createMetrics({ perEntity: false, fleetCacheMs: 0, defaultMetrics: false });
    metrics.bind({ store: versioned });
    const disconnected = () => sampleValue(metrics.registry, 'fleetwatch_vehicles', { vpn: 'disconnected' });

    // The first scrape decodes everything: both lists, 80,000 snapshots, the monitor's own incidents.
    expect(await disconnected()).toBe(13334);
    expect(store.refsRead).toBe(2 + 80_000 + 5);
    // Nothing changed: the lists' stamps and the monitor's incidents (read in full, five snapshots).
    expect(await disconnected()).toBe(13334);
    expect(store.refsRead).toBe(2 + 80_000 + 5 + 5);
    expect(stampsRead).toBe(2 * 2);
    // One snapshot changed: that entity's two snapshots are read again, and the gauge moves.
    replaced = true;
    feed.push({ kind: 'vehicle', id: 'V-000000', facet: 'link' });
    expect(await disconnected()).toBe(13333);
    expect(store.refsRead).toBe(2 + 80_000 + 5 + 5 + 2 + 5);
    expect(await sampleValue(metrics.registry, 'fleetwatch_vehicles', { vpn: 'connected' })).toBe(26667);
    metrics.unbind();
  });

  it('show nothing before the first reading, and keep the last one (and count) when the store fails', async () => {
    const store = fakeStore(3);
    const metrics = createMetrics({ perEntity: true, fleetCacheMs: 0, defaultMetrics: false });
    expect(await samples(metrics.registry, 'fleetwatch_vehicles')).toEqual([]);
    metrics.bind({ store });
    expect(await sampleValue(metrics.registry, 'fleetwatch_vehicles', { vpn: 'connected' })).toBe(2);
    store.failing = true;
    expect(await sampleValue(metrics.registry, 'fleetwatch_vehicles', { vpn: 'connected' })).toBe(2);
    expect(
      await sampleValue(metrics.registry, 'fleetwatch_metrics_collect_errors_total', { source: 'fleet' }),
    ).toBe(1);
    // The whole exposition still renders.
    await expect(metrics.registry.metrics()).resolves.toContain('fleetwatch_vehicle_vpn_connected');
    // Unbound (daemon stopping): no reads at all.
    metrics.unbind();
    const reads = store.reads;
    await metrics.registry.metrics();
    expect(store.reads).toBe(reads);
  });
});

describe('a scrape while Redis does not answer', () => {
  it('answers after the collect timeout with the last reading, and keeps one read in flight', async () => {
    const store = fakeStore(3);
    const metrics = createMetrics({
      perEntity: true,
      fleetCacheMs: 0,
      collectTimeoutMs: 50,
      defaultMetrics: false,
    });
    metrics.bind({ store });
    expect(await sampleValue(metrics.registry, 'fleetwatch_vehicles', { vpn: 'connected' })).toBe(2);

    let answer!: () => void;
    store.hanging = new Promise((resolve) => {
      answer = resolve;
    });
    const reads = store.reads;
    for (let scrape = 1; scrape <= 3; scrape++) {
      const text = await within(metrics.registry.metrics(), 5_000);
      expect(text, `scrape ${scrape} answered`).not.toBe('late');
      expect(text).toContain('fleetwatch_vehicles{vpn="connected"} 2');
      expect(text).toContain('fleetwatch_vehicle_vpn_connected{vehicle="V-000001"} 1');
    }
    // The reading under way (the fleet's and the upstreams' read) is the only one: later scrapes
    // did not start another.
    expect(store.reads).toBe(reads + 2);
    expect(
      await sampleValue(metrics.registry, 'fleetwatch_metrics_collect_errors_total', { source: 'fleet' }),
    ).toBe(3);

    // Once it answers, its reading is what the next scrape shows.
    store.hanging = undefined;
    answer();
    await expect
      .poll(() => sampleValue(metrics.registry, 'fleetwatch_vehicles', { vpn: 'connected' }))
      .toBe(2);
  });
});

describe('a fleet whose reading takes longer than a scrape waits', () => {
  it('shows the reading that finished since the last scrape, and counts only a scrape with nothing newer', async () => {
    const store = fakeStore(3);
    const metrics = createMetrics({
      perEntity: true,
      fleetCacheMs: 0,
      collectTimeoutMs: 20,
      defaultMetrics: false,
    });
    const errors = () =>
      sampleValue(metrics.registry, 'fleetwatch_metrics_collect_errors_total', { source: 'fleet' });
    let answer!: () => void;
    store.hanging = new Promise((resolve) => {
      answer = resolve;
    });
    metrics.bind({ store });
    // Scrape 1: the first reading is late and there is nothing to show yet.
    expect(await samples(metrics.registry, 'fleetwatch_vehicles')).toEqual([]);
    expect(await errors()).toBe(1);

    // The reading finishes between scrapes (memberships, one batch, the upstreams' health)...
    store.hanging = undefined;
    answer();
    await expect.poll(() => store.reads).toBe(3);
    await new Promise((resolve) => setImmediate(resolve));
    // ...and the next one is as slow: scrape 2 shows the finished reading, one scrape behind.
    store.hanging = new Promise(() => {});
    expect(await sampleValue(metrics.registry, 'fleetwatch_vehicles', { vpn: 'connected' })).toBe(2);
    expect(await errors()).toBe(1);
    // Scrape 3: still under way and nothing newer than what the gauges show: counted.
    expect(await sampleValue(metrics.registry, 'fleetwatch_vehicles', { vpn: 'connected' })).toBe(2);
    expect(await errors()).toBe(2);
    metrics.unbind();
  });
});

describe('queue gauges', () => {
  function queue(counts: Record<string, number>) {
    let calls = 0;
    return {
      get calls() {
        return calls;
      },
      fail: false,
      async getJobCounts() {
        calls += 1;
        if (this.fail) throw new Error('Connection is closed.');
        return counts;
      },
    };
  }

  it('count jobs per queue and state, and dead letters per receiver, with one read per queue', async () => {
    const poll = queue({ waiting: 3, prioritized: 0, active: 2, delayed: 0, failed: 1, completed: 40 });
    const ops = queue({ waiting: 1, prioritized: 2, active: 0, delayed: 1, failed: 5, completed: 9 });
    const sources: QueueSource[] = [
      { name: 'poll', queue: poll },
      { name: 'notify-ops', queue: ops, receiver: 'ops' },
    ];
    const metrics = createMetrics({ perEntity: false, fleetCacheMs: 0, defaultMetrics: false });
    metrics.bind({ queues: sources });
    const text = await metrics.registry.metrics();
    expect(text).toContain('fleetwatch_queue_jobs{queue="poll",state="waiting"} 3');
    expect(text).toContain('fleetwatch_queue_jobs{queue="poll",state="completed"} 40');
    expect(text).toContain('fleetwatch_queue_jobs{queue="notify-ops",state="waiting"} 3');
    expect(text).toContain('fleetwatch_queue_jobs{queue="notify-ops",state="failed"} 5');
    expect(text).toContain('fleetwatch_dead_letters{receiver="ops"} 5');
    expect(text).not.toContain('fleetwatch_dead_letters{receiver="poll"}');
    // queue_jobs and dead_letters share one read per queue and scrape.
    expect([poll.calls, ops.calls]).toEqual([1, 1]);

    ops.fail = true;
    expect(await sampleValue(metrics.registry, 'fleetwatch_dead_letters', { receiver: 'ops' })).toBe(5);
    expect(
      await sampleValue(metrics.registry, 'fleetwatch_metrics_collect_errors_total', { source: 'queues' }),
    ).toBe(1);
  });
});
