import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Daemon, startDaemon } from '../../src/daemon/index.js';
import type { FleetEvent } from '../../src/events/types.js';
import { closeQuietly } from '../../src/lib/redis-connection.js';
import { POLL_THREAD_NICENESS } from '../../src/lib/thread-priority.js';
import { startSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/types.js';
import { EventLog } from '../../src/store/event-log.js';
import { storeKeys } from '../../src/store/keys.js';
import { testConfig } from '../pollers/harness.js';
import { captureJsonLog } from '../support/json-log.js';
import { connect, deletePrefixKeys, eventually, uniquePrefix } from '../support/redis.js';

let sim: Simulator;
let admin: Redis;
const prefixes: string[] = [];
const running: Daemon[] = [];

function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

function config(over: Record<string, unknown> = {}) {
  const prefix = uniquePrefix();
  prefixes.push(prefix);
  return testConfig(sim.url, prefix, {
    pollers: {
      robot_config: { enabled: false },
      upstream: { interval: '2s' },
    },
    ...over,
  });
}

beforeAll(async () => {
  sim = await startSimulator({ vehicles: 6, robots: 2, seed: 3, behaviours: false });
  for (const vehicle of sim.control.state().vehicles) {
    sim.control.updateVehicle(vehicle.id, {
      vpnConnected: true,
      pendingCommand: null,
      updatedAt: new Date().toISOString(),
    });
  }
  admin = connect();
  await admin.ping();
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((daemon) => daemon.stop()));
});

afterAll(async () => {
  await sim?.close();
  for (const prefix of prefixes) await deletePrefixKeys(admin, prefix);
  await closeQuietly(admin);
});

