import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectorOptionsSchema } from '../../src/events/detector-options.js';
import { GroupStore } from '../../src/notifiers/aggregation/group-store.js';
import { FiringIncidents } from '../../src/notifiers/muting/firing-incidents.js';
import { MuteMarks } from '../../src/notifiers/muting/mute-marks.js';
import type { FaultOptions } from '../../src/simulator/index.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { EventLog } from '../../src/store/event-log.js';
import { notifyKeys } from '../../src/store/keys.js';
import {
  printOnFailure,
  ReplicaSet,
  removeConfigFiles,
  writeDaemonConfig,
} from '../support/daemon-process.js';
import { connect, deletePrefixKeys, redisUrl } from '../support/redis.js';
import { addQuietFleet, readAllEvents, waitFor, waitForEntityBaseline } from '../support/scenario.js';
import { SlackStandin } from '../support/slack-standin.js';

/**
 * One page per cause (Guarantee 11), end to end: two `fleetwatch run` replicas poll 200 vehicles
 * and 200 robots of the simulator and notify a Slack stand-in, while the simulator's token issuer
 * answers 401, then 5xx, and then the robot gateway answers 503 to every robot, each for "a
 * minute"; and the fleet API lists every vehicle not as the spec says.
 *
 * Shortened by K = 3: every duration of the defaults is divided by 3 — per-entity pollers every
 * 10 s (30 s), the vehicle and robot lists every 10 s / 20 s, counting windows of 5 s (15 s),
 * group_wait 10 s (30 s), inhibit_max_wait 20 s (1 m), HTTP time-out and back-off a third — and
 * each outage lasts 20 s (60 s). Every rule involved counts observations and windows (thresholds
 * are counts, kept at their defaults), and poll rounds, windows and outages keep their proportions
 * and their alignment to the clock, so the same rounds fail, the same windows are bad and the same
 * incidents fire in the same order as in the full-length run; what does not scale (request
 * latency on loopback) stays far below a window. Two deviations, both making the test stricter:
 * `group_interval` is 20 s (the re-check of a muted incident comes sooner, so an early
 * announcement would show), and robot health fires after 2 failed checks instead of 3 — with 3, a
 * one-minute gateway outage (two 30 s rounds) would raise no per-robot event at all, and the
 * second scenario would pass without testing inhibition. The upstream's threshold goes down with
 * it, from 2 windows to 1, keeping the rule the README gives for the two (the entity's threshold
 * one above the upstream's): an outage that starts in the middle of one round and ends in the
 * middle of the next-but-one fails only one round whole, and the robots checked late in the first
 * and early in the last fail twice.
 */

const DEFAULTS = detectorOptionsSchema.parse({});
const VEHICLES = 200;
const ROBOTS = 200;
const OUTAGE_MS = 20_000;
const prefix = `tc-${randomBytes(5).toString('hex')}`;

let sim: Simulator;
let admin: Redis;
let standin: SlackStandin;
let replicas: ReplicaSet | undefined;
const log = () => new EventLog({ redis: admin, prefix });

beforeAll(async () => {
  sim = await startSimulator({ vehicles: 0, robots: 0, seed: 11, behaviours: false });
  addQuietFleet(sim.control, { vehicles: VEHICLES, robots: ROBOTS });
  admin = connect();
  standin = await SlackStandin.start();
}, 60_000);

afterAll(async () => {
  await replicas?.stopAll().catch(() => replicas?.killAll());
  await standin?.close();
  await sim?.close();
  if (admin) {
    await deletePrefixKeys(admin, prefix);
    admin.disconnect();
  }
  removeConfigFiles();
}, 60_000);

const texts = (from = 0) =>
  standin.received.slice(from).map((post) => String((post.payload as { text?: unknown }).text));

/** The last stream id of the event log ('0-0' when empty): where a scenario's events start. */
async function logPosition(): Promise<string> {
  const [last] = (await admin.xrevrange(`{${prefix}}:events`, '+', '-', 'COUNT', 1)) as [string, string[]][];
  return last?.[0] ?? '0-0';
}

async function eventsSince(position: string) {
  return (await readAllEvents(log())).filter((entry) => compareIds(entry.streamId, position) > 0);
}

function compareIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}

/** The robot gateway's counting windows still kept, and its judged state: what a failure needs explained. */
async function gatewayWindows(): Promise<string> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await admin.scan(
      cursor,
      'MATCH',
      `{${prefix}}:upstream:window:robots:*`,
      'COUNT',
      1000,
    );
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  const lines: string[] = [];
  for (const key of keys.sort()) {
    const window = Number(key.slice(key.lastIndexOf(':') + 1));
    const at = new Date((window + 1) * 5_000).toISOString();
    lines.push(`window ending ${at}: ${JSON.stringify(await admin.hgetall(key))}`);
  }
  const judged = JSON.stringify(await admin.hgetall(`{${prefix}}:snap:fleet:upstream:robots`));
  return `robot gateway windows:\n${lines.join('\n')}\njudged: ${judged}`;
}

