import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { NOTIFIER_FACTORIES } from '../../src/notifiers/receivers/kinds.js';
import { runCli } from '../support/cli.js';

/** Every kind the `receivers:` schema knows, as its problem lists them. */
const KNOWN_KINDS = NOTIFIER_FACTORIES.map((factory) => `"${factory.kind}"`).join(', ');

/**
 * Values nobody means, refused by `fleetwatch config check` (the path `fleetwatch run` takes too)
 * with exit 2 and one line that names the file and the field and says what was expected. Several
 * of them used to pass and break the daemon at run time: a duration of 2^31 ms or more fires
 * Node's timers after 1 ms (a takeover loop at full CPU, every upstream request timed out).
 */

const UPSTREAM = {
  base_url: 'https://fleet.example.com',
  robot_base_url: 'https://robots.example.com',
  auth_url: 'https://auth.example.com',
  client_id: 'fleetwatch',
  client_secret: 's3cr3t-value',
};

type Section = Record<string, unknown>;

/** One folder for every config file of this suite, removed when it ends. */
const folder = mkdtempSync(join(tmpdir(), 'fleetwatch-absurd-'));
let files = 0;
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function configFile(text: string): string {
  files += 1;
  const file = join(folder, `fleetwatch-${files}.yaml`);
  writeFileSync(file, text);
  return file;
}

/** The config with `sections` set, `upstream` merged into a valid one. */
function withSections(sections: Section): string {
  const { upstream, ...rest } = sections;
  return stringify({ upstream: { ...UPSTREAM, ...(upstream as Section | undefined) }, ...rest });
}

async function check(file: string) {
  return runCli(['--config', file, 'config', 'check', '--quiet'], {});
}

const CONSOLE = [{ kind: 'console', name: 'terminal' }];
const WEBHOOK = {
  kind: 'webhook',
  name: 'bridge',
  url: 'https://hooks.example.com/in',
  secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
};

const ABSURD: Array<[string, Section, string]> = [
  // Durations beyond Node's timer limit, or beyond any sane use.
  [
    'a month before taking over a dead replica',
    { worker: { takeover_after: '30d' } },
    'worker.takeover_after: expected a duration between 2s and 1h, like 30s; got 30d',
  ],
  [
    'a request time-out of three million years',
    { upstream: { http: { request_timeout: '999999999d' } } },
    'upstream.http.request_timeout: expected a duration between 100ms and 5m, like 30s; got 999999999d',
  ],
  [
    'a poll interval of three million years',
    { pollers: { vehicles: { interval: '999999999d' } } },
    'pollers.vehicles.interval: expected a duration between 1s and 1d, like 30s; got 999999999d',
  ],
  [
    'a shutdown grace of 270 years',
    { worker: { shutdown_grace: '99999d' } },
    'worker.shutdown_grace: expected a duration between 0s and 10m, like 30s; got 99999d',
  ],
  [
    'a fleet cache of three million years',
    { metrics: { fleet_cache: '999999999d' } },
    'metrics.fleet_cache: expected a duration between 0s and 10m, like 30s; got 999999999d',
  ],
  [
    'a reminder every 270 years',
    { receivers: CONSOLE, notifications: { route: { receiver: 'terminal', repeat_interval: '99999d' } } },
    'notifications.route.repeat_interval: expected a duration between 1s and 30d, like 30s; got 99999d',
  ],
  [
    'a webhook retry in 2700 years',
    { receivers: [{ ...WEBHOOK, retry_schedule: ['0s', '999999d'] }] },
    'receivers[0].retry_schedule[1]: expected a duration between 0s and 1d, like 30s; got 999999d',
  ],
  [
    'a recheck of unsupported vehicles in 27,000 years',
    { pollers: { power: { unsupported_interval: '9999999d' } } },
    'pollers.power.unsupported_interval: expected a duration between 1s and 7d, like 30s; got 9999999d',
  ],
  // Zero and negative where that means nothing.
  [
    'tokens assumed to expire at once',
    { upstream: { token: { default_ttl: 0 } } },
    'upstream.token.default_ttl: expected a duration between 1m and 1d, like 5m; got 0',
  ],
  [
    'every pending power command stuck at once',
    { detectors: { power: { stuck_after: 0 } } },
    'detectors.power.stuck_after: expected a duration between 1s and 7d, like 30s; got 0',
  ],
  [
    'no poll jobs at all',
    { worker: { concurrency: 0 } },
    'worker.concurrency: expected a whole number between 1 and 256; got 0',
  ],
  [
    'a negative failure threshold',
    { detectors: { vpn: { failure_threshold: -1 } } },
    'detectors.vpn.failure_threshold: expected a whole number between 1 and 10000; got -1',
  ],
  [
    'negative retries',
    { upstream: { http: { retries: -1 } } },
    'upstream.http.retries: expected a whole number between 0 and 10; got -1',
  ],
  [
    'an error ratio of 0 (every window bad)',
    { detectors: { upstream: { error_ratio: 0 } } },
    'detectors.upstream.error_ratio: expected a number above 0 and at most 1; got 0',
  ],
  [
    'a response cap of a terabyte',
    { upstream: { http: { max_response_size: '1024GiB' } } },
    'upstream.http.max_response_size: expected a size between 1KiB and 256MiB, like 16MiB; got 1024GiB',
  ],
  // Empty secrets.
  [
    'an empty client secret',
    { upstream: { client_secret: '' } },
    'upstream.client_secret: must not be empty (expected the client secret issued by the fleet operator)',
  ],
  [
    'a blank client secret',
    { upstream: { client_secret: '   ' } },
    'upstream.client_secret: must not be empty (expected the client secret issued by the fleet operator)',
  ],
  // Wrong types, unknown keys, enums.
  [
    'a duration that is a boolean',
    { pollers: { vehicles: { interval: true } } },
    'pollers.vehicles.interval: expected a duration between 1s and 1d, like 30s; got true',
  ],
  [
    'a duration that is a list',
    { worker: { takeover_after: [30] } },
    'worker.takeover_after: expected a duration between 2s and 1h, like 30s; got a list',
  ],
  [
    'a client id that is a number',
    { upstream: { client_id: 42 } },
    'upstream.client_id: expected the client id issued by the fleet operator',
  ],
  [
    'a port that is text',
    { http: { port: 'eighty' } },
    'http.port: expected a whole number between 0 and 65535; got eighty',
  ],
  [
    'a section that is a number',
    { upstream: UPSTREAM, worker: 8 },
    'worker: expected a mapping (key: value pairs); got a number',
  ],
  [
    'a log level nobody has',
    { log: { level: 'loud' } },
    'log.level: expected one of "trace", "debug", "info", "warn", "error", "fatal", "silent"; got loud',
  ],
  [
    'a misspelt field',
    { worker: { takover_after: '30s' } },
    'worker: unknown field "takover_after"; did you mean "takeover_after"?',
  ],
  [
    'a receiver of no known kind',
    { receivers: [{ kind: 'pager', name: 'p' }] },
    `receivers[0].kind: expected one of ${KNOWN_KINDS}; got pager`,
  ],
];