describe('startDaemon', () => {
  it.each([1, 4])(
    'polls on clock-aligned ticks, relays each change as exactly one event across replicas, and stops cleanly (%i shard(s))',
    async (shards) => {
      const before = resources();
      const cfg = config();
      cfg.redis.shards = shards;
      const received: FleetEvent[] = [];
      const onEvent = (event: FleetEvent) => {
        received.push(event);
      };
      const first = captureJsonLog();
      const replicas = [
        startDaemon(cfg, { logger: first.logger, onEvent, relay: { blockMs: 200 } }),
        startDaemon(cfg, { logger: pino({ enabled: false }), onEvent, relay: { blockMs: 200 } }),
      ];
      running.push(...replicas);
      const log = new EventLog({ redis: admin, prefix: cfg.redis.prefix, shards });

      // Baseline learnt: power snapshots exist for the listed vehicles.
      await eventually(
        () => admin.exists(storeKeys(cfg.redis.prefix, shards).snapshot('vehicle', 'veh-0001', 'power')),
        (n) => n === 1,
      );
      const target = 'veh-0002';
      sim.control.updateVehicle(target, { vpnConnected: false });
      await eventually(
        async () => received.filter((event) => event.subject === `vehicle/${target}`).length,
        (n) => n >= 1,
      );
      sim.control.updateVehicle(target, { vpnConnected: true });
      await eventually(
        async () => received.filter((event) => event.type === 'vehicle.vpn.connected').length,
        (n) => n >= 1,
      );
      // Let a few more ticks pass (two more vehicle-list polls on each replica's count): nothing is
      // reported twice.
      const vehicleLists = () =>
        replicas.reduce((sum, replica) => sum + (replica.counters.totals.get('vehicles')?.observed ?? 0), 0);
      const listsSoFar = vehicleLists();
      await eventually(
        async () => vehicleLists(),
        (lists) => lists >= listsSoFar + 2,
      );
      const mine = received
        .filter((event) => event.subject === `vehicle/${target}`)
        .map((event) => event.type);
      expect(mine).toEqual(['vehicle.vpn.disconnected', 'vehicle.vpn.connected']);
      const logged = (await log.range({ subject: `vehicle/${target}` })).map((entry) => entry.event.type);
      expect(logged).toEqual(['vehicle.vpn.disconnected', 'vehicle.vpn.connected']);
      expect(new Set(received.map((event) => event.id)).size).toBe(received.length);
      const counters = replicas.map((replica) => replica.counters.jobs);
      expect(counters.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);

      const started = Date.now();
      await Promise.all(replicas.map((replica) => replica.stop()));
      expect(Date.now() - started).toBeLessThan(5_000);
      // Safe to call again.
      await replicas[0]!.stop();

      const messages = first.lines.map((line) => line.msg);
      expect(messages).toContain('fleetwatch running');
      expect(messages).toContain('fleetwatch stopped');
      const start = first.lines.find((line) => line.msg === 'fleetwatch running');
      expect(start).toMatchObject({ redis: cfg.redis.url, pollers: { vehicles: 'every 1s' } });
      expect(start?.pollers).not.toHaveProperty('robot_config');

      // No sockets or timers left behind (the simulator and the admin connection were there before).
      await eventually(
        async () => resources(),
        (now) => ['TCPSocketWrap', 'Timeout'].every((kind) => (now[kind] ?? 0) <= (before[kind] ?? 0)),
        { timeoutMs: 5_000 },
      );
    },
  );

  it('refuses a store laid out over another number of shards, says so in one line, and stops', async () => {
    const cfg = config();
    cfg.redis.shards = 12;
    // A store a daemon of one shard laid out (a marker without a shard count is one of one shard).
    await admin.hset(
      storeKeys(cfg.redis.prefix).controlMarker,
      'epoch',
      'e-1',
      'createdAt',
      '2026-01-01T00:00:00.000Z',
      'replaced',
      '',
    );
    const { lines, logger } = captureJsonLog();
    const daemon = startDaemon(cfg, { logger });
    running.push(daemon);
    await daemon.stopped;
    const message = `the Redis store under prefix "${cfg.redis.prefix}" is laid out over 1 shard(s) but redis.shards is 12: set redis.shards to 1, or reset the store (delete its keys) or use a new redis.prefix to start over with 12`;
    expect(daemon.refused).toBe(message);
    expect(lines.filter((line) => line.level === 50).map((line) => line.msg)).toEqual([message]);
    // Nothing was laid out over 12 shards.
    expect(await admin.keys(`{${cfg.redis.prefix}.*`)).toEqual([]);
  });

  it('stops when its signal aborts', async () => {
    const controller = new AbortController();
    const daemon = startDaemon(config(), { logger: pino({ enabled: false }), signal: controller.signal });
    running.push(daemon);
    await daemon.http?.listening;
    controller.abort();
    await daemon.stopped;
  });

  it.each([false, true])(
    'gives in-flight polls the shutdown grace, then aborts them (poll thread: %s)',
    async (thread) => {
      sim.control.setFaults({ latencyMs: 5_000, scope: 'v1' });
      try {
        const cfg = config({
          upstream: { http: { request_timeout: 20_000 } },
          worker: { concurrency: 4, shutdown_grace: '500ms', poll_thread: thread },
        });
        const { lines, logger } = captureJsonLog();
        const daemon = startDaemon(cfg, { logger });
        running.push(daemon);
        // Stop once the first vehicles poll is waiting for the slow list.
        const delayedBefore = sim.control.stats().faults.delayed;
        await eventually(
          async () => sim.control.stats().faults.delayed,
          (delayed) => delayed > delayedBefore,
        );
        const started = Date.now();
        await daemon.stop();
        expect(Date.now() - started).toBeLessThan(4_000);
        expect(lines.find((line) => line.msg === 'fleetwatch stopped')).toMatchObject({ polls: 'forced' });
      } finally {
        sim.control.clearFaults();
      }
    },
  );

  it('stops its parts in the reverse of their start order: reloads and HTTP first, the upstream client last', async () => {
    const prefix = `mech-${randomBytes(5).toString('hex')}`;
    prefixes.push(prefix);
    const { lines, logger } = captureJsonLog('debug');
    const daemon = startDaemon(testConfig(sim.url, prefix), { logger });
    running.push(daemon);
    await daemon.http?.listening;
    await daemon.stop();
    const order = lines.filter((line) => line.msg === 'stopped').map((line) => line.component);
    expect(order).toEqual([
      'config reload',
      'http',
      'metrics',
      'polls',
      'upstream windows',
      'outbox relay',
      'events worker',
      'notification step',
      'delivery',
      'store guard',
      'queues',
      'redis health',
      'connections',
      'upstream client',
    ]);
    const messages = lines.map((line) => line.msg);
    expect(messages.indexOf('fleetwatch stopping')).toBeLessThan(messages.indexOf('stopped'));
    expect(messages.at(-1)).toBe('fleetwatch stopped');
  });

  it('starts quietly: no warning while its parts come up on a healthy Redis and upstream', async () => {
    const cfg = config({
      receivers: [{ kind: 'console', name: 'terminal' }],
      notifications: { route: { receiver: 'terminal' } },
    });
    const { lines, logger } = captureJsonLog('info');
    const daemon = startDaemon(cfg, { logger });
    running.push(daemon);
    await daemon.http?.listening;
    // Two vehicle-list rounds: every part has had its first look at Redis by then (the store guard
    // and the flusher look at once, the flusher every second).
    await eventually(
      async () => daemon.counters.totals.get('vehicles')?.observed ?? 0,
      (observed) => observed >= 2,
    );
    await daemon.stop();
    expect(lines.map((line) => line.msg)).toContain('fleetwatch stopped');
    // A loaded machine can make one health write take over 500 ms, which the daemon rightly says;
    // that is Redis being slow, not a part starting before its connection was ready.
    const slow = (line: { msg?: unknown }) => String(line.msg).startsWith('Redis is not answering');
    expect(lines.filter((line) => Number(line.level) >= 40 && !slow(line))).toEqual([]);
  });
});

