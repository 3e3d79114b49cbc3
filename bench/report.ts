import { execFileSync } from 'node:child_process';
import { cpus, release, totalmem } from 'node:os';
import type { ConsoleResult } from './console.js';
import { HOPS } from './hops.js';
import type { IdleResult } from './idle.js';
import type { SizeResult } from './measure.js';
import type { BenchMode } from './options.js';
import { SOAK_LIMITS, type SoakResult } from './soak.js';
import type { StormResult, StormRun } from './storm.js';

/** BENCHMARKS.md (the generated block) and the JSON beside it. */

export const TARGETS = {
  /** The largest fleet: 50,000 vehicles + 50,000 robots on one 60 s cycle, 0 overruns, every change delivered. */
  largest: 100_000,
  /** The size the contended and outage targets are checked at. */
  entities: 40_000,
  intervalMs: 60_000,
  cores: 2,
  /** fleetwatch CPU per poll ÷ the bare undici loop's CPU per request, measured in the same run. */
  undiciRatio: 3,
  /** Quiet: p99 beyond the poll at every size. */
  beyondPollP99Ms: 50,
  /** Memory that grows with the fleet: max RSS at the largest quiet size minus the smallest's, per 1,000. */
  growthPerThousandBytes: 2 * 1024 * 1024,
  /** `fleetwatch run` with its defaults and 60 entities, once settled (bench/idle.ts). */
  idleRssBytes: 90 * 1024 * 1024,
  /** With one core taken by the contended mode's CPU hog, at 40k. */
  contendedBeyondPollP99Ms: 150,
  /** On a 3-master Redis Cluster: the busiest master's share of Redis CPU per poll at most this. */
  busiestMasterShare: 0.5,
  /** The soak that judges "no growth over time" runs at least this long (`--soak`). */
  soakMinMs: 30 * 60_000,
} as const;

export const BLOCK_START = '<!-- bench:results:start -->';
export const BLOCK_END = '<!-- bench:results:end -->';

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  kernel: string;
  node: string;
  redis: string;
  commit: string;
  date: string;
}

function quiet(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

export function describeMachine(root: string): Machine {
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    redis: /v=(\S+)/.exec(quiet('redis-server', ['--version']))?.[1] ?? 'unknown',
    commit: quiet('git', ['-C', root, 'rev-parse', '--short', 'HEAD']),
    date: new Date().toISOString(),
  };
}

/** Where a row of the block comes from: the run that measured it. */
export interface Measured {
  commit: string;
  date: string;
}

/**
 * A result as BENCHMARKS.json keeps it: rows of earlier runs carry the run they are from. A rerun
 * without `--outage` keeps the row's earlier outage, which then carries its own run
 * (`outageMeasured`): the outage's normal cycle is that run's, not the new row's.
 */
export type StoredResult = SizeResult & { measured?: Measured; outageMeasured?: Measured };
export type StoredIdle = IdleResult & { measured?: Measured };
/** The last soak as BENCHMARKS.json keeps it (`npm run bench -- --soak`). */
export interface StoredSoak {
  machine: Machine;
  result: SoakResult;
}

const measuredBy = (machine: Machine): Measured => ({ commit: machine.commit, date: machine.date });
const sameRun = (a: Measured, b: Measured): boolean =>
  a.commit === b.commit && a.date.slice(0, 10) === b.date.slice(0, 10);

/**
 * The rows after a run: each fresh result replaces the stored one of its size and mode, the
 * others stay (a partial run, `--sizes 10k` or one mode, keeps the rest of the table). Stored rows
 * without provenance get their file's machine; rows come out by fleet size, then quiet before
 * contended.
 */
export function mergeResults(
  stored: readonly StoredResult[],
  storedMachine: Machine | undefined,
  fresh: readonly SizeResult[],
  machine: Machine,
): StoredResult[] {
  // A run against a Redis Cluster, or with replicas, is a row of its own beside the one-server,
  // one-process run of the same size.
  const key = (r: SizeResult): string =>
    `${r.spec.label} ${modeOf(r)} ${r.redis.kind ?? 'single'} ${replicasOf(r)}`;
  const freshKeys = new Set(fresh.map(key));
  // The run a stored row is from: its own stamp, else the file's machine (rows of older files).
  const runOf = (r: StoredResult): Measured | undefined =>
    r.measured ?? (storedMachine ? measuredBy(storedMachine) : undefined);
  const storedByKey = new Map(stored.map((r) => [key(r), r]));
  const stamped = (r: SizeResult): StoredResult => {
    const row: StoredResult = { ...r, measured: measuredBy(machine) };
    const earlier = storedByKey.get(key(r));
    if (r.outage || !earlier?.outage) return row;
    const outageMeasured = earlier.outageMeasured ?? runOf(earlier);
    return outageMeasured ? { ...row, outage: earlier.outage, outageMeasured } : row;
  };
  const kept = stored
    .filter((r) => !freshKeys.has(key(r)))
    .map((r) => {
      const measured = runOf(r);
      return measured ? { ...r, measured } : r;
    });
  const order = (r: SizeResult): number =>
    r.entities * 16 +
    (modeOf(r) === 'quiet' ? 0 : 1) +
    (r.redis.kind === 'cluster' ? 2 : 0) +
    (replicasOf(r) > 1 ? 4 + replicasOf(r) : 0);
  return [...kept, ...fresh.map(stamped)].sort((a, b) => order(a) - order(b));
}

