import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../../src/cli/exit-codes.js';
import { closeQuietly } from '../../../src/lib/redis-connection.js';
import { SilenceStore } from '../../../src/notifiers/muting/silence-store.js';
import { runCli, writeSimulatorConfig } from '../../support/cli.js';
import { connect, deletePrefixKeys, redisUrl, uniquePrefix } from '../../support/redis.js';

const prefix = uniquePrefix();
let admin: Redis;
let config: string;
const env = (over: NodeJS.ProcessEnv = {}) => ({
  FLEETWATCH_CONFIG: config,
  FLEET_SECRET: 'unused-secret',
  USER: 'alice',
  ...over,
});

beforeAll(() => {
  admin = connect();
  config = writeSimulatorConfig(
    'http://127.0.0.1:9',
    `redis:
  url: ${redisUrl()}
  prefix: ${prefix}
notifications:
  entity_tags:
    - match: 'vehicle/north-*'
      tags: { site: north }
`,
  );
});

afterAll(async () => {
  await deletePrefixKeys(admin, prefix);
  await closeQuietly(admin);
});

describe('fleetwatch silence', () => {
  it('adds, lists and expires a silence', async () => {
    const added = await runCli(
      [
        'silence',
        'add',
        '--match',
        'type=vehicle.vpn.*',
        '--match',
        'subject=vehicle/veh-0003',
        '--match',
        'tag.site=north',
        '--duration',
        '2h',
        '--comment',
        'VPN gateway swap, CHG-1234',
      ],
      env(),
    );
    expect(added.stderr).toBe('');
    expect(added.code).toBe(ExitCode.ok);
    const id = added.stdout.split(/\s/)[0] ?? '';
    expect(id).toMatch(/^sil_[0-9a-f]{12}$/);
    expect(added.stdout).toContain('active until');
    expect(added.stdout).toContain('(2h 00m from now)');
    expect(added.stdout).toContain('type=vehicle.vpn.* subject=vehicle/veh-0003 tag.site=north');
    const stored = await new SilenceStore({ redis: admin, prefix }).get(id);
    expect(stored).toMatchObject({
      matchers: { type: 'vehicle.vpn.*', subject: 'vehicle/veh-0003', tags: { site: 'north' } },
      createdBy: 'alice',
      comment: 'VPN gateway swap, CHG-1234',
    });

    const list = await runCli(['silence', 'list'], env());
    expect(list.code).toBe(ExitCode.ok);
    const lines = list.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+STATE\s+ENDS\s+MATCHES\s+BY\s+COMMENT$/);
    expect(lines.find((line) => line.startsWith(id))).toMatch(
      /active .*in 2h 00m.*tag\.site=north\s+alice\s+VPN gateway swap/,
    );

    const json = await runCli(['silence', 'list', '--json'], env());
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({ id, state: 'active', createdBy: 'alice' }),
    ]);

    const expired = await runCli(['silence', 'expire', id], env());
    expect(expired.code).toBe(ExitCode.ok);
    expect(expired.stdout).toContain(`${id} expired`);
    const again = await runCli(['silence', 'expire', id], env());
    expect(again.code).toBe(ExitCode.ok);
    expect(again.stdout).toContain('had already expired');

    const none = await runCli(['silence', 'list'], env());
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain('no active or pending silences');
    const all = await runCli(['silence', 'list', '--all', '--json'], env());
    expect(JSON.parse(all.stdout)).toEqual([expect.objectContaining({ id, state: 'expired' })]);
  });

  it('says plainly what is wrong, with no stack trace', async () => {
    const cases: Array<{ args: string[]; env?: NodeJS.ProcessEnv; code: number; says: string | RegExp }> = [
      {
        args: ['silence', 'add', '--match', 'vehicle.vpn.*', '--duration', '1h', '--comment', 'x'],
        code: ExitCode.usage,
        says: 'expected name=value where name is type, subject, severity or tag.<tag name>',
      },
      {
        args: ['silence', 'add', '--match', 'colour=red', '--duration', '1h', '--comment', 'x'],
        code: ExitCode.usage,
        says: 'unknown matcher "colour"',
      },
      {
        args: ['silence', 'add', '--match', 'type=vehicle.vnp.*', '--duration', '1h', '--comment', 'x'],
        code: ExitCode.usage,
        says: '--match type: "vehicle.vnp.*" matches no event type',
      },
      {
        args: ['silence', 'add', '--match', 'severity=loud', '--duration', '1h', '--comment', 'x'],
        code: ExitCode.usage,
        says: '--match severity: must be one of info, warning, critical',
      },
      {
        args: ['silence', 'add', '--match', 'type=robot.*', '--comment', 'x'],
        code: ExitCode.usage,
        says: '--duration or --until: say how long',
      },
      {
        args: ['silence', 'add', '--match', 'type=robot.*', '--duration', '2 fortnights', '--comment', 'x'],
        code: ExitCode.usage,
        says: /--duration: /,
      },
      {
        args: ['silence', 'add', '--match', 'type=robot.*', '--until', 'tomorrow', '--comment', 'x'],
        code: ExitCode.usage,
        says: '--until: must be an ISO 8601 time',
      },
      {
        args: [
          'silence',
          'add',
          '--match',
          'type=robot.*',
          '--until',
          '2020-01-01T00:00:00Z',
          '--comment',
          'x',
        ],
        code: ExitCode.usage,
        says: '--until: is in the past',
      },
      {
        args: ['silence', 'add', '--match', 'type=robot.*', '--duration', '1h'],
        code: ExitCode.usage,
        says: '--comment: say why (a ticket, the work going on)',
      },
      {
        args: ['silence', 'add', '--match', 'type=robot.*', '--duration', '1h', '--comment', '  '],
        code: ExitCode.usage,
        says: '--comment: must say why',
      },
      {
        args: ['silence', 'add', '--match', 'type=robot.*', '--duration', '1h', '--comment', 'x'],
        env: { USER: undefined, LOGNAME: undefined },
        code: ExitCode.usage,
        says: '--author: say who creates the silence ($USER is not set)',
      },
      {
        args: ['silence', 'expire', 'sil_000000000000'],
        code: ExitCode.notFound,
        says: 'no silence "sil_000000000000"',
      },
    ];
    for (const { args, env: over, code, says } of cases) {
      const run = await runCli(args, env(over));
      expect(run.code, args.join(' ')).toBe(code);
      if (typeof says === 'string') expect(run.stderr, args.join(' ')).toContain(says);
      else expect(run.stderr, args.join(' ')).toMatch(says);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
    expect(await new SilenceStore({ redis: admin, prefix }).list({ all: true })).toHaveLength(1);
  });

  it('warns when a tag matcher names a tag no entity_tags entry sets', async () => {
    const run = await runCli(
      [
        'silence',
        'add',
        '--match',
        'tag.rack=r7',
        '--duration',
        '10m',
        '--author',
        'bob',
        '--comment',
        'rack move',
      ],
      env(),
    );
    expect(run.code).toBe(ExitCode.ok);
    expect(run.stderr).toContain('no entity_tags entry in the config sets the tag "rack"');
  });
});
