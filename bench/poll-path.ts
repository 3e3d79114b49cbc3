import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import pino from 'pino';
import { configSchema } from '../src/config/schema.js';
import { buildPollingCore } from '../src/daemon/polling-core.js';
import { closeQuietly, createProducerConnection, waitForReady } from '../src/lib/redis-connection.js';
import type { PollerName } from '../src/pollers/config.js';
import { POLLER_NAMES } from '../src/pollers/registry.js';
import { runGuarded, stopAll } from './cleanup.js';
import type { SizeSpec } from './measure.js';
import { entityPollerList, SIZES, sizeList, wholeNumber } from './options.js';
import { startBenchRedis } from './redis.js';
import { CLIENT_ID, CLIENT_SECRET, SimulatorProcess } from './simulator.js';

/**
 * The poll path alone, in seconds instead of the benchmark's minutes: the daemon's polling core
 * (runner, leases, snapshot store, observation pipeline, upstream client) in this process against
 * the simulator and a private Redis, the chosen pollers' jobs started at a steady pace as the
 * scheduler spreads them, no BullMQ, no notification step, no second thread. Prints the CPU of
 * this process per poll for each round. `--no-http` answers every read from what the baseline
 * round's read answered, so the round measures everything but the HTTP exchange.
 *
 * What it is for: telling where a poll's CPU goes while changing the code, a few seconds a
 * measurement. What it is not: the benchmark's numbers (`npm run bench`), which include the
 * queues, the daemon's other thread and the notification step. BENCHMARKS.md says how the two
 * compare.
 *
 *   npm run build && npx tsx bench/poll-path.ts --size 40k --pollers robot_health --rounds 3
 */

/** Every method of `client` answers a repeated first argument from its first answer (`--no-http`). */
function recorded(client: object, replay: { on: boolean }): void {
  const target = client as Record<string, unknown>;
  let proto: object | null = Object.getPrototypeOf(client);
  while (proto && proto !== Object.prototype) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const method = target[name];
      if (name === 'constructor' || typeof method !== 'function') continue;
      const answers = new Map<string, unknown>();
      target[name] = async (...args: unknown[]) => {
        const key = String(args[0]);
        if (replay.on && answers.has(key)) return answers.get(key);
        const answer: unknown = await (method as (...a: unknown[]) => Promise<unknown>).apply(client, args);
        answers.set(key, answer);
        return answer;
      };
    }
    proto = Object.getPrototypeOf(proto);
  }
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const program = new Command('npx tsx bench/poll-path.ts')
  .description('CPU per poll of the poll path alone (runner, store, pipeline, client), in this process')
  .addOption(
    new Option('--size <name>', `fleet size (${Object.keys(SIZES).join(', ')})`)
      .argParser((value) => sizeList(value)[0]!)
      .default(SIZES['40k'], '40k'),
  )
  .addOption(
    new Option('--pollers <list>', 'per-entity pollers to run')
      .argParser(entityPollerList)
      .default(['robot_health'], 'robot_health'),
  )
  .addOption(new Option('--rounds <n>', 'measured rounds, 1 to 20').argParser(wholeNumber(1, 20)).default(3))
  .addOption(
    new Option('--pace <polls/s>', 'polls a second, 0 for flat out (8 jobs at once), at most 100,000')
      .argParser(wholeNumber(0, 100_000))
      .default(2_333),
  )
  .option('--no-http', 'answer every read from the baseline round: everything but the HTTP exchange');

program.parse();
const options = program.opts<{
  size: SizeSpec;
  pollers: PollerName[];
  rounds: number;
  pace: number;
  http: boolean;
}>();

const say = (line: string) => process.stderr.write(`${line}\n`);

await runGuarded(async () => {
  const redis = await startBenchRedis('single');
  const logDir = mkdtempSync(join(tmpdir(), 'fleetwatch-poll-path-'));
  say(
    `simulator with ${options.size.vehicles} vehicles and ${options.size.robots} robots; logs in ${logDir}`,
  );
  const simulator = await SimulatorProcess.start(root, options.size, logDir);
  const base = simulator.url;
  const config = configSchema.parse({
    installation: 'poll-path',
    upstream: {
      base_url: base,
      robot_base_url: base,
      auth_url: base,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    },
    redis: { ...redis.section, prefix: 'fleetwatch-poll-path' },
    log: { level: 'silent' },
    // As the benchmark runs them: every poller on one interval, the seeded power reports not stale.
    pollers: Object.fromEntries(POLLER_NAMES.map((name) => [name, { interval: '60s' }])),
    detectors: { power: { stale_after: '24h' } },
  });
  const connection = createProducerConnection(redis.urls[0]!, { name: 'poll-path' });
  await waitForReady(connection, { timeoutMs: 5_000 });
  const core = buildPollingCore({
    config,
    redis: connection,
    logger: pino({ enabled: false }),
    now: Date.now,
  });
  const replay = { on: false };
  // Only to replay: keeping every answer would hold a round's answers until the next one, a
  // heap the daemon does not have (its collector then promotes them).
  if (!options.http) {
    recorded(core.upstream.robots, replay);
    recorded(core.upstream.fleet, replay);
  }

  const { runner } = core;
  /** One tick of `poller`: its jobs at the pace asked, or as the daemon's workers take them (pace 0). */
  const tick = async (poller: PollerName, tickNumber: number, pace: number): Promise<number> => {
    const jobs = await runner.plan(poller, tickNumber);
    const running: Array<Promise<unknown>> = [];
    if (pace === 0) {
      let next = 0;
      const worker = async () => {
        while (next < jobs.length) await runner.runJob(jobs[next++]!);
      };
      for (let i = 0; i < config.worker.concurrency; i += 1) running.push(worker());
    } else {
      // Job i of a tick starts i jobs' polls into it at `pace` polls a second, as the scheduler spreads them.
      const start = performance.now();
      const perJob = jobs[0]?.ids?.length ?? 1;
      for (let i = 0; i < jobs.length; i += 1) {
        const wait = start + (i * perJob * 1000) / pace - performance.now();
        if (wait >= 1) await sleep(wait);
        running.push(runner.runJob(jobs[i]!));
      }
    }
    await Promise.all(running);
    let polls = 0;
    for (const job of jobs) polls += job.ids?.length ?? 0;
    return polls;
  };
  for (const list of ['vehicles', 'robots'] as const) await tick(list, runner.tickAt(list), 0);
  say('baseline round: every entity polled once, its first state stored');
  for (const poller of options.pollers) await tick(poller, runner.tickAt(poller), 0);
  replay.on = !options.http;

  for (let round = 1; round <= options.rounds; round += 1) {
    let polls = 0;
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (const poller of options.pollers)
      polls += await tick(poller, runner.tickAt(poller) + round, options.pace);
    const used = process.cpuUsage(cpu);
    process.stdout.write(
      `${JSON.stringify({
        round,
        pollers: options.pollers,
        http: options.http,
        pace: options.pace,
        polls,
        cpuMicrosPerPoll: polls > 0 ? Math.round(((used.user + used.system) / polls) * 10) / 10 : null,
        wallMs: Math.round(performance.now() - started),
      })}\n`,
    );
  }
  await core.upstream.close();
  await closeQuietly(connection);
  // The simulator, then the Redis (both registered with cleanup.ts as they started).
  await stopAll();
});
