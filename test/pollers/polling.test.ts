import { Worker } from 'bullmq';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vehicleLinkDetector } from '../../src/events/detectors/vehicle-link.js';
import { createWorkerConnection } from '../../src/lib/redis-connection.js';
import { ObservationPipeline } from '../../src/pollers/observation-pipeline.js';
import {
  createPollQueues,
  type PollJobData,
  type PollQueue,
  type PollQueues,
  pollerPhase,
  pollJobId,
  shardOffset,
} from '../../src/pollers/poll-queue.js';
import { POLLER_NAMES, POLLERS } from '../../src/pollers/registry.js';
import { PollScheduler, scheduledPollers, type TickPace } from '../../src/pollers/scheduler.js';
import { pollQueueName } from '../../src/queues/names.js';
import { bullPrefix } from '../../src/store/keys.js';
import { SnapshotStore } from '../../src/store/snapshot-store.js';
import { captureJsonLog } from '../support/json-log.js';
import { redisUrl } from '../support/redis.js';
import { createHarness, type Harness } from './harness.js';

let h: Harness;
const queues: PollQueue[] = [];

function powerReads(): number {
  const byStatus = h.sim.control.stats().requests.get_vehicle_power_status ?? {};
  return Object.values(byStatus).reduce((sum, n) => sum + n, 0);
}

beforeAll(async () => {
  h = await createHarness({ empty: true });
  const fresh = new Date().toISOString();
  for (let i = 1; i <= 5; i += 1) {
    h.sim.control.addVehicle({ id: `P-${i}`, vpnConnected: true, updatedAt: fresh, powerCapable: i !== 5 });
  }
  await h.tick('vehicles');
});

afterAll(async () => {
  await Promise.all(queues.map((queue) => queue.close()));
  await h?.close();
});

describe('planning', () => {
  it('shards the membership targets, sorted, by batch_size, spread over half the interval', async () => {
    const jobs = await h.runner.plan('power', 42);
    // Slots of 500 / 3 ms, each shard a seventh of a slot in: power is the first of six per-entity pollers.
    expect(jobs).toEqual([
      { poller: 'power', tick: 42, shard: 0, shards: 3, ids: ['P-1', 'P-2'], offsetMs: 23 },
      { poller: 'power', tick: 42, shard: 1, shards: 3, ids: ['P-3', 'P-4'], offsetMs: 190 },
      { poller: 'power', tick: 42, shard: 2, shards: 3, ids: ['P-5'], offsetMs: 357 },
    ]);
    expect(jobs.map(pollJobId)).toEqual(['poll-power-42-0of3', 'poll-power-42-1of3', 'poll-power-42-2of3']);
    expect(await h.runner.plan('vehicles', 42)).toEqual([
      { poller: 'vehicles', tick: 42, shard: 0, shards: 1 },
    ]);
  });

  it("starts the per-entity pollers' shards in turn, none with the list polls at the tick's start", () => {
    const phases = POLLER_NAMES.filter((name) => POLLERS[name].targets).map((_name, index, all) =>
      pollerPhase(index, all.length),
    );
    expect(phases).toEqual([1 / 7, 2 / 7, 3 / 7, 4 / 7, 5 / 7, 6 / 7]);
    // Six pollers of 10 shards on a 60 s interval: one shard every 430 ms instead of six together.
    const starts = phases.flatMap((phase) =>
      Array.from({ length: 10 }, (_, shard) => shardOffset(shard, 10, 60_000, 0.5, phase)),
    );
    expect(new Set(starts).size).toBe(60);
    expect(Math.min(...starts)).toBe(428);
    expect(Math.max(...starts)).toBeLessThan(30_000);
    // One shard starts at once, whatever the phase; no phase is the old even spread.
    expect(shardOffset(0, 1, 60_000, 0.5, 0.5)).toBe(0);
    expect(shardOffset(3, 10, 60_000, 0.5)).toBe(9_000);
    expect(pollerPhase(5, 5)).toBe(0);
  });

  it('computes clock-aligned tick numbers', () => {
    expect(h.runner.tickAt('power', 5_999)).toBe(5);
    expect(h.runner.tickAt('upstream', 119_999)).toBe(1);
  });
});