/** Nothing more can be sent: no incident fires, no group holds anything pending, outgoing or open. */
async function settled(): Promise<string | undefined> {
  const firing = (await new FiringIncidents({ redis: admin, prefix }).list(Date.now())).filter(
    (incident) => incident.firing,
  );
  if (firing.length > 0)
    return `${firing.length} incidents fire, e.g. ${firing[0]?.subject}#${firing[0]?.key}`;
  const groups = new GroupStore({ redis: admin, prefix });
  const keys = await admin.zrange(notifyKeys(prefix).wake, '0', '-1');
  for (const key of keys) {
    const record = await groups.get(key);
    if (!record) continue;
    const open = [...record.state.incidents.keys()].length;
    if (record.state.pending.length > 0 || record.outgoing.length > 0 || open > 0) {
      return `group ${key}: ${record.state.pending.length} pending, ${record.outgoing.length} outgoing, ${open} open`;
    }
  }
  return undefined;
}

/** Injects `faults` for the outage's length, then clears them. */
async function outage(faults: FaultOptions, options: { revokeTokens: boolean }): Promise<void> {
  sim.control.setFaults(faults);
  // The issuer failing only matters once the token fleetwatch holds stops working.
  if (options.revokeTokens) sim.control.expireTokens();
  await delay(OUTAGE_MS);
  sim.control.clearFaults();
}

