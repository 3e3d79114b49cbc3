import { execFileSync } from 'node:child_process';
import { cpus, release, totalmem } from 'node:os';
import type { ConsoleResult } from './console.js';
import type { SizeResult } from './measure.js';
import type { BenchMode } from './options.js';

/** BENCHMARKS.md (the generated block) and the JSON beside it. */

export const TARGETS = {
  entities: 40_000,
  intervalMs: 60_000,
  cores: 2,
  cpuPerPollMicros: 300,
  beyondPollP99Ms: 100,
  rssPerThousandBytes: 10 * 1024 * 1024,
  /** With one core taken by the contended mode's CPU hog. */
  contendedBeyondPollP99Ms: 150,
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

const us = (value: number): string => (Number.isFinite(value) ? `${Math.round(value)} µs` : 'n/a');
const ms = (value: number): string => (Number.isFinite(value) ? `${Math.round(value)} ms` : 'n/a');
const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MB`;
const times = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(1)}×` : 'n/a');
const count = (value: number): string => Math.round(value).toLocaleString('en-US');

function verdict(met: boolean, missedBy: string): string {
  return met ? 'met' : `**missed** by ${missedBy}`;
}

function percentOver(actual: number, limit: number): string {
  return `${Math.round((actual / limit - 1) * 100)} % (${actual >= 10 ? Math.round(actual) : actual.toFixed(1)} vs ${limit})`;
}

const modeOf = (result: SizeResult): BenchMode => result.mode ?? 'quiet';

function targetRun(results: readonly SizeResult[], mode: BenchMode): SizeResult | undefined {
  return results.find(
    (r) => modeOf(r) === mode && r.entities === TARGETS.entities && r.spec.intervalMs === TARGETS.intervalMs,
  );
}

function quietTargetRows(target: SizeResult, machine: Machine): string[] {
  const cpu = target.fleetwatch.cpuPerPoll;
  const p99 = target.latency.beyondPoll.p99;
  const rss = target.memory.maxRssPerThousand;
  return [
    `| 40,000 entities on a 60 s cycle on ${TARGETS.cores} cores | ${target.cycles.overruns} overruns, ${target.cycles.leaseHeld} entities skipped, ${machine.cores} cores | ${verdict(target.cycles.withinInterval && machine.cores <= TARGETS.cores, `${target.cycles.overruns} overrunning jobs`)} |`,
    `| ≤ ${TARGETS.cpuPerPollMicros} µs fleetwatch CPU per poll | ${us(cpu)} | ${verdict(cpu <= TARGETS.cpuPerPollMicros, percentOver(cpu, TARGETS.cpuPerPollMicros))} |`,
    `| change-to-webhook p99 ≤ ${TARGETS.beyondPollP99Ms} ms beyond the poll | ${ms(p99)} | ${verdict(p99 <= TARGETS.beyondPollP99Ms, percentOver(p99, TARGETS.beyondPollP99Ms))} |`,
    `| ≤ 10 MB RSS per 1,000 entities | ${mb(rss)} | ${verdict(rss <= TARGETS.rssPerThousandBytes, percentOver(rss / 2 ** 20, 10))} |`,
  ];
}

function contendedTargetRows(target: SizeResult): string[] {
  const p99 = target.latency.beyondPoll.p99;
  return [
    `| contended: 40,000 entities on a 60 s cycle with one core taken, 0 overruns | ${target.cycles.overruns} overruns, ${target.cycles.leaseHeld} entities skipped | ${verdict(target.cycles.withinInterval, `${target.cycles.overruns} overrunning jobs`)} |`,
    `| contended: p99 ≤ ${TARGETS.contendedBeyondPollP99Ms} ms beyond the poll | ${ms(p99)} | ${verdict(p99 <= TARGETS.contendedBeyondPollP99Ms, percentOver(p99, TARGETS.contendedBeyondPollP99Ms))} |`,
  ];
}