describe('not power-capable vehicles', () => {
  it('are re-checked with back-off: unsupported_recheck after the 404, doubling, up to unsupported_interval', async () => {
    const statuses = () => h.sim.control.stats().requests.get_vehicle_power_status?.['404'] ?? 0;
    await h.tick('power');
    h.advance(1_000);
    await h.tick('vehicles');
    await h.tick('power');
    let asked = statuses();
    expect(asked).toBeGreaterThanOrEqual(2);
    const [judged] = await h.store.read([{ kind: 'vehicle', id: 'P-5', facet: 'power' }]);
    expect(judged?.state).toMatchObject({ powerCapable: false, unsupportedSince: expect.any(Number) });
    /** Moves the clock on by `ms` and runs a power tick; whether P-5 was asked again. */
    const asksAfter = async (ms: number) => {
      h.advance(ms);
      const outcomes = await h.tick('power');
      const asks = statuses() - asked;
      asked = statuses();
      expect(outcomes.reduce((sum, o) => sum + o.notDue, 0)).toBe(1 - asks);
      return asks === 1;
    };
    // The harness: unsupported_recheck 1m (the default), unsupported_interval 10m. Re-checks 1 min
    // after the judging 404, then 2, 4 and 8 min after the one before; 16 is capped at 10.
    let previous = h.now();
    for (const minutes of [1, 2, 4, 8, 10, 10]) {
      const gap = minutes * 60_000;
      expect(await asksAfter(previous + gap - 3_000 - h.now()), `not before ${minutes} min`).toBe(false);
      let seconds = 0;
      while (!(await asksAfter(1_000))) {
        seconds += 1;
        expect(seconds, `re-checked ${minutes} min after the last`).toBeLessThan(10);
      }
      previous = h.now();
    }
    const [record] = await h.store.read([{ kind: 'vehicle', id: 'P-5', facet: 'power' }]);
    expect(record?.state).toMatchObject({
      powerCapable: false,
      unsupportedSince: judged?.state && (judged.state as { unsupportedSince: number }).unsupportedSince,
    });
    expect(Date.parse(record?.lastPolledAt ?? '')).toBeGreaterThan(Date.parse(record?.observedAt ?? ''));
    expect(await h.newEvents()).toEqual([]);
  });

  it('answer 404 without a warn line: it is their answer, not a failed poll; other failures still warn', async () => {
    const log = captureJsonLog('debug');
    const own = await createHarness({ empty: true, logger: log.logger });
    try {
      const fresh = new Date().toISOString();
      own.sim.control.addVehicle({ id: 'Q-1', vpnConnected: true, updatedAt: fresh, powerCapable: true });
      own.sim.control.addVehicle({ id: 'Q-2', vpnConnected: true, updatedAt: fresh, powerCapable: false });
      await own.tick('vehicles');
      await own.tick('power');
      const warned = () => log.lines.filter((line) => line.msg === 'observations failed (not state changes)');
      expect(warned()).toEqual([]);
      // Still told at debug, one line per entity.
      expect(log.lines.filter((line) => line.msg === 'observation failed' && line.id === 'Q-2')).toHaveLength(
        1,
      );
      own.sim.control.setFaults({ errorRates: { '500': 1 }, scope: 'v1' });
      own.advance(30_000);
      await own.tick('power');
      own.sim.control.clearFaults();
      expect(warned().map((line) => line.poller)).toEqual(['power']);
    } finally {
      await own.close();
    }
  });

  it('raise vehicle.power.supported when they answer again, and are polled as usual from then on', async () => {
    h.sim.control.updateVehicle('P-5', { powerCapable: true, state: 'on' });
    expect(await h.tick('power').then((all) => all.reduce((sum, o) => sum + o.notDue, 0))).toBe(1);
    h.advance(10 * 60_000);
    await h.tick('power');
    const events = await h.newFleetEvents();
    expect(events.map((event) => `${event.type} ${event.subject}`)).toEqual([
      'vehicle.power.supported vehicle/P-5',
    ]);
    expect(events[0]?.data).toMatchObject({
      severity: 'info',
      vehicleId: 'P-5',
      previous: 'unsupported',
      current: 'supported',
      unsupportedSince: expect.any(String),
    });
    const [record] = await h.store.read([{ kind: 'vehicle', id: 'P-5', facet: 'power' }]);
    expect(record?.state).toMatchObject({ powerCapable: true });
    expect(record?.state).not.toHaveProperty('unsupportedSince');
    const outcomes = await h.tick('power');
    expect(outcomes.reduce((sum, o) => sum + o.notDue, 0)).toBe(0);
  });
});