/** Each thread's nice value, from /proc (Linux keeps one per thread). */
function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // After the command name in parentheses: field 3 (state) onwards; nice is field 19.
      return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    } catch {
      return []; // the thread ended meanwhile
    }
  });
}

const THREADED = { concurrency: 4, shutdown_grace: '3s', poll_thread: true };

/**
 * `worker.poll_thread: true`: the scheduler and the poll workers run on a thread of their own.
 * What the daemon shows must not change: events, counters, metrics, log lines and the shutdown.
 */
describe('startDaemon with worker.poll_thread', () => {
  it('polls on its own thread: events, counters, metrics (its heap and collections among them) and its log lines reach the daemon, and it stops cleanly', {
    timeout: 60_000,
  }, async () => {
    const received: FleetEvent[] = [];
    const { lines, logger } = captureJsonLog('debug');
    const daemon = startDaemon(config({ worker: THREADED }), {
      logger,
      onEvent: (event) => {
        received.push(event);
      },
      relay: { blockMs: 200 },
    });
    running.push(daemon);
    // The poll thread compiles its modules when it starts: on a loaded machine that alone can take
    // seconds, so the first polls get a wider margin than the events after them.
    await eventually(
      async () => daemon.counters.totals.get('power')?.observed ?? 0,
      (observed) => observed >= 6,
      { timeoutMs: 30_000 },
    );
    const target = 'veh-0003';
    sim.control.updateVehicle(target, { vpnConnected: false });
    await eventually(
      async () =>
        received.filter((event) => event.subject === `vehicle/${target}`).map((event) => event.type),
      (types) => types.includes('vehicle.vpn.disconnected'),
    );
    sim.control.updateVehicle(target, { vpnConnected: true });

    // The hooks' calls, replayed on the daemon's side: poll jobs, upstream exchanges, events.
    // The event's count may reach the daemon a batch (at most 20 ms) after the event itself.
    const expected = [
      /fleetwatch_poll_jobs_total\{poller="vehicles",result="ok"[^}]*\} [1-9]/,
      /fleetwatch_upstream_requests_total\{[^}]*operation="list_vehicles"[^}]*\} [1-9]/,
      /fleetwatch_events_total\{type="vehicle.vpn.disconnected"[^}]*\} 1\n/,
      // The thread's heap, as it reports it (prom-client's heap gauges are the daemon thread's).
      /fleetwatch_poll_thread_heap_size_used_bytes(\{[^}]*\})? [1-9]\d{5,}\n/,
      // ... and its collections (prom-client's are the daemon thread's).
      /fleetwatch_poll_thread_gc_duration_seconds_count\{[^}]*kind="minor"[^}]*\} [1-9]/,
    ];
    const metrics = await eventually(
      () => daemon.metrics.registry.metrics(),
      (text) => expected.every((pattern) => pattern.test(text)),
    );
    for (const pattern of expected) expect(metrics).toMatch(pattern);
    // The thread's lines, written by the daemon's logger.
    expect(lines.some((line) => line.thread === 'poll')).toBe(true);
    // The daemon's store guard follows the thread's commits of incidents instead of reading them all again.
    await eventually(
      async () =>
        lines.filter((line) => line.msg === 'open incidents followed' && line.thread === undefined).length,
      (followed) => followed > 0,
    );
    if (process.platform === 'linux' && getPriority() < 19) {
      // One thread of this process, the poll thread, runs at a lower priority; this one does not.
      const lowered = Math.min(19, getPriority() + POLL_THREAD_NICENESS);
      expect(threadNiceValues().filter((nice) => nice === lowered)).toHaveLength(1);
    }

    const started = Date.now();
    await daemon.stop();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(lines.find((line) => line.msg === 'fleetwatch stopped')).toMatchObject({ polls: 'graceful' });
    expect(lines.filter((line) => Number(line.level) >= 50)).toEqual([]);
    expect(daemon.failed).toBeUndefined();
  });
});
