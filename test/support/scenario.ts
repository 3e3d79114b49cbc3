import { setTimeout as delay } from 'node:timers/promises';
import type { PollerName } from '../../src/config/schema.js';
import { type RedisClient, scanKeys } from '../../src/lib/redis-connection.js';
import { createPollQueues } from '../../src/pollers/poll-queue.js';
import { QUEUE_NAMES } from '../../src/queues/names.js';
import type { SimulatorControl } from '../../src/simulator/index.js';
import type { EventLog, EventLogEntry } from '../../src/store/event-log.js';
import { decodeSegment, storeKeys } from '../../src/store/keys.js';
import { FLEET_POLLERS } from './daemon-process.js';

/**
 * Scripting changes against a running fleetwatch and awaiting their events in the event log.
 * Every wait is bounded polling; a time-out names what was still missing.
 */

export const vehicleSubject = (id: string): string => `vehicle/${id}`;
export const robotSubject = (deviceId: string): string => `robot/${deviceId}`;

/** `<type> <subject>`: what the tests count events by. */
export type EventKey = string;
export const eventKey = (type: string, subject: string): EventKey => `${type} ${subject}`;

export interface ExpectedEvent {
  type: string;
  subject: string;
}

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** `redis.shards` of the daemons (default 1): where their per-entity keys are. */
  shards?: number;
}

/**
 * Polls `probe` until `pending` says nothing is missing (returns undefined); rejects after
 * `timeoutMs` with `what` and the last description of what was missing.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T>,
  pending: (value: T) => string | undefined,
  { timeoutMs = 30_000, intervalMs = 200 }: WaitOptions = {},
): Promise<T> {
  const started = Date.now();
  for (;;) {
    let value: T | undefined;
    let missing: string | undefined;
    try {
      value = await probe();
      missing = pending(value);
    } catch (error) {
      missing = `probe failed: ${(error as Error).message}`;
    }
    if (missing === undefined) return value as T;
    if (Date.now() - started > timeoutMs) {
      throw new Error(`${what}: not reached within ${timeoutMs} ms; still missing: ${missing}`);
    }
    await delay(intervalMs);
  }
}

/** Every entry of the log, oldest first (pages forward, so no cap applies). */
export async function readAllEvents(log: EventLog): Promise<EventLogEntry[]> {
  const all: EventLogEntry[] = [];
  let since = '0-0';
  for (;;) {
    const page = await log.range({ since, limit: 10_000 });
    all.push(...page);
    const last = page.at(-1);
    if (page.length < 10_000 || !last) return all;
    since = last.streamId;
  }
}

