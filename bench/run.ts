import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { measureConsole } from './console.js';
import { measureSize, type SizeResult, type SizeSpec } from './measure.js';
import { type BenchMode, DEFAULT_SIZES, MODES, modeList, SIZES, sizeList } from './options.js';
import { REDIS_KINDS, type RedisKind } from './redis.js';
import {
  describeMachine,
  mergeConsoleReport,
  mergeReport,
  renderBlock,
  renderConsoleBlock,
} from './report.js';

/**
 * `npm run bench`: every size in turn (references first, then fleetwatch), then BENCHMARKS.md and
 * BENCHMARKS.json. `npm run bench -- console`: the web console's fleet page with 40,000 entities
 * instead (its own block of BENCHMARKS.md and `console` in the JSON). `--mode quiet,contended`
 * measures each size twice, the second time beside a CPU hog (bench/hog.ts). Progress goes to stderr.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const program = new Command('npm run bench --')
  .description('measure fleetwatch against the simulator, a bare undici loop and blackbox_exporter')
  .argument('[section]', 'polling (the default) or console (the fleet page in headless Chromium)', 'polling')
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
  .option(
    '--outage',
    'after each size: the whole upstream fails (time-outs and 503s) and what it costs is measured (about 4–6 cycles more)',
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
}>();
const modes: BenchMode[] = options.contended ? ['contended'] : options.mode;
const section = program.args[0] ?? 'polling';
if (section !== 'polling' && section !== 'console') {
  program.error(`unknown section ${JSON.stringify(section)}; choose polling or console`);
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

const results: SizeResult[] = [];
// A size's modes one after the other, so the pair is measured as close in time as it can be.
for (const spec of options.sizes) {
  for (const mode of modes) {
    const tag = modes.length > 1 || mode !== 'quiet' ? `${spec.label} ${mode}` : spec.label;
    const log = (message: string): void => {
      const seconds = ((Date.now() - started) / 1000).toFixed(0).padStart(4);
      process.stderr.write(`${seconds}s [${tag}] ${message}\n`);
    };
    const result = await measureSize(root, spec, log, {
      mode,
      ...(options.profile ? { profileDir: resolve(options.profile) } : {}),
      ...(options.outage ? { outage: true } : {}),
      redis: options.redis,
    });
    log(
      `${Math.round(result.pollsPerSecond)} polls/s, ${Math.round(result.fleetwatch.cpuPerPoll)} µs CPU per poll, p99 ${Math.round(result.latency.beyondPoll.p99)} ms beyond the poll, ${(result.memory.maxRss / 2 ** 20).toFixed(0)} MB RSS${result.hog ? `, hog ${result.hog.cores.toFixed(2)} cores` : ''}`,
    );
    results.push(result);
  }
}

const machine = describeMachine(root);
const existing = existsSync(markdownFile) ? readFileSync(markdownFile, 'utf8') : undefined;
writeFileSync(markdownFile, mergeReport(existing, renderBlock(results, machine)));
// The console's measurement, when one was made, stays beside the polling one.
const { console: consoleResult } = existingJson();
writeFileSync(
  jsonFile,
  `${JSON.stringify({ machine, results, ...(consoleResult ? { console: consoleResult } : {}) }, null, 2)}\n`,
);
process.stderr.write(
  `wrote ${markdownFile} and BENCHMARKS.json in ${Math.round((Date.now() - started) / 1000)} s\n`,
);