function targetRows(results: readonly SizeResult[], machine: Machine): string[] {
  const quiet = targetRun(results, 'quiet');
  const contended = targetRun(results, 'contended');
  if (!quiet && !contended) return ['The 40,000-entity size was not run, so the targets were not checked.'];
  const rows = [
    '| target | measured at 40k | verdict |',
    '|---|---|---|',
    ...(quiet ? quietTargetRows(quiet, machine) : []),
    ...(contended ? contendedTargetRows(contended) : []),
  ];
  if (!quiet) {
    rows.push('', 'The 40,000-entity size was not run quiet, so the quiet targets were not checked.');
    return rows;
  }
  // The memory line compares quiet runs only: the hog does not change what memory a fleet takes.
  const quietResults = results.filter((r) => modeOf(r) === 'quiet');
  const smallest = quietResults.reduce((a, b) => (b.entities < a.entities ? b : a));
  if (smallest !== quiet) {
    const slope =
      (quiet.memory.maxRss - smallest.memory.maxRss) / ((quiet.entities - smallest.entities) / 1000);
    rows.push(
      '',
      `Memory that grows with the fleet, from ${smallest.spec.label} to ${quiet.spec.label}: ${mb(slope)} per 1,000 entities (the rest is the runtime and its libraries, the same for any fleet).`,
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
  for (const quiet of results.filter((r) => modeOf(r) === 'quiet')) {
    const contended = results.find((r) => modeOf(r) === 'contended' && r.spec.label === quiet.spec.label);
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
    'Per cycle, normal (the measured cycles above) → during the outage (half the calls time out, half answer 503, once fleetwatch has judged both APIs degraded).',
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
export function renderBlock(results: readonly SizeResult[], machine: Machine): string {
  const withModes = results.some((r) => modeOf(r) !== 'quiet');
  const sizeCell = (r: SizeResult): string => (withModes ? `${r.spec.label} | ${modeOf(r)}` : r.spec.label);
  const sizeHead = withModes ? 'size | mode' : 'size';
  const sizeRule = withModes ? '---|---' : '---';
  const hog = describeHog(results);
  const lines: string[] = [
    BLOCK_START,
    `Measured ${machine.date.slice(0, 10)} at commit \`${machine.commit}\` on ${machine.cores} × ${machine.cpu}, ${machine.memoryGiB} GiB, Linux ${machine.kernel}, Node ${machine.node}, Redis ${machine.redis}. Everything (simulator, Redis, fleetwatch, the webhook receiver) ran on this one machine.${hog ? ` ${hog}` : ''}`,
    '',
    '### fleetwatch',
    '',
    `| ${sizeHead} | vehicles + robots | cycle | polls/s | CPU/poll fleetwatch | CPU/poll Redis | fleetwatch cores | p50 / p99 beyond the poll | p50 / p99 change to webhook | max RSS | RSS per 1k | cycles inside interval |`,
    `|${sizeRule}|---|---|---|---|---|---|---|---|---|---|---|`,
  ];
  for (const r of results) {
    lines.push(
      `| ${sizeCell(r)} | ${count(r.spec.vehicles)} + ${count(r.spec.robots)} | ${r.spec.intervalMs / 1000} s × ${r.spec.cycles} | ${count(r.pollsPerSecond)} | ${us(r.fleetwatch.cpuPerPoll)} | ${us(r.redis.cpuPerPoll)} | ${r.fleetwatch.cores.toFixed(2)} | ${ms(r.latency.beyondPoll.p50)} / ${ms(r.latency.beyondPoll.p99)} | ${ms(r.latency.changeToWebhook.p50)} / ${ms(r.latency.changeToWebhook.p99)} | ${mb(r.memory.maxRss)} | ${mb(r.memory.maxRssPerThousand)} | ${r.cycles.withinInterval ? 'yes' : `no (${r.cycles.overruns} overruns, ${r.cycles.leaseHeld} skipped)`} |`,
    );
  }
  lines.push(
    '',
    '### References and ratios',
    '',
    `| ${sizeHead} | bare undici loop CPU/request | fleetwatch ÷ undici | blackbox_exporter CPU/probe | fleetwatch ÷ blackbox | changes delivered | fleetwatch exit |`,
    `|${sizeRule}|---|---|---|---|---|---|`,
  );
  for (const r of results) {
    const undici = r.undici.cpuMicros / r.undici.requests;
    const blackbox = r.blackbox ? r.blackbox.cpuMicros / r.blackbox.probes : Number.NaN;
    lines.push(
      `| ${sizeCell(r)} | ${us(undici)} | ${times(r.fleetwatch.cpuPerPoll / undici)} | ${r.blackbox ? `${us(blackbox)} (${r.blackbox.version})` : 'not installed'} | ${r.blackbox ? times(r.fleetwatch.cpuPerPoll / blackbox) : 'n/a'} | ${r.latency.delivered} of ${r.latency.flips} | ${r.fleetwatchExit} |`,
    );
  }
  lines.push(...pairRows(results));
  lines.push(...clusterRows(results, sizeCell, sizeHead, sizeRule));
  lines.push(...outageRows(results, sizeCell, sizeHead, sizeRule));
  lines.push('', '### Targets', '', ...targetRows(results, machine), BLOCK_END);
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

/** Replaces the console block of BENCHMARKS.md, or adds it at the end. */
export function mergeConsoleReport(existing: string | undefined, block: string): string {
  const text = existing ?? TEMPLATE_HEAD;
  const start = text.indexOf(CONSOLE_BLOCK_START);
  const end = text.indexOf(CONSOLE_BLOCK_END);
  if (start >= 0 && end > start) {
    return `${text.slice(0, start)}${block}${text.slice(end + CONSOLE_BLOCK_END.length)}`;
  }
  return `${text.trimEnd()}\n\n## Console\n\n${block}\n`;
}
