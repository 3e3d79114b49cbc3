import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { type FleetwatchProcess, sumOf } from './fleetwatch.js';
import { cpuMicros } from './proc.js';
import type { WebhookSink } from './sink.js';

/**
 * The upstream outage phase (`--outage`): after a size's measured cycles, the whole upstream fails
 * (half the calls time out, the other half answer 503) and the benchmark measures what the outage
 * costs once fleetwatch has judged it: fleetwatch's and Redis' CPU per cycle, the Redis commands
 * per cycle, and the notifications that went out, beside the same numbers of the normal cycles.
 */

/** One cycle's bill, normal or during the outage. */
export interface CycleCost {
  /** fleetwatch CPU per cycle (ms). */
  fleetwatchCpuMs: number;
  redisCpuMs: number;
  /** Commands Redis processed per cycle (`INFO commandstats`, all commands). */
  redisCommands: number;
  /** Commands that write (`@write` in Redis' command table), per cycle. */
  redisWrites: number;
}

export interface OutageResult {
  cycles: number;
  normal: CycleCost;
  outage: CycleCost;
  /** From the faults on until fleetwatch judged each API degraded (ms); absent if it did not within 4 cycles. */
  judgedAfterMs: { fleet?: number; robots?: number };
  /** Webhook notifications from the faults on until the faults were lifted, by type. */
  notifications: Record<string, number>;
  /** Both APIs were judged recovered within the wait after the faults were lifted. */
  recovered: boolean;
}

/** What the outage phase needs of the run under way. */
export interface OutageRun {
  intervalMs: number;
  cycles: number;
  /** Its metrics: one process's, or the sum of its replicas'. */
  fleetwatch: Pick<FleetwatchProcess, 'metrics'>;
  sink: WebhookSink;
  /** Every Redis server (every master of a cluster). */
  redisUrls: readonly string[];
  /** fleetwatch's replicas (one pid each) and every Redis server. */
  pids: { fleetwatch: readonly number[]; redis: readonly number[] };
  /** Turns the upstream's faults on (`faults`) or off (undefined). */
  setFaults(faults: Record<string, unknown> | undefined): Promise<void>;
  log(message: string): void;
}

export const OUTAGE_FAULTS = { errorRates: { '503': 0.5 }, timeoutRate: 0.5, scope: ['v1', 'robots'] };

/** Redis' command counters, all servers together: every command, and those flagged `write`. */
export class RedisCommands {
  readonly #clients: Redis[];
  #writeCommands: Set<string> | undefined;

  constructor(urls: readonly string[]) {
    this.#clients = urls.map((url) => new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 }));
  }

  async #writes(client: Redis): Promise<Set<string>> {
    if (!this.#writeCommands) {
      const table = (await client.call('COMMAND')) as Array<[string, number, string[]]>;
      this.#writeCommands = new Set(
        table.filter((entry) => entry[2].includes('write')).map((entry) => entry[0].toLowerCase()),
      );
    }
    return this.#writeCommands;
  }

  /** Calls so far: all commands, and the writes among them. */
  async read(): Promise<{ all: number; writes: number }> {
    let all = 0;
    let written = 0;
    for (const client of this.#clients) {
      if (client.status === 'wait') await client.connect();
      const writes = await this.#writes(client);
      const info = await client.info('commandstats');
      for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
        const calls = Number(match[2]);
        all += calls;
        // Subcommands show as `name|sub`; the table lists the parent.
        if (writes.has(match[1]!.split('|')[0]!)) written += calls;
      }
    }
    return { all, writes: written };
  }

  close(): void {
    for (const client of this.#clients) client.disconnect();
  }
}

/** A cost meter over whole cycles: CPU of both processes and Redis' command counters. */
export async function meter(pids: OutageRun['pids'], commands: RedisCommands) {
  const redisCpu = (): number => pids.redis.reduce((total, pid) => total + cpuMicros(pid), 0);
  const fleetwatchCpu = (): number => pids.fleetwatch.reduce((total, pid) => total + cpuMicros(pid), 0);
  const start = {
    fleetwatch: fleetwatchCpu(),
    redis: redisCpu(),
    commands: await commands.read(),
  };
  return async (cycles: number): Promise<CycleCost> => {
    const now = await commands.read();
    return {
      fleetwatchCpuMs: (fleetwatchCpu() - start.fleetwatch) / 1000 / cycles,
      redisCpuMs: (redisCpu() - start.redis) / 1000 / cycles,
      redisCommands: (now.all - start.commands.all) / cycles,
      redisWrites: (now.writes - start.commands.writes) / cycles,
    };
  };
}

/** The APIs fleetwatch holds degraded now (`fleetwatch_upstream_degraded`). */
async function degradedApis(fleetwatch: OutageRun['fleetwatch']): Promise<Array<'fleet' | 'robots'>> {
  const samples = await fleetwatch.metrics();
  return (['fleet', 'robots'] as const).filter(
    (name) => sumOf(samples, 'fleetwatch_upstream_degraded', `upstream="${name}"`) > 0,
  );
}

/** How many cycles the recovery is awaited after the faults are lifted (see `measureOutage`). */
export const RECOVERY_CYCLES = 4;

/** Polls `check` every 500 ms until it holds or `timeoutMs` passed; resolves with whether it held. */
async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await delay(500)) {
    if (await check()) return true;
  }
  return check();
}

/**
 * Runs the outage: faults on, waits (at most 4 cycles) for both APIs to be judged degraded, lets
 * the next whole cycle begin, measures `run.cycles` cycles, lifts the faults and waits (at most 4
 * cycles: the window the faults were lifted in, the two good ones the detector asks for by default,
 * each judged a little after it closes) for the recovery. `normal` is the bill of the size's measured cycles.
 */
export async function measureOutage(run: OutageRun, normal: CycleCost): Promise<OutageResult> {
  const commands = new RedisCommands(run.redisUrls);
  try {
    const posts = run.sink.arrivals.length;
    const faultsOn = Date.now();
    await run.setFaults(OUTAGE_FAULTS);
    run.log('upstream outage: half the calls time out, half answer 503; waiting for fleetwatch to judge it');
    const judgedAfterMs: OutageResult['judgedAfterMs'] = {};
    const judged = await until(async () => {
      for (const name of await degradedApis(run.fleetwatch)) judgedAfterMs[name] ??= Date.now() - faultsOn;
      return judgedAfterMs.fleet !== undefined && judgedAfterMs.robots !== undefined;
    }, 4 * run.intervalMs);
    if (!judged) run.log('fleetwatch did not judge both APIs degraded within 4 cycles');

    const windowStart = Math.ceil((Date.now() + 1_000) / run.intervalMs) * run.intervalMs;
    await delay(windowStart - Date.now());
    const bill = await meter(run.pids, commands);
    run.log(`measuring ${run.cycles} cycles of the outage`);
    await delay(windowStart + run.cycles * run.intervalMs - Date.now());
    const outage = await bill(run.cycles);

    await run.setFaults(undefined);
    const notifications: Record<string, number> = {};
    for (const arrival of run.sink.arrivals.slice(posts)) {
      if (arrival.arrivedAt >= faultsOn) notifications[arrival.type] = (notifications[arrival.type] ?? 0) + 1;
    }
    const recovered = await until(
      async () => (await degradedApis(run.fleetwatch)).length === 0,
      RECOVERY_CYCLES * run.intervalMs,
    );
    return { cycles: run.cycles, normal, outage, judgedAfterMs, notifications, recovered };
  } finally {
    commands.close();
  }
}