/** One sentence naming the rows measured in another run than `machine`'s, or undefined. */
export function describeOlderRows(
  results: readonly StoredResult[],
  machine: Machine,
  idle?: StoredIdle,
): string | undefined {
  const current = measuredBy(machine);
  const groups = new Map<string, { measured: Measured; rows: string[] }>();
  const add = (row: string, measured: Measured | undefined): void => {
    if (!measured || sameRun(measured, current)) return;
    const id = `${measured.date.slice(0, 10)} ${measured.commit}`;
    const group = groups.get(id) ?? { measured, rows: [] };
    group.rows.push(row);
    groups.set(id, group);
  };
  for (const r of results) {
    const row = modeOf(r) === 'quiet' ? rowLabel(r) : `${rowLabel(r)} ${modeOf(r)}`;
    add(row, r.measured);
    add(`${row} outage`, r.outageMeasured);
  }
  if (idle) add('idle', idle.measured);
  if (groups.size === 0) return undefined;
  const parts = [...groups.values()].map(
    ({ measured, rows }) =>
      `${rows.join(', ')} on ${measured.date.slice(0, 10)} at commit \`${measured.commit}\``,
  );
  return `Rows measured in an earlier run: ${parts.join('; ')}.`;
}

const us = (value: number): string => (Number.isFinite(value) ? `${Math.round(value)} µs` : 'n/a');
const ms = (value: number): string => (Number.isFinite(value) ? `${Math.round(value)} ms` : 'n/a');
const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MB`;
const times = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(1)}×` : 'n/a');
const count = (value: number): string => Math.round(value).toLocaleString('en-US');

function verdict(met: boolean, missedBy: string): string {
  return met ? 'met' : `**missed** by ${missedBy}`;
}

/** How far over its limit a number is; a miss too small for whole numbers keeps a decimal (`0.2 % (90.2 vs 90)`). */
function percentOver(actual: number, limit: number): string {
  const over = (actual / limit - 1) * 100;
  const percent = over < 1 ? over.toFixed(1) : String(Math.round(over));
  const shown = actual >= 10 && Math.round(actual) !== limit ? String(Math.round(actual)) : actual.toFixed(1);
  return `${percent} % (${shown} vs ${limit})`;
}

const modeOf = (result: SizeResult): BenchMode => result.mode ?? 'quiet';
const replicasOf = (result: SizeResult): number => result.replicas ?? 1;

/** A row's size as the tables name it: `10k`, `10k (Redis Cluster)`, `40k (2 replicas)`. */
const rowLabel = (r: SizeResult): string =>
  `${r.spec.label}${r.redis.kind === 'cluster' ? ' (Redis Cluster)' : ''}${replicasOf(r) > 1 ? ` (${replicasOf(r)} replicas)` : ''}${r.pollThread === false ? ' (main loop)' : ''}`;

/**
 * The run of `entities` on the 60 s cycle in `mode`, against one Redis server unless `cluster`,
 * by one fleetwatch process unless `replicas`.
 */
function targetRun(
  results: readonly SizeResult[],
  mode: BenchMode,
  entities: number = TARGETS.entities,
  cluster = false,
  replicas = 1,
): SizeResult | undefined {
  return results.find(
    (r) =>
      modeOf(r) === mode &&
      r.entities === entities &&
      r.spec.intervalMs === TARGETS.intervalMs &&
      (r.redis.kind === 'cluster') === cluster &&
      replicasOf(r) === replicas,
  );
}

/**
 * What kept a run's cycles from being whole: overrunning jobs, jobs that found every entity's lease
 * held by another poll, shards that sat out a tick because their earlier job was still queued (in
 * older rows: ticks dropped as too old), and the pollers fleetwatch said were behind. `all`: each
 * count, zeros included; otherwise only those that are not zero (overruns always).
 */
function cycleMisses(r: SizeResult, all: boolean): string {
  const { overruns, leaseHeld, coalesced, staleTicks, behind } = r.cycles;
  const parts = [`${overruns} overrunning jobs`];
  if (all || leaseHeld > 0) parts.push(`${leaseHeld} jobs whose entities another poll held`);
  if (coalesced !== undefined) {
    if (all || coalesced > 0) parts.push(`${coalesced} shards that sat out a tick, their job still queued`);
  } else if (staleTicks !== undefined && (all || staleTicks > 0)) {
    parts.push(`${staleTicks} ticks dropped as too old`);
  }
  if (behind && behind.length > 0) parts.push(`monitor.polling.behind raised for ${behind.join(', ')}`);
  return parts.join(', ');
}

/** How long the run waited for a cycle without overrunning jobs, for the targets table. */
function settled(r: SizeResult): string {
  if (!r.settle) return '';
  const s = Math.round(r.settle.ms / 1000);
  return r.settle.settled
    ? `; measured after the first cycle without overruns, ${s} s after the baseline`
    : `; no cycle without overruns in the ${s} s after the baseline`;
}

const notRun = (what: string): string => `not run (${what})`;

/** `1k 5.1×, 10k 6.0×` and whether every one holds. */
function perSize(
  results: readonly SizeResult[],
  value: (r: SizeResult) => number,
  format: (value: number) => string,
  limit: number,
): { text: string; met: boolean; worst: number } {
  const values = results.map((r) => ({ r, v: value(r) }));
  return {
    text: values.map(({ r, v }) => `${r.spec.label} ${format(v)}`).join(', '),
    met: values.every(({ v }) => v <= limit),
    worst: Math.max(...values.map(({ v }) => v)),
  };
}

function undiciRatio(r: SizeResult): number {
  return r.fleetwatch.cpuPerPoll / (r.undici.cpuMicros / r.undici.requests);
}

const perHour = (bytes: number): string => `${bytes >= 0 ? '+' : '−'}${mb(Math.abs(bytes))}/h`;

/**
 * The soak's row of the targets table: growth is judged by the soak's own limits on both slopes,
 * and a soak shorter than the target's 30 minutes does not count.
 */
