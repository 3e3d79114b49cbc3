import { setTimeout as delay } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PollerName } from '../../../src/config/schema.js';
import { EVENT } from '../../../src/events/catalogue.js';
import { type Simulator, startSimulator } from '../../../src/simulator/index.js';
import { EventLog } from '../../../src/store/event-log.js';
import { storeKeys } from '../../../src/store/keys.js';
import {
  type DaemonProcess,
  type PollerSettings,
  printOnFailure,
  removeConfigFiles,
  startDaemon,
  writeDaemonConfig,
} from '../../support/daemon-process.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../../support/redis.js';
import { readAllEvents, waitForMembershipBaseline } from '../../support/scenario.js';

/**
 * An issuer that sends no `expires_in` and whose tokens last 4 seconds (the spec leaves the
 * lifetime open). fleetwatch starts out assuming an hour, meets the first expiry as a 401, learns
 * the lifetime from it and from then on renews every token before it expires: after the first
 * minute fewer than 10 requests a four minutes are answered 401, and since a 401 that a fresh
 * token recovers is no authentication failure, `monitor.upstream.degraded` is never raised.
 *
 * Two profiles. `full` (FLEETWATCH_SHORT_TOKENS=full) is the scenario as written: 200 vehicles and
 * 200 robots, the default poll intervals and one-minute counting windows, the default degradation
 * rule, 5 minutes. The suite runs it scaled down, and stricter where it matters: what the lifetime
 * rule depends on is the token lifetime (kept at 4 s) and how densely requests follow each other
 * (every poller every second keeps a request under way at almost every moment, as 400 entities on
 * the default intervals do); the degradation judge gets 2 s windows and fires on the first bad one
 * (the default needs two bad one-minute windows), so a storm of counted 401s would show within
 * seconds; and the allowance of 401s is the full scenario's, scaled to the shorter measurement.
 */

interface Profile {
  vehicles: number;
  robots: number;
  /** Poller overrides (the daemon config's default is every poller every second, the upstream window 1 m). */
  pollers: Partial<Record<PollerName, PollerSettings>>;
  detectors: Record<string, unknown>;
  /** Tokens are learnt in this time; 401s are counted after it. */
  learnMs: number;
  measureMs: number;
  /** At most this many 401s while measuring. */
  max401: number;
  /**
   * At least this many tokens while measuring: tokens are fetched when a request needs one, so
   * continuous traffic renews one every ~2 s, and a round of polls every 30 s needs at least one.
   */
  minTokens: number;
}

const DEFAULT_INTERVALS: Partial<Record<PollerName, PollerSettings>> = {
  vehicles: { interval: '30s' },
  power: { interval: '30s', batch_size: 100 },
  robots: { interval: '60s' },
  robot_health: { interval: '30s', batch_size: 50 },
  robot_feedback: { interval: '30s', batch_size: 50 },
  robot_lease: { interval: '60s', batch_size: 50 },
  robot_config: { interval: '5m', batch_size: 50 },
  robot_command_queue: { interval: '30s', batch_size: 50 },
};

const PROFILES: Record<'suite' | 'full', Profile> = {
  suite: {
    vehicles: 20,
    robots: 10,
    pollers: { upstream: { interval: '2s' } },
    detectors: { upstream: { failure_threshold: 1, success_threshold: 1, min_requests: 5 } },
    learnMs: 12_000,
    measureMs: 24_000,
    // 10 in 240 s, scaled to 24 s.
    max401: 1,
    minTokens: 6,
  },
  full: {
    vehicles: 200,
    robots: 200,
    pollers: DEFAULT_INTERVALS,
    detectors: {},
    learnMs: 60_000,
    measureMs: 240_000,
    max401: 9,
    minTokens: 8,
  },
};

const profileName = process.env.FLEETWATCH_SHORT_TOKENS === 'full' ? 'full' : 'suite';
const profile = PROFILES[profileName];
const TOKEN_SECONDS = 4;

function count401(requests: Record<string, Record<string, number>>): number {
  return Object.values(requests).reduce((sum, byStatus) => sum + (byStatus['401'] ?? 0), 0);
}

describe('tokens without expires_in', () => {
  const prefix = uniquePrefix('tu');
  let sim: Simulator;
  let admin: Redis;
  let daemon: DaemonProcess | undefined;

  beforeAll(async () => {
    sim = await startSimulator({
      vehicles: profile.vehicles,
      robots: profile.robots,
      seed: 41,
      behaviours: false,
      issuer: { tokenTtlSeconds: TOKEN_SECONDS, sendExpiresIn: false, jwt: false },
    });
    admin = connect();
  });

  afterAll(async () => {
    await daemon?.kill();
    await sim?.close();
    if (admin) {
      await deletePrefixKeys(admin, prefix);
      admin.disconnect();
    }
    removeConfigFiles();
  });

  it(`4-second tokens: the lifetime is learnt, few 401s after the learning, no degraded upstream (${profileName})`, {
    timeout: profile.learnMs + profile.measureMs + 90_000,
  }, async (context) => {
    const config = writeDaemonConfig({
      upstreamUrl: sim.url,
      redisUrl: redisUrl(),
      prefix,
      logLevel: 'info',
      extra: { pollers: profile.pollers, detectors: profile.detectors },
    });
    const fw = startDaemon(config, 'short-tokens');
    daemon = fw;
    printOnFailure(context, () => `--- daemon output ---\n${fw.output(400)}`);
    await waitForMembershipBaseline(admin, prefix);
    const started = Date.now();
    await delay(profile.learnMs);
    const learning = sim.control.stats();
    sim.control.resetStats();
    const measuringFrom = Date.now();
    await delay(profile.measureMs);
    const measured = sim.control.stats();
    expect(fw.alive, 'the daemon is still running').toBe(true);

    const requests = Object.values(measured.requests).reduce(
      (sum, byStatus) => sum + Object.values(byStatus).reduce((a, b) => a + b, 0),
      0,
    );
    const summary = {
      profile: profileName,
      learningSeconds: Math.round((measuringFrom - started) / 1000),
      learning401: count401(learning.requests),
      learningTokens: learning.tokenRequests.total,
      measuringSeconds: Math.round((Date.now() - measuringFrom) / 1000),
      measuring401: count401(measured.requests),
      measuringTokens: measured.tokenRequests.total,
      measuringRequests: requests,
    };
    console.info(`short tokens: ${JSON.stringify(summary)}`);

    // The tokens really expire (the first one meets a 401), and the lifetime is learnt from it.
    expect(summary.learning401).toBeGreaterThan(0);
    expect(fw.linesMatching(/tokens seem to last about/).length).toBeGreaterThanOrEqual(1);
    // Renewed ahead of the expiry (at half the learnt lifetime), the daemon working meanwhile.
    expect(summary.measuringTokens).toBeGreaterThanOrEqual(profile.minTokens);
    expect(requests).toBeGreaterThan(summary.measuringTokens);
    expect(summary.measuring401).toBeLessThanOrEqual(profile.max401);

    // The windows were judged while measuring, and none of them made an upstream degraded.
    const judged = await admin.hmget(
      storeKeys(prefix).snapshot('fleet', 'upstream', 'fleet'),
      'at',
      'polled',
    );
    expect(Math.max(...judged.map((time) => Date.parse(time ?? '') || 0))).toBeGreaterThan(measuringFrom);
    const events = await readAllEvents(new EventLog({ redis: admin, prefix }));
    expect(events.filter(({ event }) => event.type === EVENT.upstreamDegraded)).toEqual([]);
  });
});
