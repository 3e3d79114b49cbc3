import { once } from 'node:events';
import { PassThrough, Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { main } from '../../src/cli/main.js';
import { closeQuietly, createProducerConnection, waitForReady } from '../../src/lib/redis-connection.js';
import { eventTypeGlob } from '../../src/store/event-query.js';
import { SnapshotStore } from '../../src/store/snapshot-store.js';
import { runCli, writeSimulatorConfig } from '../support/cli.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../support/redis.js';

const prefix = uniquePrefix();
let admin: Redis;
let redis: Redis;
let store: SnapshotStore;
let config: string;
const env = () => ({ FLEETWATCH_CONFIG: config, FLEET_SECRET: 'unused-secret' });

async function emitVpnLoss(id: string, at: string): Promise<void> {
  const result = await store.commit(
    { kind: 'vehicle', id, facet: 'link' },
    0,
    { state: {}, observedAt: at },
    [
      {
        type: 'vehicle.vpn.disconnected',
        data: { severity: 'warning', previous: 'connected', current: 'disconnected' },
      },
    ],
  );
  if (!result.committed) throw new Error('commit refused');
}

beforeAll(async () => {
  admin = connect();
  redis = createProducerConnection(redisUrl(), { name: 'test-events-cli' });
  await waitForReady(redis, { timeoutMs: 5_000 });
  store = new SnapshotStore({ redis, prefix, installation: 'cli-test' });
  config = writeSimulatorConfig('http://127.0.0.1:9', `redis:\n  url: ${redisUrl()}\n  prefix: ${prefix}\n`);
});

afterAll(async () => {
  await deletePrefixKeys(admin, prefix);
  await closeQuietly([redis, admin]);
});

describe('fleetwatch events', () => {
  it('list prints logged events as sentences, or as CloudEvents with --json', async () => {
    await emitVpnLoss('veh-0001', '2026-11-21T08:15:02.000Z');
    await emitVpnLoss('veh-0002', '2026-11-21T08:15:03.000Z');
    const text = await runCli(['events', 'list'], env());
    expect(text.code).toBe(ExitCode.ok);
    expect(text.stdout).toContain(
      '08:15:02  warning   vehicle.vpn.disconnected        veh-0001 is off the VPN: connected → disconnected',
    );
    const json = await runCli(['events', 'list', '--json', '--subject', 'vehicle/veh-0002'], env());
    const lines = json.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({
      specversion: '1.0',
      type: 'vehicle.vpn.disconnected',
      subject: 'vehicle/veh-0002',
      source: 'fleetwatch/cli-test',
    });
  });

  it('tail prints events logged after it started, until interrupted', async () => {
    const controller = new AbortController();
    const waits: Array<{ text: string; stream: 'stdout' | 'stderr'; resolve: () => void }> = [];
    const printed = (stream: 'stdout' | 'stderr', text: string) =>
      new Promise<void>((resolve) => waits.push({ stream, text, resolve }));
    const following = printed('stderr', 'following the event log');
    const shown = printed('stdout', 'veh-0003');
    const tail = runCli(['events', 'tail', '--type', 'vehicle.vpn.*'], env(), controller.signal, (output) => {
      for (const wait of waits) if (output[wait.stream].includes(wait.text)) wait.resolve();
    });
    await following;
    await emitVpnLoss('veh-0003', '2026-11-21T08:16:00.000Z');
    await shown;
    controller.abort();
    const run = await tail;
    expect(run.stdout).toContain('veh-0003 is off the VPN');
    expect(run.stdout).not.toContain('veh-0001');
  });

  it('says when Redis cannot be reached', async () => {
    const unreachable = writeSimulatorConfig('http://127.0.0.1:9', 'redis:\n  url: redis://127.0.0.1:1\n');
    const run = await runCli(['events', 'list'], {
      FLEETWATCH_CONFIG: unreachable,
      FLEET_SECRET: 'x-secret',
    });
    expect(run.code).toBe(ExitCode.failed);
    expect(run.stderr).toBe(
      'fleetwatch: cannot reach Redis at redis://127.0.0.1:1 (redis.url); is it running?\n',
    );
  });

  it('refuses a bad --from, --since, --type or --limit with one line naming what was expected, exit 2', async () => {
    const cases: Array<[string[], string]> = [
      [
        ['events', 'tail', '--from', 'garbage'],
        "option '--from <id>' argument 'garbage' is invalid. expected a stream id such as 1767225600000-0.",
      ],
      [
        ['events', 'list', '--since', 'garbage'],
        "option '--since <id|time>' argument 'garbage' is invalid. expected a stream id (such as 1767225600000-0) or an ISO 8601 time",
      ],
      [
        ['events', 'list', '--type', '['],
        "option '--type <glob>' argument '[' is invalid. expected an event type or a glob such as vehicle.vpn.*.",
      ],
      [['events', 'tail', '--type', 'a b'], 'expected an event type or a glob such as vehicle.vpn.*.'],
      [
        ['events', 'list', '--limit', '0'],
        "option '--limit <n>' argument '0' is invalid. expected a whole number between 1 and 10000; got 0",
      ],
      [['events', 'list', '--limit', '10001'], 'expected a whole number between 1 and 10000; got 10001'],
      [['events', 'list', '--limit', '1e3'], 'expected a whole number between 1 and 10000; got 1e3'],
    ];
    for (const [args, words] of cases) {
      const run = await runCli(args, env());
      expect(run.code, args.join(' ')).toBe(ExitCode.usage);
      expect(run.stderr).toMatch(/^fleetwatch: [^\n]*\(add --help for usage\)\n$/);
      expect(run.stderr).toContain(words);
      expect(run.stdout).toBe('');
    }
  });

  it('refuses what /api/events refuses, in the same words', async () => {
    const cli = await runCli(['events', 'list', '--type', 'vehicle[0]'], env());
    const api = eventTypeGlob.safeParse('vehicle[0]');
    expect(api.success).toBe(false);
    const words = api.error?.issues[0]?.message ?? '';
    expect(words).toMatch(/^must be /);
    expect(cli.stderr).toContain(words.replace(/^must be /, 'expected '));
  });

  it('a stdout closed by its reader ends tail quietly, exit 0', async () => {
    // The reader takes one line and goes, as `fleetwatch events tail | head -1` does.
    const writes: string[] = [];
    const stdout = new Writable({
      write(chunk, _encoding, done) {
        writes.push(String(chunk));
        done(writes.length > 1 ? Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }) : undefined);
      },
    });
    const stderr = new PassThrough();
    const errors: string[] = [];
    stderr.on('data', (chunk) => errors.push(String(chunk)));
    const following = once(stderr, 'data');
    const run = main(['node', 'fleetwatch', 'events', 'tail', '--type', 'vehicle.vpn.*'], {
      stdout,
      stderr,
      env: env(),
      // Never aborted: only the closed output may end it.
      signal: new AbortController().signal,
    });
    await following;
    await emitVpnLoss('veh-0004', '2026-11-21T08:17:00.000Z');
    await emitVpnLoss('veh-0005', '2026-11-21T08:17:01.000Z');
    expect(await run).toBe(ExitCode.ok);
    expect(writes[0]).toContain('veh-0004 is off the VPN');
    expect(errors.join('')).toMatch(/^following the event log after \S+; Ctrl-C stops\n$/);
  });
});