function soakRow(soak: StoredSoak | undefined): string {
  const target = `no memory growth over a ${TARGETS.soakMinMs / 60_000}-minute soak (slopes after warm-up: RSS < ${mb(SOAK_LIMITS.rssPerHour)}/h, V8 heap < ${mb(SOAK_LIMITS.heapPerHour)}/h)`;
  if (!soak) return `| ${target} | ${notRun('--soak')} | — |`;
  const { result, machine } = soak;
  const minutes = Math.round(result.durationMs / 60_000);
  const measured = `${result.spec.label} for ${minutes} min (${machine.date.slice(0, 10)}, \`${machine.commit}\`): RSS ${perHour(result.rss.slopePerHour)}, heap ${perHour(result.heapUsed.slopePerHour)}`;
  if (result.durationMs < TARGETS.soakMinMs)
    return `| ${target} | ${measured}; shorter than the target's | — |`;
  const grew = [
    result.rss.slopePerHour >= SOAK_LIMITS.rssPerHour ? `RSS ${perHour(result.rss.slopePerHour)}` : '',
    result.heapUsed.slopePerHour >= SOAK_LIMITS.heapPerHour
      ? `heap ${perHour(result.heapUsed.slopePerHour)}`
      : '',
  ].filter(Boolean);
  return `| ${target} | ${measured} | ${result.noGrowth ? 'met' : `**missed**: ${grew.join(', ')}`} |`;
}

/** The idle measurement's row of the targets table. */
function idleRow(idle: IdleResult): string {
  const rss = idle.rss.median;
  return `| idle RSS of \`fleetwatch run\` with ${idle.entities} entities (defaults, queue UI on) ≤ ${mb(TARGETS.idleRssBytes)} | ${mb(rss)} (median over ${idle.settleMs / 1000} s; max ${mb(idle.rss.max)}, heap used ${mb(idle.heap.used)}) | ${verdict(rss <= TARGETS.idleRssBytes, percentOver(rss / 2 ** 20, TARGETS.idleRssBytes / 2 ** 20))} |`;
}

/**
 * The scale targets, each with what was measured and its verdict; a target whose size or mode
 * was not run says so. Ratios compare numbers measured side by side in one run.
 */
function targetRows(
  results: readonly SizeResult[],
  machine: Machine,
  idle?: IdleResult,
  soak?: StoredSoak,
): string[] {
  const rows = ['| target | measured | verdict |', '|---|---|---|'];
  const quietAll = results.filter(
    (r) => modeOf(r) === 'quiet' && r.redis.kind !== 'cluster' && replicasOf(r) === 1,
  );

  // One row per way it was run: one process, and each number of replicas that was measured.
  const largestRuns = results.filter(
    (r) =>
      modeOf(r) === 'quiet' &&
      r.entities === TARGETS.largest &&
      r.spec.intervalMs === TARGETS.intervalMs &&
      r.redis.kind !== 'cluster',
  );
  for (const largest of largestRuns) {
    const n = replicasOf(largest);
    const how = n > 1 ? ` by ${n} fleetwatch replicas` : ' by one fleetwatch process';
    rows.push(
      `| 100,000 entities (50,000 + 50,000) on one 60 s cycle on ${TARGETS.cores} cores${how}: 0 overruns, every change delivered | ${cycleMisses(largest, true)}, ${largest.latency.delivered} of ${largest.latency.flips} changes delivered, ${machine.cores} cores${settled(largest)} | ${verdict(largest.cycles.withinInterval && largest.latency.delivered === largest.latency.flips && machine.cores <= TARGETS.cores, `${cycleMisses(largest, false)}${largest.latency.delivered < largest.latency.flips ? `, ${largest.latency.flips - largest.latency.delivered} changes not delivered` : ''}`)} |`,
    );
  }
  if (largestRuns.length === 0) {
    rows.push(
      `| 100,000 entities on one 60 s cycle: 0 overruns, every change delivered | ${notRun('--sizes 100k')} | — |`,
    );
  }

  if (quietAll.length > 0) {
    const ratio = perSize(quietAll, undiciRatio, times, TARGETS.undiciRatio);
    // Judged against the flat-out loop; the paced one (the same requests spread as fleetwatch
    // spreads them) is beside it for what the spreading costs.
    const pacedCells: string[] = [];
    for (const r of quietAll) {
      if (!r.undiciPaced) continue;
      const paced = r.undiciPaced.cpuMicros / r.undiciPaced.requests;
      pacedCells.push(`${r.spec.label} ${times(r.fleetwatch.cpuPerPoll / paced)}`);
    }
    const paced =
      pacedCells.length > 0 ? `; against the loop at the cycle's pace ${pacedCells.join(', ')}` : '';
    rows.push(
      `| CPU per poll ≤ ${TARGETS.undiciRatio}× the bare undici loop's per request (same run, quiet) | ${ratio.text}${paced} | ${verdict(ratio.met, `up to ${percentOver(ratio.worst, TARGETS.undiciRatio)}`)} |`,
    );
    const p99 = perSize(quietAll, (r) => r.latency.beyondPoll.p99, ms, TARGETS.beyondPollP99Ms);
    rows.push(
      `| quiet: p99 ≤ ${TARGETS.beyondPollP99Ms} ms beyond the poll at every size | ${p99.text} | ${verdict(p99.met, `up to ${percentOver(p99.worst, TARGETS.beyondPollP99Ms)}`)} |`,
    );
  }

  const contended = targetRun(results, 'contended');
  if (contended) {
    const p99 = contended.latency.beyondPoll.p99;
    rows.push(
      `| contended: 40,000 entities on a 60 s cycle with one core taken, 0 overruns | ${contended.cycles.overruns} overruns, ${contended.cycles.leaseHeld} entities skipped | ${verdict(contended.cycles.withinInterval, `${contended.cycles.overruns} overrunning jobs`)} |`,
      `| contended: p99 ≤ ${TARGETS.contendedBeyondPollP99Ms} ms beyond the poll at 40,000 | ${ms(p99)} | ${verdict(p99 <= TARGETS.contendedBeyondPollP99Ms, percentOver(p99, TARGETS.contendedBeyondPollP99Ms))} |`,
    );
  } else {
    rows.push(
      `| contended: 40,000 entities, 0 overruns and p99 ≤ ${TARGETS.contendedBeyondPollP99Ms} ms beyond the poll | ${notRun('--sizes 40k --contended')} | — |`,
    );
  }

  // Memory that grows with the fleet compares quiet runs only: the hog does not change it.
  const bySize = [...quietAll].sort((a, b) => a.entities - b.entities);
  const smallest = bySize[0];
  const biggest = bySize.at(-1);
  if (smallest && biggest && smallest !== biggest) {
    const slope =
      (biggest.memory.maxRss - smallest.memory.maxRss) / ((biggest.entities - smallest.entities) / 1000);
    rows.push(
      `| ≤ ${mb(TARGETS.growthPerThousandBytes)} RSS growth per 1,000 entities (max RSS, ${smallest.spec.label} to ${biggest.spec.label}) | ${mb(slope)} | ${verdict(slope <= TARGETS.growthPerThousandBytes, percentOver(slope / 2 ** 20, TARGETS.growthPerThousandBytes / 2 ** 20))} |`,
    );
  }
  if (idle) rows.push(idleRow(idle));
  rows.push(soakRow(soak));

  const outage = targetRun(results, 'quiet')?.outage;
  if (outage) {
    const sent = Object.values(outage.notifications).reduce((sum, n) => sum + n, 0);
    const cheap =
      outage.outage.fleetwatchCpuMs <= outage.normal.fleetwatchCpuMs &&
      outage.outage.redisWrites <= outage.normal.redisWrites;
    rows.push(
      `| an upstream outage at 40,000 is cheap: CPU and Redis writes per cycle at or below a normal cycle's | fleetwatch ${count(outage.outage.fleetwatchCpuMs)} ms (normal ${count(outage.normal.fleetwatchCpuMs)}), Redis writes ${count(outage.outage.redisWrites)} (normal ${count(outage.normal.redisWrites)}), ${sent} notification${sent === 1 ? '' : 's'} | ${verdict(cheap, 'more than a normal cycle')} |`,
    );
  } else {
    rows.push(`| an upstream outage at 40,000 is cheap | ${notRun('--sizes 40k --outage')} | — |`);
  }

  const clustered = results
    .filter((r) => r.redis.kind === 'cluster' && r.redis.masters && r.redis.masters.length > 0)
    .sort((a, b) => b.entities - a.entities)[0];
  if (clustered) {
    const busiest =
      Math.max(...clustered.redis.masters!.map((m) => m.cpuPerPoll)) / clustered.redis.cpuPerPoll;
    rows.push(
      `| on a 3-master Redis Cluster each master does a fair share: the busiest ≤ ${Math.round(TARGETS.busiestMasterShare * 100)} % of Redis CPU per poll | ${Math.round(busiest * 100)} % at ${clustered.spec.label} | ${verdict(busiest <= TARGETS.busiestMasterShare, `${Math.round(busiest * 100)} %`)} |`,
    );
  } else {
    rows.push(
      `| on a 3-master Redis Cluster each master does a fair share | ${notRun('--redis cluster')} | — |`,
    );
  }
  return rows;
}

