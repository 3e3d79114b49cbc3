import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { closeQuietly } from '../../src/lib/redis-connection.js';
import { SilenceStore } from '../../src/notifiers/muting/silence-store.js';
import { runCli, writeSimulatorConfig } from '../support/cli.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../support/redis.js';

/**
 * A duration, time or log position nobody means is a usage error: exit 2 and one line naming the
 * flag and the limit, never a stack trace or an exit 1 (a silence of 99999999999d used to overflow
 * the date and fail as an internal error).
 */

const prefix = uniquePrefix();
let admin: Redis;
let config: string;
const env = () => ({ FLEETWATCH_CONFIG: config, FLEET_SECRET: 'unused-secret', USER: 'alice' });

beforeAll(() => {
  admin = connect();
  config = writeSimulatorConfig('http://127.0.0.1:9', `redis:\n  url: ${redisUrl()}\n  prefix: ${prefix}\n`);
});

afterAll(async () => {
  await deletePrefixKeys(admin, prefix);
  await closeQuietly(admin);
});

const SILENCE = ['silence', 'add', '--match', 'type=robot.*', '--comment', 'absurd'];

describe('absurd durations on the command line', () => {
  it('silence add --duration 99999999999d exits 2 with one line', async () => {
    const run = await runCli([...SILENCE, '--duration', '99999999999d'], env());
    expect(run.stderr).toBe(
      'fleetwatch: silence add: --duration: expected a duration between 1s and 365d, like 30s; got 99999999999d (add --help for usage)\n',
    );
    expect(run.code).toBe(ExitCode.usage);
    expect(await new SilenceStore({ redis: admin, prefix }).list({ all: true })).toEqual([]);
  });

  it('silence add --until the year 9999 exits 2 with one line', async () => {
    const run = await runCli([...SILENCE, '--until', '9999-12-31T00:00:00Z'], env());
    expect(run.stderr).toBe(
      'fleetwatch: silence add: --until: expected a time at most 365d after the start (a silence lasts at most 365d); got 9999-12-31T00:00:00Z (add --help for usage)\n',
    );
    expect(run.code).toBe(ExitCode.usage);
  });

  it('ack --for 99999999999d exits 2 with one line', async () => {
    const run = await runCli(
      ['ack', 'vpn-veh-0001-00000000', '--for', '99999999999d', '--comment', 'on it'],
      env(),
    );
    expect(run.stderr).toBe(
      'fleetwatch: ack: --for: expected a duration between 1s and 7d, like 30s; got 99999999999d (add --help for usage)\n',
    );
    expect(run.code).toBe(ExitCode.usage);
  });

  it('power --wait --timeout 99999999999d exits 2 before asking anything', async () => {
    const run = await runCli(['power', 'on', 'veh-0001', '--wait', '--timeout', '99999999999d'], env());
    expect(run.stderr).toContain(
      "argument '99999999999d' is invalid. expected a duration between 100ms and 1h, like 30s; got 99999999999d",
    );
    expect(run.code).toBe(ExitCode.usage);
  });

  it('events list --since and events tail --from beyond any stream id exit 2', async () => {
    const list = await runCli(['events', 'list', '--since', '99999999999999999999999-0'], env());
    expect(list.stderr).toContain(
      "argument '99999999999999999999999-0' is invalid. expected a stream id (such as 1767225600000-0) or an ISO 8601 time",
    );
    expect(list.code).toBe(ExitCode.usage);
    const tail = await runCli(['events', 'tail', '--from', '99999999999999999999999-0'], env());
    expect(tail.stderr).toContain(
      "argument '99999999999999999999999-0' is invalid. expected a stream id such as 1767225600000-0.",
    );
    expect(tail.code).toBe(ExitCode.usage);
  });
});