export function countByKey(entries: readonly EventLogEntry[]): Map<EventKey, number> {
  const counts = new Map<EventKey, number>();
  for (const { event } of entries) {
    const key = eventKey(event.type, event.subject);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

export interface LogDiff {
  /** Expected but seen fewer times than expected: `key (seen n of m)`. */
  missing: string[];
  /** Expected, but seen more often: `key (seen n, expected m)`. */
  duplicated: string[];
  /** Seen, never expected: `key ×n`. */
  unexpected: string[];
}

export function diffCounts(
  expected: ReadonlyMap<EventKey, number>,
  actual: ReadonlyMap<EventKey, number>,
): LogDiff {
  const diff: LogDiff = { missing: [], duplicated: [], unexpected: [] };
  for (const [key, want] of expected) {
    const seen = actual.get(key) ?? 0;
    if (seen < want) diff.missing.push(`${key} (seen ${seen} of ${want})`);
    if (seen > want) diff.duplicated.push(`${key} (seen ${seen}, expected ${want})`);
  }
  for (const [key, seen] of actual) {
    if (!expected.has(key)) diff.unexpected.push(`${key} ×${seen}`);
  }
  for (const list of Object.values(diff)) list.sort();
  return diff;
}

export interface StepRecord {
  label: string;
  ms: number;
}

/**
 * The expected content of the event log as a multiset of `<type> <subject>`, built step by step:
 * each step applies a change and waits until the log holds at least what is expected so far.
 */
export class Scenario {
  readonly expected = new Map<EventKey, number>();
  readonly steps: StepRecord[] = [];
  readonly #log: EventLog;
  readonly #stepTimeoutMs: number;
  readonly #intervalMs: number;

  /**
   * `intervalMs`: how often a wait reads the whole log (default 200 ms). A test whose log stays
   * small reads it more often, so that each step ends soon after its events are logged.
   */
  constructor(
    log: EventLog,
    { stepTimeoutMs = 30_000, intervalMs = 200 }: { stepTimeoutMs?: number; intervalMs?: number } = {},
  ) {
    this.#log = log;
    this.#stepTimeoutMs = stepTimeoutMs;
    this.#intervalMs = intervalMs;
  }

  expect(events: readonly ExpectedEvent[]): void {
    for (const { type, subject } of events) {
      const key = eventKey(type, subject);
      this.expected.set(key, (this.expected.get(key) ?? 0) + 1);
    }
  }

  /** Current counts of the whole log. */
  async counts(): Promise<Map<EventKey, number>> {
    return countByKey(await readAllEvents(this.#log));
  }

  /** Waits until every key in `keys` (default: all expected) is in the log at least as often as expected. */
  async waitForExpected(keys?: readonly EventKey[], options: WaitOptions = {}): Promise<void> {
    const wanted = keys ?? [...this.expected.keys()];
    await waitFor(
      'expected events in the log',
      () => this.counts(),
      (counts) => {
        const short = wanted.filter((key) => (counts.get(key) ?? 0) < (this.expected.get(key) ?? 0));
        return short.length === 0
          ? undefined
          : short
              .map((key) => `${key} (seen ${counts.get(key) ?? 0} of ${this.expected.get(key)})`)
              .join(', ');
      },
      { timeoutMs: this.#stepTimeoutMs, intervalMs: this.#intervalMs, ...options },
    );
  }

  /** Applies `action`, adds `events` to what is expected, and waits for them to be logged. */
  async step(
    label: string,
    action: () => unknown,
    events: readonly ExpectedEvent[],
    options: WaitOptions = {},
  ): Promise<void> {
    const started = Date.now();
    this.expect(events);
    await action();
    try {
      await this.waitForExpected(
        events.map(({ type, subject }) => eventKey(type, subject)),
        options,
      );
    } catch (error) {
      throw new Error(`step "${label}": ${(error as Error).message}`);
    }
    this.steps.push({ label, ms: Date.now() - started });
  }

  /** Waits until the log has not grown for `quietMs` (no event still on its way). */
  async waitForQuiet({ quietMs = 3_000, timeoutMs = 30_000 }: { quietMs?: number; timeoutMs?: number } = {}) {
    let length = -1;
    let since = Date.now();
    await waitFor(
      `event log quiet for ${quietMs} ms`,
      () => this.#log.count(),
      (count) => {
        if (count !== length) {
          length = count;
          since = Date.now();
        }
        const quiet = Date.now() - since;
        return quiet >= quietMs ? undefined : `log length ${count}, quiet for ${quiet} ms`;
      },
      { timeoutMs, intervalMs: 250 },
    );
  }

  /** Expected vs. the whole log. */
  async diff(): Promise<LogDiff> {
    return diffCounts(this.expected, await this.counts());
  }

  /** The logged events behind a diff's `duplicated` and `unexpected` keys, one JSON line each. */
  async offending(): Promise<string> {
    const entries = await readAllEvents(this.#log);
    const counts = countByKey(entries);
    const lines = entries
      .filter(({ event }) => {
        const key = eventKey(event.type, event.subject);
        return (counts.get(key) ?? 0) > (this.expected.get(key) ?? 0);
      })
      .map(({ streamId, event }) => `${streamId} ${JSON.stringify(event)}`);
    return lines.join('\n');
  }
}

// --- Redis snapshot probes ----------------------------------------------------------------------

async function sortedKeys(redis: RedisClient, pattern: string): Promise<string[]> {
  return (await scanKeys(redis, pattern)).sort();
}

/**
 * Waits until fleetwatch has committed its first vehicle list and robot list (the membership
 * snapshots exist). Until then an entity added to the simulator would be part of the baseline
 * list (silent) instead of being discovered.
 */
export async function waitForMembershipBaseline(
  redis: RedisClient,
  prefix: string,
  { shards = 1, ...options }: WaitOptions = {},
): Promise<void> {
  const keys = storeKeys(prefix, shards);
  // Every shard's part of each list.
  const wanted = keys.allShards.flatMap(({ shard }) => [
    keys.membership('vehicle', shard),
    keys.membership('robot', shard),
  ]);
  await waitFor(
    'first vehicle and robot lists committed',
    async () => Promise.all(wanted.map((key) => redis.exists(key))),
    (exists) => {
      const absent = wanted.filter((_, i) => exists[i] !== 1);
      return absent.length === 0 ? undefined : absent.join(', ');
    },
    { timeoutMs: 30_000, ...options },
  );
}

export interface SnapshotBaseline {
  /** id → facets with a snapshot. */
  vehicles: Map<string, string[]>;
  robots: Map<string, string[]>;
}

async function readSnapshots(redis: RedisClient, prefix: string, shards = 1): Promise<SnapshotBaseline> {
  const result: SnapshotBaseline = { vehicles: new Map(), robots: new Map() };
  for (const { tag } of storeKeys(prefix, shards).allShards)
    for (const [kind, target] of [
      ['vehicle', result.vehicles],
      ['robot', result.robots],
    ] as const) {
      for (const key of await sortedKeys(redis, `${tag}:snap:${kind}:*`)) {
        const [id, facet] = key.slice(`${tag}:snap:${kind}:`.length).split(':');
        if (id === undefined || facet === undefined) continue;
        const decoded = decodeSegment(id);
        target.set(decoded, [...(target.get(decoded) ?? []), decodeSegment(facet)]);
      }
    }
  return result;
}

/**
 * Waits until every listed vehicle and robot has its per-entity snapshots (each entity as many
 * facets as the most complete one of its kind) and the set of snapshot keys has not changed for
 * `stableMs`. After that a change in the simulator is a change against a baseline, not part of it.
 * Right after `waitForPollRound`, which has every entity polled, `stableMs: 0` checks the snapshots
 * without waiting for the stable window.
 */
export async function waitForEntityBaseline(
  redis: RedisClient,
  prefix: string,
  { vehicles, robots }: { vehicles: readonly string[]; robots: readonly string[] },
  {
    stableMs = 3_000,
    timeoutMs = 40_000,
    shards = 1,
  }: { stableMs?: number; timeoutMs?: number; shards?: number } = {},
): Promise<SnapshotBaseline> {
  let signature = '';
  let since = Date.now();
  return waitFor(
    'per-entity snapshots of every vehicle and robot',
    () => readSnapshots(redis, prefix, shards),
    (seen) => {
      const problems: string[] = [];
      for (const [kind, ids, map] of [
        ['vehicle', vehicles, seen.vehicles],
        ['robot', robots, seen.robots],
      ] as const) {
        const most = Math.max(0, ...[...map.values()].map((facets) => facets.length));
        const incomplete = ids.filter((id) => (map.get(id)?.length ?? 0) < Math.max(most, 1));
        if (incomplete.length > 0)
          problems.push(`${kind}s without all ${most} snapshots: ${incomplete.slice(0, 8).join(', ')}`);
      }
      const now = JSON.stringify([[...seen.vehicles].sort(), [...seen.robots].sort()]);
      if (now !== signature) {
        signature = now;
        since = Date.now();
      }
      if (problems.length > 0) return problems.join('; ');
      const stable = Date.now() - since;
      return stable >= stableMs ? undefined : `snapshot keys stable for ${stable} of ${stableMs} ms`;
    },
    { timeoutMs, intervalMs: 250 },
  );
}

// --- poll rounds --------------------------------------------------------------------------------

export interface PollRoundOptions extends WaitOptions {
  /**
   * The pollers that must finish a round (default: those `daemonConfig` runs at `intervalMs`).
   * A per-entity poller with no entity to poll makes no jobs, so it never finishes one.
   */
  pollers?: readonly PollerName[];
  /** Their interval (default 1 s, `daemonConfig`'s). */
  intervalMs?: number;
}

/** How many of the newest completed poll jobs a probe reads: several rounds of a test fleet. */
const COMPLETED_JOBS_READ = 200;

/**
 * Waits for a poll round that begins after the call: every poll job that existed at the call has
 * finished, and each poller has completed every shard of a tick that started after it. From then
 * on nothing polled before the call can still add an event, and the upstream's current state has
 * been read once by every poller; a test judges the log then, instead of after a quiet period.
 * The ticks are read from the BullMQ poll queues under `prefix` (finished jobs are kept an hour).
 */
export async function waitForPollRound(
  redis: RedisClient,
  prefix: string,
  { pollers = FLEET_POLLERS, intervalMs = 1_000, ...options }: PollRoundOptions = {},
): Promise<void> {
  const since = Date.now();
  const queues = Object.values(createPollQueues({ connection: redis, prefix }));
  try {
    await waitFor(
      `a poll round of ${pollers.join(', ')} begun after the wait`,
      () =>
        Promise.all([
          Promise.all(
            queues.map((queue) =>
              queue.getJobs(['active', 'waiting', 'delayed', 'prioritized'], 0, -1, true),
            ),
          ).then((lanes) => lanes.flat()),
          Promise.all(
            queues.map((queue) => queue.getJobs(['completed'], 0, COMPLETED_JOBS_READ - 1, false)),
          ).then((lanes) => lanes.flat()),
        ]),
      ([unfinished, completed]) => {
        const earlier = unfinished.filter((job) => job.timestamp < since).map((job) => job.id);
        // `<poller> <tick>` → the shards of that tick completed, of how many (ticks begun since only)
        const ticks = new Map<string, { poller: string; done: Set<number>; of: number }>();
        for (const { data } of completed) {
          if (data.tick * intervalMs < since) continue;
          const key = `${data.poller} ${data.tick}`;
          const tick = ticks.get(key) ?? { poller: data.poller, done: new Set<number>(), of: data.shards };
          ticks.set(key, tick);
          tick.done.add(data.shard);
        }
        const complete = new Set(
          [...ticks.values()].filter((t) => t.done.size === t.of).map((t) => t.poller),
        );
        const behind = pollers.filter((poller) => !complete.has(poller));
        const problems = [
          ...(earlier.length === 0
            ? []
            : [
                `${earlier.length} poll jobs from before still unfinished (${earlier.slice(0, 5).join(', ')})`,
              ]),
          ...(behind.length === 0 ? [] : [`no complete tick since of ${behind.join(', ')}`]),
        ];
        return problems.length === 0 ? undefined : problems.join('; ');
      },
      { timeoutMs: 30_000, ...options },
    );
  } finally {
    await Promise.all(queues.map((queue) => queue.close()));
  }
}

/**
 * Waits until every event in the log has been handed to the BullMQ `events` queue (a job with the
 * event id exists) and the outbox is empty: the relay lost nothing on the way out. Entries a killed
 * replica's relay had read but not acknowledged come back only once they have been idle for the
 * relay's claim time (30 s by default), so after SIGKILLs this can take that long.
 */
export async function waitForHandOff(
  redis: RedisClient,
  log: EventLog,
  prefix: string,
  { shards = 1, ...options }: WaitOptions = {},
): Promise<{ events: number; ms: number }> {
  const started = Date.now();
  const keys = storeKeys(prefix, shards);
  const ids = (await readAllEvents(log)).map(({ event }) => event.id);
  const sum = (counts: number[]) => (counts.includes(-1) ? -1 : counts.reduce((a, b) => a + b, 0));
  const length = (key: string) => redis.xlen(key).catch(() => -1);
  await waitFor(
    'every logged event handed to the events queue',
    async () => {
      // The shards' outboxes are in slots of their own; the queue's jobs all under `{prefix}`.
      const outbox = sum(await Promise.all(keys.allShards.map((shard) => length(shard.outbox))));
      const rejected = sum(await Promise.all(keys.allShards.map((shard) => length(shard.outboxRejected))));
      const pipeline = redis.pipeline();
      for (const id of ids) pipeline.exists(`${keys.controlTag}:${QUEUE_NAMES.events}:${id}`);
      const replies = ids.length === 0 ? [] : ((await pipeline.exec()) ?? []);
      return [outbox, rejected, ...replies.map(([error, value]) => (error ? -1 : Number(value)))];
    },
    ([outbox = -1, rejected = -1, ...jobs]) => {
      const missing = ids.filter((_, i) => jobs[i] !== 1);
      const problems = [
        ...(outbox === 0 ? [] : [`outbox holds ${outbox} entries`]),
        ...(rejected <= 0 ? [] : [`outbox:rejected holds ${rejected} entries`]),
        ...(missing.length === 0
          ? []
          : [`no job for ${missing.length} events (${missing.slice(0, 5).join(', ')})`]),
      ];
      return problems.length === 0 ? undefined : problems.join('; ');
    },
    { timeoutMs: 60_000, ...options },
  );
  return { events: ids.length, ms: Date.now() - started };
}

// --- randomness ---------------------------------------------------------------------------------

/** A small seeded PRNG (mulberry32) so a failing chaos run can be replayed with its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

// --- a clean fleet ------------------------------------------------------------------------------

export interface FleetIds {
  vehicles: string[];
  robots: string[];
}

const pad = (n: number): string => String(n).padStart(4, '0');

/** The VPN address the tests give vehicle number `n`. */
export const testAddress = (n: number): string => `10.20.${(n >>> 8) & 0xff}.${n & 0xff}`;

/**
 * Adds `vehicles` vehicles (`veh-0001`, ...) and `robots` robots (`rb-0001`, ...) in a known, quiet
 * state: connected, with an address, powered off with a fresh report and no command; robots
 * healthy, idle, no lease, a site, route and zone set loaded. Nothing about them is an incident,
 * so discovering them produces only `*.discovered`.
 */
export interface FleetShape {
  vehicles: number;
  robots: number;
  firstVehicle?: number;
  firstRobot?: number;
}

/** The ids `addQuietFleet` gives a fleet of this shape. */
export function fleetIds({ vehicles, robots, firstVehicle = 1, firstRobot = 1 }: FleetShape): FleetIds {
  return {
    vehicles: Array.from({ length: vehicles }, (_, i) => `veh-${pad(firstVehicle + i)}`),
    robots: Array.from({ length: robots }, (_, i) => `rb-${pad(firstRobot + i)}`),
  };
}

export function addQuietFleet(control: SimulatorControl, shape: FleetShape): FleetIds {
  const ids = fleetIds(shape);
  for (const id of ids.vehicles) {
    control.addVehicle({
      id,
      vpnConnected: true,
      ipAddress: testAddress(Number(id.slice(4))),
      state: 'off',
      pendingCommand: null,
      powerCapable: true,
      stuck: false,
    });
  }
  for (const deviceId of ids.robots) {
    control.addRobot({
      deviceId,
      healthy: true,
      feedback: { cortexStatus: 1, navStatus: 0, vehicleState: 'IDLE' },
      lease: null,
      activeSite: 'depot',
      loadedRoute: 'route-1',
      loadedZoneSet: 'default',
    });
  }
  return ids;
}

/** One `vehicle.discovered` / `robot.discovered` per id. */
export function discoveredEvents({ vehicles, robots }: FleetIds): ExpectedEvent[] {
  return [
    ...vehicles.map((id) => ({ type: 'vehicle.discovered', subject: vehicleSubject(id) })),
    ...robots.map((id) => ({ type: 'robot.discovered', subject: robotSubject(id) })),
  ];
}

/** A lease the simulator will not expire during a test (its default is 60 s). */
export const longLease = (holderId: string): { holderId: string; expiresAt: string } => ({
  holderId,
  expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
});