/** One sentence on the contended mode's hog, when a result of this block ran beside it. */
export function describeHog(results: readonly SizeResult[]): string | undefined {
  const hogs = results.flatMap((r) => (r.hog ? [r.hog] : []));
  if (hogs.length === 0) return undefined;
  const pinned = hogs[0]?.pinnedCpu;
  const cores = hogs.map((h) => h.cores).filter(Number.isFinite);
  const used =
    cores.length === 0
      ? ''
      : `; it used ${Math.min(...cores).toFixed(2)}${cores.length > 1 && Math.max(...cores) !== Math.min(...cores) ? `–${Math.max(...cores).toFixed(2)}` : ''} of a core`;
  return `Rows marked *contended* ran beside a CPU hog the benchmark started itself, one process spinning a core at 100 % (${pinned === null || pinned === undefined ? 'not pinned: taskset was missing or could not pin' : `pinned to CPU ${pinned} with \`taskset -c ${pinned}\``}) for the whole size, references included${used}.`;
}

/** Each size measured in both modes, the two side by side (empty when no size was). */
function pairRows(results: readonly SizeResult[]): string[] {
  const rows: string[] = [];
  const redisOf = (r: SizeResult): string => `${r.redis.kind ?? 'single'} ${replicasOf(r)}`;
  for (const quiet of results.filter((r) => modeOf(r) === 'quiet')) {
    const contended = results.find(
      (r) => modeOf(r) === 'contended' && r.spec.label === quiet.spec.label && redisOf(r) === redisOf(quiet),
    );
    if (!contended) continue;
    const pair = (value: (r: SizeResult) => string): string => `${value(quiet)} / ${value(contended)}`;
    const undici = (r: SizeResult): number => r.undici.cpuMicros / r.undici.requests;
    rows.push(
      `| ${quiet.spec.label} | ${pair((r) => us(r.fleetwatch.cpuPerPoll))} | ${pair((r) => us(undici(r)))} | ${pair((r) => times(r.fleetwatch.cpuPerPoll / undici(r)))} | ${pair((r) => ms(r.latency.beyondPoll.p99))} | ${pair((r) => String(r.cycles.overruns))} | ${pair((r) => count(r.pollsPerSecond))} |`,
    );
  }
  if (rows.length === 0) return [];
  return [
    '',
    '### Quiet / contended',
    '',
    '| size | CPU/poll fleetwatch | bare undici loop CPU/request | fleetwatch ÷ undici | p99 beyond the poll | overruns | polls/s |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ];
}

/** How Redis' CPU per poll spreads over a cluster's masters (`--redis cluster`). */
function clusterRows(
  results: readonly SizeResult[],
  sizeCell: (r: SizeResult) => string,
  sizeHead: string,
  sizeRule: string,
): string[] {
  const clustered = results.filter((r) => r.redis.masters && r.redis.masters.length > 0);
  if (clustered.length === 0) return [];
  const lines = [
    '',
    '### Redis Cluster',
    '',
    'Redis CPU per poll on each master of a 3-master cluster, and the busiest master’s share of it all.',
    '',
    `| ${sizeHead} | all masters | each master | busiest share |`,
    `|${sizeRule}|---|---|---|`,
  ];
  for (const r of clustered) {
    const masters = r.redis.masters!.map((master) => master.cpuPerPoll);
    const busiest = Math.max(...masters) / r.redis.cpuPerPoll;
    lines.push(
      `| ${sizeCell(r)} | ${us(r.redis.cpuPerPoll)} | ${masters.map(us).join(' / ')} | ${Number.isFinite(busiest) ? `${Math.round(busiest * 100)} %` : 'n/a'} |`,
    );
  }
  return lines;
}

/** fleetwatch's garbage collection per poll, for the results that measured it. */
function gcRows(
  results: readonly SizeResult[],
  sizeCell: (r: SizeResult) => string,
  sizeHead: string,
  sizeRule: string,
): string[] {
  const measured = results.filter((r) => r.gc !== undefined);
  if (measured.length === 0) return [];
  const lines = [
    '',
    '### Garbage collection',
    '',
    'The collectors’ pauses over the measured cycles: the main thread’s (`nodejs_gc_duration_seconds`, which sees only the thread it is read on) and the poll thread’s (`fleetwatch_poll_thread_gc_duration_seconds`; — in rows measured before it was reported). The work V8’s helper threads do for both is in *CPU by thread*.',
    '',
    `| ${sizeHead} | main: pause per poll | share of CPU per poll | scavenges per 1,000 polls | poll thread: pause per poll | scavenges per 1,000 polls | full collections per 1,000 polls |`,
    `|${sizeRule}|---|---|---|---|---|---|`,
  ];
  for (const r of measured) {
    const gc = r.gc!;
    const thread = gc.pollThread;
    const threadCells = thread
      ? `${us(thread.microsPerPoll)} | ${thread.scavengesPerThousandPolls.toFixed(1)} | ${thread.majorPerThousandPolls.toFixed(2)}`
      : '— | — | —';
    lines.push(
      `| ${sizeCell(r)} | ${us(gc.microsPerPoll)} | ${Math.round((gc.microsPerPoll / r.fleetwatch.cpuPerPoll) * 100)} % | ${gc.scavengesPerThousandPolls.toFixed(1)} | ${threadCells} |`,
    );
  }
  return lines;
}

/** fleetwatch's CPU per poll by thread (bench/proc.ts `splitThreads`), for the results that measured it. */
function threadRows(
  results: readonly SizeResult[],
  sizeCell: (r: SizeResult) => string,
  sizeHead: string,
  sizeRule: string,
): string[] {
  const measured = results.filter((r) => r.threads !== undefined);
  if (measured.length === 0) return [];
  const lines = [
    '',
    '### CPU by thread',
    '',
    'CPU per poll split over fleetwatch’s threads (from `/proc`, the first process’s shares when replicas ran): the main thread (dispatch, delivery, HTTP, metrics), the poll thread, and the rest, nearly all V8’s helper threads collecting garbage and compiling for both.',
    '',
    `| ${sizeHead} | main thread | poll thread | helper threads |`,
    `|${sizeRule}|---|---|---|`,
  ];
  for (const r of measured) {
    const { main, pollThread, helpers } = r.threads!;
    const all = main + (pollThread ?? 0) + helpers;
    const cell = (micros: number): string =>
      all > 0
        ? `${us((micros / all) * r.fleetwatch.cpuPerPoll)} (${Math.round((micros / all) * 100)} %)`
        : 'n/a';
    lines.push(
      `| ${sizeCell(r)} | ${cell(main)} | ${pollThread === undefined ? '—' : cell(pollThread)} | ${cell(helpers)} |`,
    );
  }
  return lines;
}

/** Beyond the poll stage by stage (bench/hops.ts), for the results that measured it. */
function hopRows(
  results: readonly SizeResult[],
  sizeCell: (r: SizeResult) => string,
  sizeHead: string,
  sizeRule: string,
): string[] {
  const measured = results.filter((r) => r.hops !== undefined);
  if (measured.length === 0) return [];
  const ms = (value: number) => (Number.isFinite(value) ? `${Math.round(value)}` : '—');
  const lines = [
    '',
    '### Beyond the poll, stage by stage',
    '',
    'Each measured change traced through fleetwatch from what Redis keeps (the event log’s entry id is the commit’s time; BullMQ keeps each job’s added, started and finished times): p50 / p99 in ms of each stage, then the slowest change’s stages.',
    '',
    `| ${sizeHead} | traced | ${HOPS.map((hop) => hop.name).join(' | ')} |`,
    `|${sizeRule}|---|${HOPS.map(() => '---').join('|')}|`,
  ];
  for (const r of measured) {
    const hops = r.hops!;
    lines.push(
      `| ${sizeCell(r)} | ${hops.traced} of ${hops.of} | ${hops.hops.map((hop) => `${ms(hop.p50Ms)} / ${ms(hop.p99Ms)}`).join(' | ')} |`,
    );
    const slowest = hops.slowest[0];
    if (slowest)
      lines.push(
        `| ${sizeCell(r)}, slowest (${ms(slowest.totalMs)} ms) | | ${slowest.hopsMs.map(ms).join(' | ')} |`,
      );
  }
  return lines;
}

/** The machine's own latency beside fleetwatch's (bench/wakeup.ts), for the results that measured it. */
function wakeupRows(
  results: readonly SizeResult[],
  sizeCell: (r: SizeResult) => string,
  sizeHead: string,
  sizeRule: string,
): string[] {
  const measured = results.filter((r) => r.wakeup !== undefined);
  if (measured.length === 0) return [];
  const ms = (value: number) =>
    Number.isFinite(value) ? (value < 10 ? value.toFixed(1) : `${Math.round(value)}`) : '—';
  const three = (p: { p50: number; p99: number; max: number }) =>
    `${ms(p.p50)} / ${ms(p.p99)} / ${ms(p.max)}`;
  const lines = [
    '',
    '### The machine’s own latency',
    '',
    'Over the same measured cycles, a process with nothing else to do wakes every 10 ms and makes one Redis round trip (`PING`, its own connection to the size’s Redis): how late its timer fired and how long the round trip took, p50 / p99 / max in ms, beside fleetwatch’s latency beyond the poll. An event crosses a dozen such wake-ups and round trips on its way to the receiver.',
    '',
    `| ${sizeHead} | idle timer late | Redis round trip | beyond the poll |`,
    `|${sizeRule}|---|---|---|`,
  ];
  for (const r of measured) {
    const w = r.wakeup!;
    lines.push(
      `| ${sizeCell(r)} | ${three(w.timerLate)} | ${three(w.redisRoundTrip)} | ${three(r.latency.beyondPoll)} |`,
    );
  }
  return lines;
}

/** The fleet gauges as the window's scrapes saw them, for the results that measured it. */
function scrapeRows(
  results: readonly SizeResult[],
  sizeCell: (r: SizeResult) => string,
  sizeHead: string,
  sizeRule: string,
): string[] {
  const measured = results.filter((r) => r.scrapes !== undefined);
  if (measured.length === 0) return [];
  const age = (ms: number) => (Number.isFinite(ms) ? `${Math.round(ms / 1000)} s` : 'none shown');
  const lines = [
    '',
    '### Fleet gauges at scrape time',
    '',
    'A scrape every 15 s over the measured cycles: how old the fleet reading it showed was (scrape time minus `fleetwatch_fleet_read_timestamp_seconds`, whole seconds), the longest reading shown (`fleetwatch_fleet_read_duration_seconds`), the scrapes that had nothing newer to show (`fleetwatch_metrics_collect_errors_total{source="fleet"}`), and the main thread’s longest event-loop delay over the window (`fleetwatch_nodejs_eventloop_lag_max_seconds`): what a change being notified could wait behind at once.',
    '',
    `| ${sizeHead} | scrapes | reading age, median / max | longest reading | misses | longest main-loop stall |`,
    `|${sizeRule}|---|---|---|---|---|`,
  ];
  for (const r of measured) {
    const s = r.scrapes!;
    lines.push(
      `| ${sizeCell(r)} | ${s.count} | ${age(s.medianAgeMs)} / ${age(s.maxAgeMs)} | ${Math.round(s.maxReadMs)} ms | ${s.misses} | ${s.maxLoopStallMs === undefined ? '—' : ms(s.maxLoopStallMs)} |`,
    );
  }
  return lines;
}

/** When each API was judged degraded, from the faults on. */
function judged(outage: NonNullable<SizeResult['outage']>): string {
  return (['fleet', 'robots'] as const)
    .map((name) => {
      const after = outage.judgedAfterMs[name];
      return `${name} ${after === undefined ? 'not judged' : `${Math.round(after / 1000)} s`}`;
    })
    .join(', ');
}

/** The outage table (`--outage`): each size's normal cycle beside a cycle of the outage. */
function outageRows(
  results: readonly SizeResult[],
  sizeCell: (r: SizeResult) => string,
  sizeHead: string,
  sizeRule: string,
): string[] {
  const measured = results.filter((r) => r.outage);
  if (measured.length === 0) return [];
  const lines = [
    '',
    '### Upstream outage',
    '',
    'Per cycle, normal (the measured cycles of the same run) → during the outage (half the calls time out, half answer 503, once fleetwatch has judged both APIs degraded).',
    '',
    `| ${sizeHead} | fleetwatch CPU | Redis CPU | Redis commands | Redis writes | judged after | notifications during the outage | recovered |`,
    `|${sizeRule}|---|---|---|---|---|---|---|`,
  ];
  for (const r of measured) {
    const o = r.outage!;
    const pair = (normal: number, outage: number, unit: string): string =>
      `${count(normal)}${unit} → ${count(outage)}${unit}`;
    const sent = Object.entries(o.notifications)
      .map(([type, n]) => `${n} × \`${type}\``)
      .join(', ');
    lines.push(
      `| ${sizeCell(r)} | ${pair(o.normal.fleetwatchCpuMs, o.outage.fleetwatchCpuMs, ' ms')} | ${pair(o.normal.redisCpuMs, o.outage.redisCpuMs, ' ms')} | ${pair(o.normal.redisCommands, o.outage.redisCommands, '')} | ${pair(o.normal.redisWrites, o.outage.redisWrites, '')} | ${judged(o)} | ${sent || 'none'} | ${o.recovered ? 'yes' : 'no'} |`,
    );
  }
  return lines;
}