describe('one page per cause, against the simulator with 200 vehicles and 200 robots', () => {
  beforeAll(async () => {
    const config = writeDaemonConfig({
      upstreamUrl: sim.url,
      redisUrl: redisUrl(),
      prefix,
      logLevel: 'info',
      concurrency: 8,
      pollers: {
        vehicles: { interval: '10s' },
        power: { interval: '10s', batch_size: 100 },
        robots: { interval: '20s' },
        robot_health: { interval: '10s', batch_size: 50 },
        robot_feedback: { enabled: false },
        robot_lease: { enabled: false },
        robot_config: { enabled: false },
        robot_command_queue: { enabled: false },
      },
      extra: {
        pollers: { upstream: { enabled: true, interval: '5s' } },
        upstream: {
          base_url: sim.url,
          robot_base_url: sim.url,
          auth_url: sim.url,
          client_id: 'fleetwatch-demo',
          client_secret: 'demo-secret',
          http: { request_timeout: '3s', retries: 3, retry_base_delay: '70ms', retry_max_delay: '3s' },
        },
        // The defaults (daemonConfig lowers them to 1), but robot health and upstream: see the header.
        detectors: {
          ...DEFAULTS,
          health: { ...DEFAULTS.health, failure_threshold: 2 },
          upstream: { ...DEFAULTS.upstream, failure_threshold: 1 },
        },
        receivers: [{ kind: 'slack', name: 'ops', url: standin.url }],
        notifications: {
          route: {
            receiver: 'ops',
            group_by: ['type'],
            group_wait: '10s',
            group_interval: '20s',
            repeat_interval: '80m',
          },
          inhibit_max_wait: '20s',
        },
      },
    });
    replicas = new ReplicaSet(config);
    replicas.start(2);
    await replicas.waitUntilRunning(30_000);
    const ids = { vehicles: sim.control.state().vehicles.map((v) => v.id), robots: [] as string[] };
    ids.robots = sim.control.state().robots.map((robot) => robot.deviceId);
    await waitForEntityBaseline(admin, prefix, ids, { timeoutMs: 90_000 });
    // Every upstream has had a window judged (a baseline of its own).
    await waitFor(
      'a judged window of every upstream',
      async () =>
        Promise.all(
          ['token', 'fleet', 'robots'].map((name) => admin.exists(`{${prefix}}:snap:fleet:upstream:${name}`)),
        ),
      (exists) => (exists.every((n) => n === 1) ? undefined : `judged: ${exists.join(',')}`),
      { timeoutMs: 30_000 },
    );
    expect(await readAllEvents(log())).toEqual([]);
  }, 180_000);

  for (const [status, says, reason] of [
    [401, 'fleetwatch cannot authenticate: the token issuer refuses its client credentials', '400/401/403'],
    [503, 'fleetwatch cannot authenticate: the token issuer is failing', '5xx or no answer'],
  ] as const) {
    it(`the token issuer answering ${status} for a minute: one page saying fleetwatch cannot authenticate, and its resolution`, async (context) => {
      printOnFailure(context, async () => `${replicas?.output(60)}\n${texts().join('\n---\n')}`);
      const position = await logPosition();
      const posts = standin.received.length;
      await outage({ errorRates: { [String(status)]: 1 }, scope: 'token' }, { revokeTokens: true });
      await standin.waitFor(posts + 2, 120_000);
      await waitFor('nothing more to send', settled, (problem) => problem, { timeoutMs: 120_000 });

      const said = texts(posts);
      expect(said).toHaveLength(2);
      expect(said[0]).toContain(says);
      expect(said[0]).toContain(reason);
      expect(said[1]).toContain('the token issuer has recovered');
      const events = await eventsSince(position);
      const types = events.map(({ event }) => event.type);
      expect(types).not.toContain('robot.health.down');
      expect(types).not.toContain('vehicle.unreachable');
      expect(
        events.filter(({ event }) => event.subject === 'upstream/token').map(({ event }) => event.type),
      ).toEqual(['monitor.upstream.degraded', 'monitor.upstream.recovered']);
    }, 300_000);
  }

  // A garbled answer with a 200 is the gateway failing as surely as a 503 (its windows count it).
  for (const [answering, faults, reason] of [
    ['503', { errorRates: { '503': 1 } }, '5xx or no answer'],
    ['bodies that do not parse', { malformedRate: 1 }, 'an answer not as the spec says'],
  ] as const) {
    it(`the robot gateway answering ${answering} to every robot for a minute: one upstream page; the robots are logged, inhibited`, async (context) => {
      printOnFailure(
        context,
        async () => `${replicas?.output(60)}\n${texts().join('\n---\n')}\n${await gatewayWindows()}`,
      );
      const position = await logPosition();
      const posts = standin.received.length;
      await outage({ ...faults, scope: 'robots' }, { revokeTokens: false });
      await standin.waitFor(posts + 2, 120_000);
      await waitFor('nothing more to send', settled, (problem) => problem, { timeoutMs: 120_000 });

      const said = texts(posts);
      expect(said).toHaveLength(2);
      expect(said[0]).toContain('the robot gateway is failing');
      expect(said[0]).toContain(reason);
      expect(said[1]).toContain('the robot gateway has recovered');
      const events = await eventsSince(position);
      const down = events.filter(({ event }) => event.type === 'robot.health.down');
      expect(down.length).toBeGreaterThan(0);
      const marks = await new MuteMarks({ redis: admin, prefix }).read(events.map(({ event }) => event.id));
      for (const { event } of down) {
        expect(marks.get(event.id), event.subject).toMatchObject({
          reason: 'inhibited',
          by: 'upstream-robots',
          source: { type: 'monitor.upstream.degraded', subject: 'upstream/robots' },
        });
      }
      // Every robot event of the outage is in the log and none reached Slack.
      expect(said.join('\n')).not.toMatch(/rb-\d{4}/);
    }, 300_000);
  }

  // A contract change: every element names its vehicle, none is as the spec says. Each is that
  // vehicle's observation error, so no vehicle event can say it; the list's own incident does.
  it('the fleet API listing every vehicle not as the spec says: one page saying what is not watched, and its resolution', async (context) => {
    printOnFailure(context, async () => `${replicas?.output(60)}\n${texts().join('\n---\n')}`);
    const position = await logPosition();
    const posts = standin.received.length;
    const ids = sim.control.state().vehicles.map((vehicle) => vehicle.id);
    for (const id of ids) sim.control.updateVehicle(id, { listFields: { vpnConnected: 'yes' } });
    // Three or four lists (every 10 s) in a row: past detectors.list.failure_threshold (2).
    await delay(35_000);
    for (const id of ids) sim.control.updateVehicle(id, { listFields: null });
    await standin.waitFor(posts + 2, 120_000);
    await waitFor('nothing more to send', settled, (problem) => problem, { timeoutMs: 120_000 });

    const said = texts(posts);
    expect(said).toHaveLength(2);
    expect(said[0]).toContain(
      `the fleet API lists elements not as the spec says: ${VEHICLES} of ${VEHICLES} elements`,
    );
    expect(said[0]).toContain(`the ${VEHICLES} vehicles they name are not watched for VPN state and address`);
    expect(said[1]).toContain('the fleet API lists every element as the spec says again');
    const events = await eventsSince(position);
    expect(events.map(({ event }) => `${event.type} ${event.subject}`)).toEqual([
      'monitor.list.unreadable upstream/fleet',
      'monitor.list.readable upstream/fleet',
    ]);
  }, 300_000);
});
