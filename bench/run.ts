import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { measureConsole } from './console.js';
import { measureSize, type SizeResult, type SizeSpec } from './measure.js';
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
 * instead (its own block of BENCHMARKS.md and `console` in the JSON). Progress goes to stderr.
 */

const SIZES: Record<string, SizeSpec> = {
  '1k': { label: '1k', vehicles: 500, robots: 500, intervalMs: 5_000, cycles: 4 },
  '10k': { label: '10k', vehicles: 5_000, robots: 5_000, intervalMs: 15_000, cycles: 3 },
  '40k': { label: '40k', vehicles: 20_000, robots: 20_000, intervalMs: 60_000, cycles: 2 },
};

function sizeList(value: string): SizeSpec[] {
  return value.split(',').map((name) => {
    const spec = SIZES[name.trim()];
    if (!spec)
      throw new InvalidArgumentError(
        `unknown size ${JSON.stringify(name)}; choose from ${Object.keys(SIZES).join(', ')}`,
      );
    return spec;
  });
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const program = new Command('npm run bench --')
  .description('measure fleetwatch against the simulator, a bare undici loop and blackbox_exporter')
  .argument('[section]', 'polling (the default) or console (the fleet page in headless Chromium)', 'polling')
  .option(
    '--sizes <list>',
    `sizes to run, comma-separated (${Object.keys(SIZES).join(', ')})`,
    sizeList,
    Object.values(SIZES),
  )
  .option('--out <dir>', 'where BENCHMARKS.md and BENCHMARKS.json go', root)
  .option('--profile <dir>', 'write a V8 CPU profile of each fleetwatch run into this folder')
  .addHelpText(
    'after',
    "\nNeeds redis-server on the PATH (a private one is started per size) and a built dist/ (npm run bench builds it).\nblackbox_exporter is measured when Debian's prometheus-blackbox-exporter is installed.",
  )
  .parse();

const options = program.opts<{ sizes: SizeSpec[]; out: string; profile?: string }>();
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
for (const spec of options.sizes) {
  const log = (message: string): void => {
    const seconds = ((Date.now() - started) / 1000).toFixed(0).padStart(4);
    process.stderr.write(`${seconds}s [${spec.label}] ${message}\n`);
  };
  const result = await measureSize(
    root,
    spec,
    log,
    options.profile ? { profileDir: resolve(options.profile) } : {},
  );
  log(
    `${Math.round(result.pollsPerSecond)} polls/s, ${Math.round(result.fleetwatch.cpuPerPoll)} µs CPU per poll, p99 ${Math.round(result.latency.beyondPoll.p99)} ms beyond the poll, ${(result.memory.maxRss / 2 ** 20).toFixed(0)} MB RSS`,
  );
  results.push(result);
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