/**
 * The results block. With only quiet results it has the columns it always had; once a contended
 * result is among them, both tables gain a mode column and each size's modes are adjacent rows.
 */
export function renderBlock(
  results: readonly StoredResult[],
  machine: Machine,
  idle?: StoredIdle,
  soak?: StoredSoak,
): string {
  const withModes = results.some((r) => modeOf(r) !== 'quiet');
  const sizeCell = (r: SizeResult): string => (withModes ? `${rowLabel(r)} | ${modeOf(r)}` : rowLabel(r));
  const sizeHead = withModes ? 'size | mode' : 'size';
  const sizeRule = withModes ? '---|---' : '---';
  const hog = describeHog(results);
  const older = describeOlderRows(results, machine, idle);
  const lines: string[] = [
    BLOCK_START,
    `Measured ${machine.date.slice(0, 10)} at commit \`${machine.commit}\` on ${machine.cores} × ${machine.cpu}, ${machine.memoryGiB} GiB, Linux ${machine.kernel}, Node ${machine.node}, Redis ${machine.redis}. Everything (simulator, Redis, fleetwatch, the webhook receiver) ran on this one machine.${hog ? ` ${hog}` : ''}${older ? ` ${older}` : ''}`,
    '',
    '### fleetwatch',
    '',
    `| ${sizeHead} | vehicles + robots | cycle | polls/s | CPU/poll fleetwatch | CPU/poll Redis | fleetwatch cores | p50 / p99 beyond the poll | p50 / p99 change to webhook | max RSS | RSS per 1k | cycles inside interval |`,
    `|${sizeRule}|---|---|---|---|---|---|---|---|---|---|---|`,
  ];
  for (const r of results) {
    lines.push(
      `| ${sizeCell(r)} | ${count(r.spec.vehicles)} + ${count(r.spec.robots)} | ${r.spec.intervalMs / 1000} s × ${r.spec.cycles} | ${count(r.pollsPerSecond)} | ${us(r.fleetwatch.cpuPerPoll)} | ${us(r.redis.cpuPerPoll)} | ${r.fleetwatch.cores.toFixed(2)} | ${ms(r.latency.beyondPoll.p50)} / ${ms(r.latency.beyondPoll.p99)} | ${ms(r.latency.changeToWebhook.p50)} / ${ms(r.latency.changeToWebhook.p99)} | ${mb(r.memory.maxRss)} | ${mb(r.memory.maxRssPerThousand)} | ${r.cycles.withinInterval ? 'yes' : `no (${cycleMisses(r, false)})`} |`,
    );
  }
  lines.push(
    '',
    '### References and ratios',
    '',
    `| ${sizeHead} | bare undici loop CPU/request | fleetwatch ÷ undici | bare loop at the cycle's pace | fleetwatch ÷ paced loop | blackbox_exporter CPU/probe | fleetwatch ÷ blackbox | changes delivered | fleetwatch exit |`,
    `|${sizeRule}|---|---|---|---|---|---|---|---|`,
  );
  for (const r of results) {
    const undici = r.undici.cpuMicros / r.undici.requests;
    const paced = r.undiciPaced ? r.undiciPaced.cpuMicros / r.undiciPaced.requests : Number.NaN;
    const pacedCells = r.undiciPaced
      ? `${us(paced)} (${count(r.undiciPaced.rate)}/s) | ${times(r.fleetwatch.cpuPerPoll / paced)}`
      : 'not measured | —';
    const blackbox = r.blackbox ? r.blackbox.cpuMicros / r.blackbox.probes : Number.NaN;
    lines.push(
      `| ${sizeCell(r)} | ${us(undici)} | ${times(r.fleetwatch.cpuPerPoll / undici)} | ${pacedCells} | ${r.blackbox ? `${us(blackbox)} (${r.blackbox.version})` : 'not installed'} | ${r.blackbox ? times(r.fleetwatch.cpuPerPoll / blackbox) : 'n/a'} | ${r.latency.delivered} of ${r.latency.flips} | ${r.fleetwatchExit} |`,
    );
  }
  lines.push(...pairRows(results));
  lines.push(...clusterRows(results, sizeCell, sizeHead, sizeRule));
  lines.push(...gcRows(results, sizeCell, sizeHead, sizeRule));
  lines.push(...threadRows(results, sizeCell, sizeHead, sizeRule));
  lines.push(...scrapeRows(results, sizeCell, sizeHead, sizeRule));
  lines.push(...hopRows(results, sizeCell, sizeHead, sizeRule));
  lines.push(...wakeupRows(results, sizeCell, sizeHead, sizeRule));
  lines.push(...outageRows(results, sizeCell, sizeHead, sizeRule));
  lines.push('', '### Targets', '', ...targetRows(results, machine, idle, soak), BLOCK_END);
  return lines.join('\n');
}