describe('fleetwatch config check refuses absurd values', () => {
  it.each(ABSURD)('%s', async (_what, sections, problem) => {
    const file = configFile(withSections(sections));
    const run = await check(file);
    expect(run.stderr).toBe(`fleetwatch: ${file}: ${problem}\n`);
    expect(run.code).toBe(ExitCode.usage);
  });

  it('says one line per field, even when a field has several problems', async () => {
    const file = configFile(
      withSections({
        upstream: { http: { retry_base_delay: 'soon', request_timeout: -1 } },
        worker: { concurrency: 'many', spread: 7 },
      }),
    );
    const run = await check(file);
    expect(run.stderr.trim().split('\n')).toEqual([
      `fleetwatch: ${file}: upstream.http.request_timeout: expected a duration between 100ms and 5m, like 30s; got -1`,
      `fleetwatch: ${file}: upstream.http.retry_base_delay: expected a duration between 1ms and 1m, like 30s; got soon`,
      `fleetwatch: ${file}: worker.concurrency: expected a whole number between 1 and 256; got many`,
      `fleetwatch: ${file}: worker.spread: expected a number between 0 and 0.9; got 7`,
    ]);
    expect(run.code).toBe(ExitCode.usage);
  });

  it('takes the longest values each range allows', async () => {
    const file = configFile(
      withSections({
        upstream: { http: { request_timeout: '5m', max_response_size: '256MiB' } },
        worker: { takeover_after: '1h' },
        pollers: { vehicles: { interval: '1d' } },
        receivers: CONSOLE,
        notifications: { route: { receiver: 'terminal', repeat_interval: '30d' } },
      }),
    );
    const run = await check(file);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(ExitCode.ok);
  });
});

describe('fleetwatch config check refuses a file made to exhaust the reader', () => {
  it('a YAML nested 10,000 levels deep', async () => {
    const file = configFile(`${withSections({})}deep: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`);
    const run = await check(file);
    expect(run.stderr).toBe(
      `fleetwatch: ${file}: the file nests mappings and lists more than 64 levels deep; a fleetwatch config needs about ten\n`,
    );
    expect(run.code).toBe(ExitCode.usage);
  });

  it('a YAML nested deeper than a config needs, though the parser could read it', async () => {
    let nested = '';
    for (let level = 0; level < 100; level += 1) nested += `${'  '.repeat(level)}k${level}:\n`;
    const file = configFile(`${withSections({})}${nested}${'  '.repeat(100)}leaf: 1\n`);
    const run = await check(file);
    expect(run.stderr).toBe(
      `fleetwatch: ${file}: the file nests mappings and lists more than 64 levels deep; a fleetwatch config needs about ten\n`,
    );
    expect(run.code).toBe(ExitCode.usage);
  });

  it('a billion laughs (YAML aliases expanding without bound)', async () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (const [previous, name] of [...'abcdefgh'].map((letter, index) => [letter, 'bcdefghi'[index]])) {
      levels.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(',')}]`);
    }
    const file = configFile(`${withSections({})}laughs:\n${levels.map((line) => `  ${line}`).join('\n')}\n`);
    const run = await check(file);
    expect(run.stderr).toBe(
      `fleetwatch: ${file}: its YAML aliases (*name) would make more than 100 copies, as an alias bomb does; write the values out instead\n`,
    );
    expect(run.code).toBe(ExitCode.usage);
  });
});
