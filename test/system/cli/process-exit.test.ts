import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeQuietly, createProducerConnection, waitForReady } from '../../../src/lib/redis-connection.js';
import { SnapshotStore } from '../../../src/store/snapshot-store.js';
import { writeSimulatorConfig } from '../../support/cli.js';
import { within } from '../../support/daemon-process.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../../support/redis.js';

/**
 * The CLI as a shell runs it: a process whose exit status and stderr are what a script sees. A bad
 * option ends it (no connection left open keeps it alive); a reader that closes the pipe early
 * (`| head -1`) ends it quietly.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const prefix = uniquePrefix();
/** More JSON than a pipe holds (64 KiB): the writes go on after the reader has left. */
const EVENTS = 1_000;
let admin: Redis;
let config: string;

beforeAll(async () => {
  admin = connect();
  config = writeSimulatorConfig('http://127.0.0.1:9', `redis:\n  url: ${redisUrl()}\n  prefix: ${prefix}\n`);
  const redis = createProducerConnection(redisUrl(), { name: 'test-cli-process' });
  await waitForReady(redis, { timeoutMs: 5_000 });
  const store = new SnapshotStore({ redis, prefix, installation: 'cli-process' });
  try {
    for (let n = 0; n < EVENTS; n++) {
      const id = `veh-${String(n).padStart(4, '0')}`;
      await store.commit(
        { kind: 'vehicle', id, facet: 'link' },
        0,
        { state: {}, observedAt: new Date().toISOString() },
        [
          {
            type: 'vehicle.vpn.disconnected',
            data: { severity: 'warning', previous: 'connected', current: 'disconnected' },
          },
        ],
      );
    }
  } finally {
    await closeQuietly(redis);
  }
});

afterAll(async () => {
  await deletePrefixKeys(admin, prefix);
  await closeQuietly(admin);
});

function fleetwatch(args: string[]) {
  const child = spawn(process.execPath, ['bin/fleetwatch.js', ...args], {
    cwd: ROOT,
    env: { ...process.env, FLEETWATCH_CONFIG: config, FLEET_SECRET: 'unused-secret', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  return { child, exited, stderr: () => stderr };
}

describe('fleetwatch as a process', () => {
  it('events tail --from garbage exits 2 with one line naming what was expected', {
    timeout: 60_000,
  }, async () => {
    const run = fleetwatch(['events', 'tail', '--from', 'garbage']);
    run.child.stdout.resume();
    const exit = await within(run.exited, 45_000);
    if (exit === 'late') run.child.kill('SIGKILL');
    expect(exit).toEqual([2, null]);
    expect(run.stderr()).toBe(
      "fleetwatch: option '--from <id>' argument 'garbage' is invalid. expected a stream id such as 1767225600000-0. (add --help for usage)\n",
    );
  });

  it('events list | head -1: the reader leaves, the command ends quietly with 0', {
    timeout: 60_000,
  }, async () => {
    const run = fleetwatch(['events', 'list', '--json', '--limit', String(EVENTS)]);
    // Take the first chunk, then close the pipe as `head -1` does.
    const [first] = (await once(run.child.stdout, 'data')) as [Buffer];
    run.child.stdout.destroy();
    expect(String(first)).toMatch(/^\{"specversion":"1.0"/);
    const exit = await within(run.exited, 45_000);
    if (exit === 'late') run.child.kill('SIGKILL');
    expect(exit).toEqual([0, null]);
    expect(run.stderr()).toBe('');
  });
});