export const TEMPLATE_HEAD = `# Benchmarks

How much fleetwatch costs per poll, how fast a change reaches a webhook, and how much memory a
fleet takes, next to what this machine can do at all (a bare undici loop) and what a peer spends
(Prometheus' blackbox_exporter). Reproduce with \`npm run bench\` (see the README); the numbers
below are rewritten by it, the text around them is not.

`;

/** Replaces the generated block of an existing BENCHMARKS.md, or starts a new one. */
export function mergeReport(existing: string | undefined, block: string): string {
  if (existing) {
    const start = existing.indexOf(BLOCK_START);
    const end = existing.indexOf(BLOCK_END);
    if (start >= 0 && end > start) {
      return `${existing.slice(0, start)}${block}${existing.slice(end + BLOCK_END.length)}`;
    }
  }
  return `${TEMPLATE_HEAD}${block}\n`;
}

export const CONSOLE_BLOCK_START = '<!-- bench:console:start -->';
export const CONSOLE_BLOCK_END = '<!-- bench:console:end -->';

/** The console's block (`npm run bench -- console`): the fleet page next to the bare API paging. */
export function renderConsoleBlock(result: ConsoleResult, machine: Machine): string {
  const { api, console: page } = result;
  return [
    CONSOLE_BLOCK_START,
    `Measured ${machine.date.slice(0, 10)} at commit \`${machine.commit}\` on ${machine.cores} × ${machine.cpu}, Node ${machine.node}, headless Chromium; simulator, Redis, fleetwatch and the browser on this one machine.`,
    '',
    '| measurement | fleet page | reference: the API pages by undici | page ÷ reference |',
    '|---|---|---|---|',
    `| first rows shown | ${ms(page.firstRowsMs)} | ${ms(api.firstPageMs)} (first page) | ${times(page.firstRowsMs / api.firstPageMs)} |`,
    `| all ${count(result.entities)} rows loaded | ${ms(page.allRowsMs)} | ${ms(api.allPagesMs)} (${api.pages} pages, ${mb(api.bytes)}) | ${times(page.allRowsMs / api.allPagesMs)} |`,
    `| filter keystroke to list updated (p50 / max of ${page.filter.count}) | ${ms(page.filter.p50)} / ${ms(page.filter.max)} | — | — |`,
    `| scroll to the last of 20,000 vehicles | ${ms(page.scrollToEndMs)} | — | — |`,
    `| table rows in the DOM at the end | ${count(page.domRows)} | — | — |`,
    `| page JS heap with the fleet loaded | ${mb(page.heapBytes)} | — | — |`,
    CONSOLE_BLOCK_END,
  ].join('\n');
}

