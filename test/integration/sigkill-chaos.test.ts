import { setTimeout as delay } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_NAMES } from '../../src/queues/names.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { EventLog } from '../../src/store/event-log.js';
import { storeKeys } from '../../src/store/keys.js';
import { DEFAULT_RELAY_GROUP } from '../../src/store/outbox-relay.js';
import {
  printOnFailure,
  ReplicaSet,
  removeConfigFiles,
  writeDaemonConfig,
} from '../support/daemon-process.js';
import { type Change, FleetScript } from '../support/fleet-script.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../support/redis.js';
import {
  addQuietFleet,
  discoveredEvents,
  type EventKey,
  eventKey,
  fleetIds,
  Scenario,
  seededRandom,
  waitFor,
  waitForEntityBaseline,
  waitForHandOff,
  waitForMembershipBaseline,
} from '../support/scenario.js';

/**
 * Guarantee 1 under crashes: three replicas, one of them SIGKILLed at a random moment again and
 * again (and replaced), while the fleet keeps changing. Afterwards every change is in the event
 * log exactly once: nothing lost, nothing doubled, nothing invented.
 *
 * Each entity changes again only once its previous change is in the log, so no change is undone
 * before fleetwatch could have seen it (a flip and flip-back between two polls is, rightly, no
 * event at all).
 */

const KILLS = Number(process.env.CHAOS_KILLS ?? 18);
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000_000);

/** What killed replicas left behind: poll jobs still locked, poll leases, unacknowledged outbox entries. */
async function abandoned(redis: Redis, prefix: string): Promise<string> {
  const keys = storeKeys(prefix);
  const [active, pending, leases] = await Promise.all([
    redis.llen(`${keys.tag}:${QUEUE_NAMES.poll}:active`),
    redis.xpending(keys.outbox, DEFAULT_RELAY_GROUP).catch(() => [0]) as Promise<unknown[]>,
    redis.scan('0', 'MATCH', `${keys.tag}:lease:poll:*`, 'COUNT', 10_000).then(([, found]) => found.length),
  ]);
  return `${active} poll jobs active, ${leases} poll leases, ${String(pending[0])} outbox entries unacknowledged`;
}

describe('replicas SIGKILLed at random moments', () => {
  const prefix = uniquePrefix();
  let sim: Simulator;
  let admin: Redis;
  let replicas: ReplicaSet | undefined;

  beforeAll(async () => {
    sim = await startSimulator({ vehicles: 0, robots: 0, seed: 13, powerDelayMs: 3_000, behaviours: false });
    admin = connect();
  });

  afterAll(async () => {
    await replicas?.killAll();
    await sim?.close();
    if (admin) {
      await deletePrefixKeys(admin, prefix);
      admin.disconnect();
    }
    removeConfigFiles();
  });

  it('lose and double no change', { timeout: 120_000 }, async (context) => {
    const random = seededRandom(SEED);
    const config = writeDaemonConfig({ upstreamUrl: sim.url, redisUrl: redisUrl(), prefix, batchSize: 5 });
    const set = new ReplicaSet(config);
    replicas = set;
    const log = new EventLog({ redis: admin, prefix });
    const scenario = new Scenario(log, { stepTimeoutMs: 45_000 });
    const journal: string[] = [];
    const started = Date.now();
    const note = (line: string) => journal.push(`+${((Date.now() - started) / 1000).toFixed(2)}s ${line}`);
    printOnFailure(
      context,
      async () =>
        `--- chaos seed ${SEED} (CHAOS_SEED=${SEED} replays the choices) ---\n${journal.join('\n')}\n` +
        `--- daemon output ---\n${set.output(80)}\n` +
        `--- log vs. expected ---\n${JSON.stringify(await scenario.diff(), null, 2)}\n` +
        `--- events behind duplicated/unexpected ---\n${await scenario.offending()}`,
    );

    set.start(3);
    await waitForMembershipBaseline(admin, prefix);
    const shape = { vehicles: 20, robots: 5 };
    const ids = fleetIds(shape);
    await scenario.step('discover the fleet', () => addQuietFleet(sim.control, shape), discoveredEvents(ids));
    await waitForEntityBaseline(admin, prefix, ids);
    // Requests take a while, so a kill often lands with polls in flight (leases held, commits pending).
    sim.control.setFaults({ latencyMs: 20, latencyJitterMs: 200 });
    note('baseline done; chaos starts');

    const script = new FleetScript(sim.control, ids, random);
    const inFlight = new Map<string, { keys: EventKey[]; change: Change; at: number }>();
    let changes = 0;
    let chaosOver = false;

    const driver = (async () => {
      while (!chaosOver) {
        const counts = await scenario.counts();
        for (const [entity, pending] of inFlight) {
          if (pending.keys.every((key) => (counts.get(key) ?? 0) >= (scenario.expected.get(key) ?? 0))) {
            inFlight.delete(entity);
          }
        }
        const idle = script.entities.filter((entity) => !inFlight.has(entity));
        if (idle.length > 0) {
          const change = script.next(idle[Math.floor(random() * idle.length)]!);
          if (change) {
            scenario.expect(change.events);
            change.apply();
            changes += 1;
            inFlight.set(change.entity, {
              keys: change.events.map(({ type, subject }) => eventKey(type, subject)),
              change,
              at: Date.now(),
            });
            note(`change: ${change.label}`);
          }
        }
        await delay(150 + random() * 250);
      }
    })();

    try {
      for (let i = 0; i < KILLS; i++) {
        await delay(random() * 1_500);
        const { killed, started: replacement } = await set.killOneAndReplace(random);
        note(`SIGKILL ${killed.name} (up ${Date.now() - killed.startedAt} ms); started ${replacement.name}`);
      }
    } finally {
      chaosOver = true;
      await driver;
    }
    note(`chaos over: ${KILLS} kills, ${changes} changes, ${inFlight.size} not yet logged`);
    note(`left behind by the dead: ${await abandoned(admin, prefix)}`);

    sim.control.clearFaults();
    await waitFor(
      'every change in the log',
      () => scenario.counts(),
      (counts) => {
        const missing = [...scenario.expected].filter(([key, n]) => (counts.get(key) ?? 0) < n);
        return missing.length === 0 ? undefined : missing.map(([key]) => key).join(', ');
      },
      { timeoutMs: 45_000, intervalMs: 250 },
    );
    note('every change logged');
    await scenario.waitForQuiet({ quietMs: 4_000 });
    note('log quiet');

    expect(changes).toBeGreaterThanOrEqual(20);
    expect(await scenario.diff()).toEqual({ missing: [], duplicated: [], unexpected: [] });
    // The hand-off to the events queue: entries a killed relay had read come back after the
    // relay's claim time (30 s idle), so this may wait that long.
    const handOff = await waitForHandOff(admin, log, prefix, { timeoutMs: 60_000 });
    note(`all ${handOff.events} events in the events queue after ${handOff.ms} ms`);
    console.info(`chaos seed ${SEED}: ${journal.slice(-4).join('; ')}`);
    expect(set.crashed.map((daemon) => daemon.name)).toEqual([]);
    const exits = await set.stopAll();
    expect(exits.map((exit) => exit.code)).toEqual(exits.map(() => 0));
  });
});