describe('overlapping ticks', () => {
  it('do not poll an entity twice at once: the later tick skips what the earlier one holds', async () => {
    h.sim.control.setFaults({ latencyMs: 300, scope: 'v1' });
    const ids = ['P-1', 'P-2', 'P-3', 'P-4'];
    const before = powerReads();
    const slow = h.runner.runJob({ poller: 'power', tick: 1, shard: 0, shards: 1, ids });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const overlapping = await h.runner.runJob({ poller: 'power', tick: 2, shard: 0, shards: 1, ids });
    const first = await slow;
    h.sim.control.clearFaults();
    expect(first).toMatchObject({ targets: 4, leaseHeld: 0, observed: 4 });
    expect(overlapping).toMatchObject({ targets: 4, leaseHeld: 4, observed: 0 });
    expect(powerReads() - before).toBe(4);
    // Released at the end: the next tick polls them again.
    const next = await h.runner.runJob({ poller: 'power', tick: 3, shard: 0, shards: 1, ids });
    expect(next).toMatchObject({ leaseHeld: 0, observed: 4 });
    expect(await h.newEvents()).toEqual([]);
  });

  it('skip the whole list when another list poll is under way', async () => {
    h.sim.control.setFaults({ latencyMs: 300, scope: 'v1' });
    const slow = h.runner.runJob({ poller: 'vehicles', tick: 1, shard: 0, shards: 1 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const overlapping = await h.runner.runJob({ poller: 'vehicles', tick: 2, shard: 0, shards: 1 });
    await slow;
    h.sim.control.clearFaults();
    expect(overlapping).toMatchObject({ targets: 1, leaseHeld: 1, observed: 0 });
  });
});

describe('the signal pipeline', () => {
  it('re-reads and re-detects on a version conflict, so a change is reported once', async () => {
    const other = new SnapshotStore({ redis: h.redis, prefix: h.prefix, installation: 'test' });
    const ref = { kind: 'vehicle' as const, id: 'C-1', facet: 'link' };
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    const pipeline = new ObservationPipeline({ store: h.store, logger: pino({ enabled: false }) });
    const spec = { poller: 'test', detector: vehicleLinkDetector, options: h.runner.detectors.vehicleLink };
    await pipeline.run(spec, [{ ref, observation: { ok: true, at: at(1), value: { vpnConnected: true } } }]);
    const [stale] = await h.store.read([ref]);
    // Another replica commits the same change first (version 1 → 2).
    const theirs = vehicleLinkDetector(
      stale?.state as never,
      { ok: true, at: at(2), value: { vpnConnected: false } },
      { now: Date.now(), options: h.runner.detectors.vehicleLink },
    );
    await other.commit(ref, 1, { state: theirs.state, observedAt: at(2) }, theirs.events);
    // Ours was read at version 1: the commit conflicts, is re-detected on version 2 and finds no change.
    const result = await pipeline.run(spec, [
      { ref, record: stale, observation: { ok: true, at: at(2), value: { vpnConnected: false } } },
    ]);
    expect(result).toMatchObject({ conflicts: 1, committed: 0, unchanged: 1, events: [] });
    const events = (await h.newFleetEvents()).filter((event) => event.subject === 'vehicle/C-1');
    expect(events.map((event) => event.type)).toEqual(['vehicle.vpn.disconnected']);
    // An older reading than the stored one is dropped.
    const late = await pipeline.run(spec, [
      { ref, observation: { ok: true, at: at(0), value: { vpnConnected: true } } },
    ]);
    expect(late).toMatchObject({ stale: 1, committed: 0, unchanged: 0 });
  });
});

describe('the scheduler', () => {
  it('makes one set of jobs per tick however many replicas tick', async () => {
    let now = 1_000 * 1_000 + 250;
    const plan = (poller: 'power' | 'vehicles' | 'robots', tick: number) => h.runner.plan(poller, tick);
    const lanesOf: PollQueues[] = [];
    const replicas = [0, 1, 2].map(() => {
      const lanes = createPollQueues({ connection: h.redis, prefix: h.prefix });
      queues.push(lanes.fleet, lanes.robots);
      lanesOf.push(lanes);
      return new PollScheduler({
        queues: lanes,
        plan,
        pollers: [
          { name: 'vehicles', intervalMs: 1_000, lane: 'fleet' },
          { name: 'power', intervalMs: 2_000, lane: 'fleet' },
          { name: 'robots', intervalMs: 1_000, lane: 'robots' },
        ],
        now: () => now,
      });
    });
    await Promise.all(replicas.map((replica) => replica.tick()));
    now += 1_000;
    await Promise.all(replicas.map((replica) => replica.tick()));
    // Same tick again: nothing new.
    await Promise.all(replicas.map((replica) => replica.tick()));
    const jobs = await lanesOf[0]!.fleet.getJobs(['waiting', 'delayed', 'prioritized'], 0, -1);
    const ids = jobs.map((job) => job.id).sort();
    // The robot gateway's pollers have a queue of their own (see POLL_LANES).
    const robotJobs = await lanesOf[0]!.robots.getJobs(['waiting', 'delayed', 'prioritized'], 0, -1);
    // No worker runs here, so tick 1000's list polls still wait at tick 1001: it adds none of its own.
    expect(robotJobs.map((job) => job.id).sort()).toEqual(['poll-robots-1000-0of1']);
    expect(ids).toEqual(
      ['poll-vehicles-1000-0of1', 'poll-power-500-0of3', 'poll-power-500-1of3', 'poll-power-500-2of3'].sort(),
    );
    const second = jobs.find((job) => job.id === 'poll-power-500-1of3');
    expect(second?.data as PollJobData).toEqual({
      poller: 'power',
      tick: 500,
      shard: 1,
      shards: 3,
      ids: ['P-3', 'P-4'],
      offsetMs: 190,
    });
    // Offsets count from the tick's start, and the first beat came 250 ms into the tick.
    const delays = Object.fromEntries(
      jobs.filter((job) => job.id?.startsWith('poll-power')).map((job) => [job.id, job.opts.delay ?? 0]),
    );
    expect(delays).toEqual({
      'poll-power-500-0of3': 0,
      'poll-power-500-1of3': 0,
      'poll-power-500-2of3': 107,
    });
    await Promise.all(replicas.map((replica) => replica.stop()));
  });

  it('adds no second job for a shard still queued or running: a poller behind its pace polls every shard in turn', async () => {
    const prefix = `${h.prefix}-behind`;
    const lanes = createPollQueues({ connection: h.redis, prefix });
    queues.push(lanes.fleet, lanes.robots);
    let now = 1_000 * 3_000;
    const enqueued: Array<[string, number, TickPace]> = [];
    const scheduler = new PollScheduler({
      queues: lanes,
      // Four shards a tick, all due at the tick's start.
      plan: async (poller, tick) =>
        [0, 1, 2, 3].map((shard) => ({ poller, tick, shard, shards: 4, ids: [`P-${shard + 1}`] })),
      pollers: [{ name: 'power', intervalMs: 1_000, lane: 'fleet' }],
      now: () => now,
      onEnqueued: (poller, tick, pace) => enqueued.push([poller, tick - 3_000, pace]),
    });
    // A worker that finishes two jobs a tick, half the pace asked for: each job waits for its turn.
    const polled: string[] = [];
    const turns: Array<() => void> = [];
    const connection = createWorkerConnection(redisUrl(), { name: 'test-behind' });
    const worker = new Worker<PollJobData>(
      pollQueueName('fleet'),
      (job) =>
        new Promise<void>((resolve) => {
          polled.push(`${job.data.tick - 3_000}:${job.data.shard}`);
          turns.push(resolve);
        }),
      { connection, prefix: bullPrefix(prefix), concurrency: 1 },
    );
    const finishTwo = async () => {
      for (let i = 0; i < 2; i += 1) {
        const next = polled.length + 1;
        turns.shift()?.();
        await expect.poll(() => polled.length).toBe(next);
      }
    };
    const pending = async () => {
      const counts = await lanes.fleet.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      return Object.values(counts).reduce((sum, n) => sum + n, 0);
    };
    try {
      expect(await scheduler.tick()).toBe(4);
      await expect.poll(() => polled.length).toBe(1);
      const pendingAfterTick: number[] = [];
      for (let tick = 1; tick <= 4; tick += 1) {
        await finishTwo();
        now += 1_000;
        // Shards 2 and 3 (then 0 and 1, ...) still hold a job: only the other two are added.
        expect(await scheduler.tick()).toBe(2);
        // How the held shards' jobs stand is reported once the queue has said.
        await expect.poll(() => enqueued.length).toBe(tick + 1);
        pendingAfterTick.push(await pending());
      }
      // Every shard in turn, none left behind; the queue never holds more than one job a shard.
      expect(polled).toEqual(['0:0', '0:1', '0:2', '0:3', '1:0', '1:1', '2:2', '2:3', '3:0']);
      expect(pendingAfterTick).toEqual([4, 4, 4, 4]);
      // Of the two held shards, one job is running (the worker's one slot) and one has not started.
      const held = { shards: 4, coalesced: 2, waiting: 1 };
      expect(enqueued).toEqual([
        ['power', 0, { shards: 4, coalesced: 0, waiting: 0 }],
        ['power', 1, held],
        ['power', 2, held],
        ['power', 3, held],
        ['power', 4, held],
      ]);
    } finally {
      await scheduler.stop();
      for (const turn of turns) turn();
      await worker.close();
      connection.disconnect();
    }
  });

  it('runs a local poller itself, after its delay, and puts none of its jobs in the queue', async () => {
    const lanes = createPollQueues({ connection: h.redis, prefix: `${h.prefix}-local` });
    queues.push(lanes.fleet, lanes.robots);
    const ran: Array<{ data: PollJobData; at: number }> = [];
    const start = performance.now();
    const scheduler = new PollScheduler({
      queues: lanes,
      plan: (poller, tick) => h.runner.plan(poller, tick),
      // The tick began 100 ms ago and its jobs are due 150 ms into it.
      pollers: [{ name: 'upstream', intervalMs: 60_000, delayMs: 150, local: true, lane: 'fleet' }],
      now: () => 60_000 * 1_000 + 100,
      runLocal: async (data) => {
        ran.push({ data, at: performance.now() - start });
      },
    });
    expect(await scheduler.tick()).toBe(1);
    await expect.poll(() => ran.length).toBe(1);
    expect(ran[0]?.data).toMatchObject({ poller: 'upstream', tick: 1_000, shard: 0, shards: 1 });
    expect(ran[0]?.at).toBeGreaterThanOrEqual(45);
    // The same tick again: not run twice.
    await scheduler.tick();
    await scheduler.stop();
    expect(ran).toHaveLength(1);
    for (const queue of [lanes.fleet, lanes.robots]) {
      expect(await queue.getJobCounts('waiting', 'delayed', 'prioritized')).toEqual({
        waiting: 0,
        delayed: 0,
        prioritized: 0,
      });
    }
  });

  it("puts each poller's jobs in the lane of the upstream it reads", () => {
    const lanes = Object.fromEntries(
      scheduledPollers(h.runner.config.pollers)
        .filter((poller) => !poller.local)
        .map((poller) => [poller.name, poller.lane]),
    );
    expect(lanes).toEqual({
      vehicles: 'fleet',
      power: 'fleet',
      robots: 'robots',
      robot_health: 'robots',
      robot_feedback: 'robots',
      robot_lease: 'robots',
      robot_config: 'robots',
      robot_command_queue: 'robots',
    });
  });
});