/**
 * Replaces the block between `start` and `end` in BENCHMARKS.md, or adds it under `## heading`:
 * before the first of the sections `before` names that is there, else at the end.
 */
function mergeBlock(
  existing: string | undefined,
  [start, end]: readonly [string, string],
  heading: string,
  block: string,
  before: readonly string[] = [],
): string {
  const text = existing ?? TEMPLATE_HEAD;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from >= 0 && to > from) return `${text.slice(0, from)}${block}${text.slice(to + end.length)}`;
  const section = `## ${heading}\n\n${block}\n`;
  for (const name of before) {
    const at = text.indexOf(`## ${name}`);
    if (at >= 0) return `${text.slice(0, at)}${section}\n${text.slice(at)}`;
  }
  return `${text.trimEnd()}\n\n${section}`;
}

/** Replaces the console block of BENCHMARKS.md, or adds it at the end. */
export function mergeConsoleReport(existing: string | undefined, block: string): string {
  return mergeBlock(existing, [CONSOLE_BLOCK_START, CONSOLE_BLOCK_END], 'Console', block);
}

export const SOAK_BLOCK_START = '<!-- bench:soak:start -->';
export const SOAK_BLOCK_END = '<!-- bench:soak:end -->';

/** The soak's block (`npm run bench -- --soak 30m`): memory over a long run of one size. */
export function renderSoakBlock(result: SoakResult, machine: Machine): string {
  const row = (name: string, trend: SoakResult['rss'], limit: number): string =>
    `| ${name} | ${mb(trend.start)} | ${mb(trend.end)} | ${mb(trend.max)} | ${perHour(trend.slopePerHour)} | < ${perHour(limit).slice(1)} | ${trend.slopePerHour < limit ? 'no growth' : '**grows**'} |`;
  return [
    SOAK_BLOCK_START,
    `Measured ${machine.date.slice(0, 10)} at commit \`${machine.commit}\` on ${machine.cores} × ${machine.cpu}, Node ${machine.node}: ${result.spec.label} (${count(result.spec.vehicles)} + ${count(result.spec.robots)}, every poller each ${result.spec.intervalMs / 1000} s) for ${Math.round(result.durationMs / 60_000)} minutes after the baseline cycle, ${count(result.flips)} changes made along the way; the first ${Math.round(result.warmupMs / 60_000)} minutes are warm-up. fleetwatch ${result.fleetwatchExit}.`,
    '',
    '| memory | start | end | max | slope after warm-up | limit | verdict |',
    '|---|---|---|---|---|---|---|',
    row('RSS (every 10 s)', result.rss, SOAK_LIMITS.rssPerHour),
    row(
      `V8 heap used, ${result.heapOf ?? 'main thread'} (every scrape, 15 s)`,
      result.heapUsed,
      SOAK_LIMITS.heapPerHour,
    ),
    '',
    `Verdict: ${result.noGrowth ? '**no growth**' : '**memory grows**'} over ${Math.round(result.durationMs / 60_000)} minutes.`,
    SOAK_BLOCK_END,
  ].join('\n');
}

