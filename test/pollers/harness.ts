import type { Redis } from 'ioredis';
import { type Logger, pino } from 'pino';
import { type Config, configSchema } from '../../src/config/schema.js';
import { buildPollingCore } from '../../src/daemon/polling-core.js';
import type { FleetEvent } from '../../src/events/types.js';
import { closeQuietly, createProducerConnection, waitForReady } from '../../src/lib/redis-connection.js';
import type { PollerName } from '../../src/pollers/config.js';
import type { PollCounters, PollHooks, PollOutcome } from '../../src/pollers/outcome.js';
import type { PollRunner } from '../../src/pollers/runner.js';
import type { UpstreamWindows } from '../../src/pollers/upstream-windows.js';
import { startSimulator } from '../../src/simulator/index.js';
import type { Simulator, SimulatorOptions } from '../../src/simulator/types.js';
import { EventLog } from '../../src/store/event-log.js';
import type { SnapshotStore } from '../../src/store/snapshot-store.js';
import type { Upstream } from '../../src/upstream/index.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../support/redis.js';

/**
 * Pollers run tick by tick against an in-process simulator and a real Redis (unique prefix), with
 * a clock the test can move forward (`advance`). Events are read back from the event log.
 */

export interface HarnessOptions {
  simulator?: SimulatorOptions;
  /** Raw config sections (snake_case, as in the YAML file) merged over the test defaults. */
  config?: Record<string, unknown>;
  hooks?: PollHooks;
  /** Remove the seeded fleet so the test builds its own. */
  empty?: boolean;
  /** Where the test's keys start (`uniquePrefix`'s default unless given). */
  prefixStart?: string;
  /** The whole Redis key prefix (default: a unique one starting with `prefixStart`). */
  prefix?: string;
  /** What the pollers log to (nothing unless given). */
  logger?: Logger;
}

export interface Harness {
  sim: Simulator;
  config: Config;
  prefix: string;
  redis: Redis;
  admin: Redis;
  store: SnapshotStore;
  runner: PollRunner;
  windows: UpstreamWindows;
  upstream: Upstream;
  counters: PollCounters;
  now(): number;
  /** Moves the test clock forward. */
  advance(ms: number): void;
  /** Runs one tick of each poller, in order (the tick of the test clock, unless given). */
  tick(...pollers: PollerName[]): Promise<PollOutcome[]>;
  /** Events logged since the previous call, as `type subject` strings, sorted. */
  newEvents(): Promise<string[]>;
  /** The full events logged since the previous call. */
  newFleetEvents(): Promise<FleetEvent[]>;
  close(): Promise<void>;
}

function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] =
      value && typeof value === 'object' && !Array.isArray(value) && current && typeof current === 'object'
        ? merge(current as Record<string, unknown>, value as Record<string, unknown>)
        : value;
  }
  return out;
}

/** `pollers:` with only the vehicle list on: tests of what follows a VPN change, and nothing else. */
export const VEHICLE_LIST_ONLY = {
  power: { enabled: false },
  robots: { enabled: false },
  robot_health: { enabled: false },
  robot_feedback: { enabled: false },
  robot_lease: { enabled: false },
  robot_config: { enabled: false },
  robot_command_queue: { enabled: false },
  upstream: { enabled: false },
} as const;

export function testConfig(url: string, prefix: string, over: Record<string, unknown> = {}): Config {
  const base = {
    installation: 'test',
    upstream: {
      base_url: url,
      robot_base_url: url,
      auth_url: url,
      client_id: 'fleetwatch-demo',
      client_secret: 'demo-secret',
      http: { retries: 0, request_timeout: 400, retry_base_delay: 10, retry_max_delay: 50 },
    },
    redis: { url: redisUrl(), prefix },
    log: { level: 'silent' },
    pollers: {
      vehicles: { interval: '1s' },
      power: { interval: '1s', batch_size: 2, unsupported_interval: '10m' },
      robots: { interval: '1s' },
      robot_health: { interval: '1s', batch_size: 2 },
      robot_feedback: { interval: '1s', batch_size: 2 },
      robot_lease: { interval: '1s', batch_size: 2 },
      robot_config: { interval: '1s', batch_size: 2 },
      robot_command_queue: { interval: '1s', batch_size: 2 },
      upstream: { interval: '1m' },
    },
    worker: { concurrency: 4, shutdown_grace: '3s' },
    // A free port each: daemons of parallel tests never compete for 9464.
    http: { port: 0 },
    detectors: {
      membership: { remove_after: 2 },
      vpn: { failure_threshold: 1, success_threshold: 1 },
      reachability: { failure_threshold: 2, success_threshold: 1 },
      health: { failure_threshold: 2, success_threshold: 2 },
      power: { stuck_after: '1m', stale_after: '1h' },
      command_queue: { backlog_threshold: 3 },
      upstream: { failure_threshold: 1, success_threshold: 1, min_requests: 5, error_ratio: 0.5 },
    },
  };
  return configSchema.parse(merge(base, over));
}

export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const sim = await startSimulator({
    vehicles: 4,
    robots: 2,
    seed: 7,
    behaviours: false,
    ...options.simulator,
  });
  if (options.empty) {
    const state = sim.control.state();
    for (const vehicle of state.vehicles) sim.control.removeVehicle(vehicle.id);
    for (const robot of state.robots) sim.control.removeRobot(robot.deviceId);
  }
  const prefix = options.prefix ?? uniquePrefix(options.prefixStart);
  const config = testConfig(sim.url, prefix, options.config);
  const admin = connect();
  const redis = createProducerConnection(redisUrl(), { name: 'test-pollers' });
  await waitForReady(redis, { timeoutMs: 5_000 });
  let skew = 0;
  const now = () => Date.now() + skew;
  // The daemon's own polling core, on the test's connection and clock.
  const { store, windows, upstream, runner, counters } = buildPollingCore({
    config,
    redis,
    logger: options.logger ?? pino({ enabled: false }),
    now,
    hooks: [options.hooks],
  });
  const log = new EventLog({ redis, prefix });
  let lastStreamId: string | undefined;

  const newFleetEvents = async (): Promise<FleetEvent[]> => {
    const entries = await log.range(
      lastStreamId === undefined ? { limit: 10_000 } : { since: lastStreamId, limit: 10_000 },
    );
    const last = entries.at(-1);
    if (last) lastStreamId = last.streamId;
    return entries.map((entry) => entry.event);
  };
  // Start reading after whatever is there (nothing: the prefix is new).
  lastStreamId = '0-0';

  return {
    sim,
    config,
    prefix,
    redis,
    admin,
    store,
    runner,
    windows,
    upstream,
    counters,
    now,
    advance: (ms) => {
      skew += ms;
    },
    async tick(...pollers) {
      const outcomes: PollOutcome[] = [];
      for (const poller of pollers) outcomes.push(...(await runner.runTick(poller)));
      return outcomes;
    },
    newFleetEvents,
    async newEvents() {
      return (await newFleetEvents()).map((event) => `${event.type} ${event.subject}`).sort();
    },
    async close() {
      await upstream.close();
      await sim.close();
      await deletePrefixKeys(admin, prefix);
      await closeQuietly([redis, admin]);
    },
  };
}
