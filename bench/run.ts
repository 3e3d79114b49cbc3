import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { runGuarded } from './cleanup.js';
import { measureConsole } from './console.js';
import { measureIdle } from './idle.js';
import { measureSize, type SizeResult, type SizeSpec } from './measure.js';
import { type BenchMode, DEFAULT_SIZES, MODES, modeList, replicaCount, SIZES, sizeList } from './options.js';
import { REDIS_KINDS, type RedisKind } from './redis.js';
import {
  BLOCK_START,
  describeMachine,
  type Machine,
  mergeConsoleReport,
  mergeReport,
  mergeResults,
  mergeSoakReport,
  mergeStormReport,
  renderBlock,
  renderConsoleBlock,
  renderSoakBlock,
  renderStormBlock,
  type StoredIdle,
  type StoredResult,
  type StoredSoak,
} from './report.js';
import { runSoak, SOAK_DEFAULT, soakDuration } from './soak.js';
import { measureStorm } from './storm.js';

/**
 * `npm run bench`: every size in turn (references first, then fleetwatch), then BENCHMARKS.md and
 * BENCHMARKS.json. `npm run bench -- console`: the web console's fleet page with 40,000 entities
 * instead (its own block of BENCHMARKS.md and `console` in the JSON); `npm run bench -- storm`, the
 * notification step in a storm (bench/storm.ts; its own block, `storm`). `--mode quiet,contended`
 * measures each size twice, the second time beside a CPU hog (bench/hog.ts). After the sizes the idle
 * measurement runs (bench/idle.ts; `--idle` runs it alone). A partial run keeps the other rows of
 * the block. `--soak 30m` runs one size for that long instead (its own block). Progress goes to
 * stderr. Ctrl-C, SIGTERM or an error stop everything the benchmark started (bench/cleanup.ts).
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const program = new Command('npm run bench --')
  .description('measure fleetwatch against the simulator, a bare undici loop and blackbox_exporter')
  .argument(
    '[section]',
    'polling (the default), console (the fleet page in headless Chromium) or storm (thousands of robots down at once into one notification group)',
    'polling',
  )
  .addOption(
    new Option('--sizes <list>', `sizes to run, comma-separated (${Object.keys(SIZES).join(', ')})`)
      .argParser(sizeList)
      .default(
        DEFAULT_SIZES.map((name) => SIZES[name]!),
        DEFAULT_SIZES.join(','),
      ),
  )
  .addOption(
    new Option(
      '--mode <list>',
      `modes to run each size in, comma-separated (${MODES.join(', ')}); contended takes one core with a CPU hog`,
    )
      .argParser(modeList)
      .default(['quiet'], 'quiet'),
  )
  .addOption(new Option('--contended', 'the same as --mode contended').conflicts('mode'))
  .option('--out <dir>', 'where BENCHMARKS.md and BENCHMARKS.json go', root)
  .option('--profile <dir>', 'write a V8 CPU profile of each fleetwatch run into this folder')
  .addOption(
    new Option(
      '--redis <kind>',
      `the Redis each size runs against: one server, or a Redis Cluster of 3 masters (${REDIS_KINDS.join(', ')})`,
    )
      .choices(REDIS_KINDS)
      .default('single'),
  )
  .addOption(
    new Option(
      '--replicas <n>',
      'fleetwatch processes sharing the one Redis, as an operator scales past one core (1 to 4)',
    )
      .argParser(replicaCount)
      .default(1),
  )
  .option(
    '--no-poll-thread',
    "fleetwatch polls on its main event loop (worker.poll_thread: false, fleetwatch's default) instead of a thread of its own",
  )
  .option(
    '--outage',
    'after each size: the whole upstream fails (time-outs and 503s) and what it costs is measured (about 4–6 cycles more)',
  )
  .option(
    '--idle',
    'only the idle measurement: fleetwatch run with its defaults and 60 entities (about 1.5 minutes)',
  )
  .addOption(
    new Option(
      '--soak [duration]',
      `run one size (10k unless --sizes names one) for this long, 5m to 4h, and report memory over time (default ${SOAK_DEFAULT})`,
    )
      .argParser(soakDuration)
      .preset(SOAK_DEFAULT)
      .conflicts('idle'),
  )
  .addHelpText(
    'after',
    "\nNeeds redis-server on the PATH (a private one is started per size) and a built dist/ (npm run bench builds it).\nblackbox_exporter is measured when Debian's prometheus-blackbox-exporter is installed.",
  )
  // A usage mistake exits 2, as the fleetwatch CLI's do; help exits 0.
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
  .parse();

const options = program.opts<{
  sizes: SizeSpec[];
  mode: BenchMode[];
  contended?: boolean;
  out: string;
  profile?: string;
  outage?: boolean;
  redis: RedisKind;
  replicas: number;
  pollThread: boolean;
  idle?: boolean;
  soak?: number | string;
}>();
const modes: BenchMode[] = options.contended ? ['contended'] : options.mode;
const section = program.args[0] ?? 'polling';
if (section !== 'polling' && section !== 'console' && section !== 'storm') {
  program.error(`unknown section ${JSON.stringify(section)}; choose polling, console or storm`);
}
const started = Date.now();
const markdownFile = join(options.out, 'BENCHMARKS.md');
const jsonFile = join(options.out, 'BENCHMARKS.json');
const existingJson = (): Record<string, unknown> =>
  existsSync(jsonFile) ? (JSON.parse(readFileSync(jsonFile, 'utf8')) as Record<string, unknown>) : {};

if (section === 'console') {
  const log = (message: string): void => {
    const seconds = ((Date.now() - started) / 1000).toFixed(0).padStart(4);
    process.stderr.write(`${seconds}s [console] ${message}\n`);
  };
  const result = await measureConsole(root, log);
  const machine = describeMachine(root);
  const existing = existsSync(markdownFile) ? readFileSync(markdownFile, 'utf8') : undefined;
  writeFileSync(markdownFile, mergeConsoleReport(existing, renderConsoleBlock(result, machine)));
  writeFileSync(
    jsonFile,
    `${JSON.stringify({ ...existingJson(), console: { machine, result } }, null, 2)}\n`,
  );
  process.stderr.write(
    `wrote ${markdownFile} and BENCHMARKS.json in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
  process.exit(0);
}

interface StoredJson {
  machine?: Machine;
  results?: StoredResult[];
  idle?: StoredIdle;
  soak?: StoredSoak;
}

function writeJson(fields: Record<string, unknown>): void {
  writeFileSync(jsonFile, `${JSON.stringify({ ...existingJson(), ...fields }, null, 2)}\n`);
}

const progress =
  (tag: string) =>
  (message: string): void => {
    const seconds = ((Date.now() - started) / 1000).toFixed(0).padStart(4);
    process.stderr.write(`${seconds}s [${tag}] ${message}\n`);
  };

if (section === 'storm') {
  await runGuarded(async () => {
    const result = await measureStorm(progress('storm'));
    const machine = describeMachine(root);
    const existing = existsSync(markdownFile) ? readFileSync(markdownFile, 'utf8') : undefined;
    writeFileSync(markdownFile, mergeStormReport(existing, renderStormBlock(result, machine)));
    writeJson({ storm: { machine, result } });
    process.stderr.write(
      `wrote ${markdownFile} and BENCHMARKS.json in ${Math.round((Date.now() - started) / 1000)} s\n`,
    );
  });
  process.exit(0);
}

await runGuarded(async () => {
  if (options.soak !== undefined) {
    // The preset arrives unparsed when --soak is given without a value.
    const durationMs = typeof options.soak === 'number' ? options.soak : soakDuration(options.soak);
    const sizeGiven = program.getOptionValueSource('sizes') === 'cli';
    if (sizeGiven && options.sizes.length !== 1)
      program.error('--soak runs one size; give --sizes one of them');
    const spec = sizeGiven ? options.sizes[0]! : SIZES['10k']!;
    const result = await runSoak(root, spec, durationMs, progress(`soak ${spec.label}`));
    const machine = describeMachine(root);
    const existing = existsSync(markdownFile) ? readFileSync(markdownFile, 'utf8') : undefined;
    let markdown = mergeSoakReport(existing, renderSoakBlock(result, machine));
    // The targets table has the soak's row: the results block is redrawn from what it showed.
    const stored = existingJson() as StoredJson;
    if (stored.results && stored.machine && markdown.includes(BLOCK_START)) {
      markdown = mergeReport(
        markdown,
        renderBlock(stored.results, stored.machine, stored.idle, { machine, result }),
      );
    }
    writeFileSync(markdownFile, markdown);
    writeJson({ soak: { machine, result } });
    process.stderr.write(
      `soak: ${result.noGrowth ? 'no growth' : 'memory grows'}; wrote ${markdownFile} and BENCHMARKS.json in ${Math.round((Date.now() - started) / 60_000)} min\n`,
    );
    return;
  }

  const fresh: SizeResult[] = [];
  // A size's modes one after the other, so the pair is measured as close in time as it can be.
  for (const spec of options.idle ? [] : options.sizes) {
    for (const mode of modes) {
      const tag = modes.length > 1 || mode !== 'quiet' ? `${spec.label} ${mode}` : spec.label;
      const log = progress(tag);
      const result = await measureSize(root, spec, log, {
        mode,
        ...(options.profile ? { profileDir: resolve(options.profile) } : {}),
        ...(options.outage ? { outage: true } : {}),
        redis: options.redis,
        replicas: options.replicas,
        pollThread: options.pollThread,
      });
      log(
        `${Math.round(result.pollsPerSecond)} polls/s, ${Math.round(result.fleetwatch.cpuPerPoll)} µs CPU per poll (simulator ${Math.round(result.simulator.cpuPerPoll)}, Redis ${Math.round(result.redis.cpuPerPoll)}; bare loop ${Math.round(result.undici.cpuMicros / result.undici.requests)} µs a request), p99 ${Math.round(result.latency.beyondPoll.p99)} ms beyond the poll, ${(result.memory.maxRss / 2 ** 20).toFixed(0)} MB RSS${result.hog ? `, hog ${result.hog.cores.toFixed(2)} cores` : ''}`,
      );
      fresh.push(result);
    }
  }
  const idleLog = progress('idle');
  const idle = await measureIdle(root, idleLog);
  idleLog(
    `RSS ${(idle.rss.median / 2 ** 20).toFixed(1)} MB (median; max ${(idle.rss.max / 2 ** 20).toFixed(1)}), heap used ${(idle.heap.used / 2 ** 20).toFixed(1)} MB`,
  );

  const machine = describeMachine(root);
  const stored = existingJson() as StoredJson;
  const results = mergeResults(stored.results ?? [], stored.machine, fresh, machine);
  const storedIdle: StoredIdle = { ...idle, measured: { commit: machine.commit, date: machine.date } };
  const existing = existsSync(markdownFile) ? readFileSync(markdownFile, 'utf8') : undefined;
  writeFileSync(markdownFile, mergeReport(existing, renderBlock(results, machine, storedIdle, stored.soak)));
  writeJson({ machine, results, idle: storedIdle });
  process.stderr.write(
    `wrote ${markdownFile} and BENCHMARKS.json in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
});