/** Replaces the soak block of BENCHMARKS.md, or adds it (under its own heading) before the console's. */
export function mergeSoakReport(existing: string | undefined, block: string): string {
  return mergeBlock(existing, [SOAK_BLOCK_START, SOAK_BLOCK_END], 'Soak', block, ['Console']);
}

export const STORM_BLOCK_START = '<!-- bench:storm:start -->';
export const STORM_BLOCK_END = '<!-- bench:storm:end -->';

/** The storm's block (`npm run bench -- storm`): one group growing to N incidents, beside one group each. */
export function renderStormBlock(result: StormResult, machine: Machine): string {
  const perEvent = (run: StormRun): string => `${((run.cpuMs * 1000) / (2 * run.events)).toFixed(0)} µs`;
  const rows: string[] = [];
  for (const events of new Set(result.runs.map((run) => run.events))) {
    const one = result.runs.find((run) => run.events === events && run.groupBy === 'type');
    const each = result.runs.find((run) => run.events === events && run.groupBy === '...');
    if (!one || !each) continue;
    rows.push(
      `| ${count(events)} | ${perEvent(one)} | ${ms(one.wallMs)} | ${ms(one.redisCpuMs)} | ${mb(one.bytesWritten)} | ${one.notifications} (${count(one.carried)} events) | ${perEvent(each)} | ${mb(each.bytesWritten)} | ${times(one.cpuMs / each.cpuMs)} |`,
    );
  }
  return [
    STORM_BLOCK_START,
    `Measured ${machine.date.slice(0, 10)} at commit \`${machine.commit}\` on ${machine.cores} × ${machine.cpu}, Node ${machine.node}, Redis ${machine.redis}. N robots go down (\`robot.health.down\`, 16 at a time as the events worker hands them over) into a route grouping by \`type\`, the group is flushed, they come back up and it is flushed again; the reference is the same events with \`group_by: ['...']\` (one group per robot). CPU per event counts both waves and both flushes.`,
    '',
    '| robots | one group: CPU per event | wall | Redis CPU | written to Redis | notifications | one group each: CPU per event | written to Redis | one group ÷ one each (CPU) |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
    STORM_BLOCK_END,
  ].join('\n');
}

/** Replaces the storm block of BENCHMARKS.md, or adds it before the soak's (or the console's). */
export function mergeStormReport(existing: string | undefined, block: string): string {
  return mergeBlock(existing, [STORM_BLOCK_START, STORM_BLOCK_END], 'Storm', block, ['Soak', 'Console']);
}
