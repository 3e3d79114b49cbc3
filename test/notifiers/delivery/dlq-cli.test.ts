import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../../src/cli/exit-codes.js';
import type { DeadLetter } from '../../../src/notifiers/delivery/dead-letters.js';
import { schedulePolicy } from '../../../src/notifiers/receivers/webhook/retry-schedule.js';
import { runCli, writeSimulatorConfig } from '../../support/cli.js';
import { redisUrl } from '../../support/redis.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';
import { newSecret } from '../receivers/webhook/helpers.js';
import { DeliveryHarness, type JobWatch, notification, vpnLost } from './helpers.js';

const RECEIVER = 'ops-bridge';

let h: DeliveryHarness;
let receiver: WebhookReceiver;
let watch: JobWatch;
let config: string;
const secret = newSecret();
const env = () => ({ FLEETWATCH_CONFIG: config, FLEET_SECRET: 'unused-secret', HOOK_SECRET: secret });

beforeAll(async () => {
  h = await new DeliveryHarness().open();
  receiver = await WebhookReceiver.start({ secret });
  config = writeSimulatorConfig(
    'http://127.0.0.1:9',
    `redis:
  url: ${redisUrl()}
  prefix: ${h.prefix}
receivers:
  - kind: webhook
    name: ${RECEIVER}
    url: ${receiver.url}
    secrets:
      - \${HOOK_SECRET}
`,
  );
  // Two notifications the receiver rejects: two dead letters.
  receiver.respondWith(422, 422);
  await h.enqueue(
    notification('ntf-1', RECEIVER, [vpnLost('veh-0001')]),
    notification('ntf-2', RECEIVER, [vpnLost('veh-0002'), vpnLost('veh-0003', 1_000)]),
  );
  const started = await h.start({
    name: RECEIVER,
    kind: 'webhook',
    notifier: h.webhookNotifier(RECEIVER, receiver.url, secret),
    policy: schedulePolicy([0]),
  });
  watch = started.watch;
  await watch.nth('ntf-1');
  await watch.nth('ntf-2');
});

afterAll(async () => {
  await h.close();
  await receiver.close();
});

describe('fleetwatch dlq', () => {
  it('list prints the dead letters, as a table or as JSON', async () => {
    const json = await runCli(['dlq', 'list', '--json'], env());
    expect(json.code).toBe(ExitCode.ok);
    const letters = JSON.parse(json.stdout) as DeadLetter[];
    expect(letters.map((letter) => [letter.id, letter.receiver, letter.events, letter.attempts])).toEqual([
      ['ntf-1', RECEIVER, 1, 1],
      ['ntf-2', RECEIVER, 2, 1],
    ]);
    expect(letters[1]).toMatchObject({
      type: 'vehicle.vpn.disconnected',
      subject: 'vehicle/veh-0002',
      reason: 'HTTP 422',
    });

    const text = await runCli(['dlq', 'list', '--receiver', RECEIVER], env());
    expect(text.code).toBe(ExitCode.ok);
    const lines = text.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+RECEIVER\s+FAILED AT\s+ATTEMPTS\s+EVENTS\s+FIRST EVENT\s+REASON$/);
    expect(lines[2]).toMatch(
      /^ntf-2\s+ops-bridge\s+\S+\s+1\s+2\s+vehicle\.vpn\.disconnected vehicle\/veh-0002\s+HTTP 422$/,
    );
  });

  it('replay sends a dead letter once; a second replay of the id exits 4 and sends nothing', async () => {
    const first = await runCli(['dlq', 'replay', 'ntf-1'], env());
    expect(first.code).toBe(ExitCode.ok);
    expect(first.stdout).toContain(`replayed ntf-1 to ${RECEIVER}`);
    expect(await watch.nth('ntf-1', 2)).toMatchObject({ state: 'completed' });

    const again = await runCli(['dlq', 'replay', 'ntf-1'], env());
    expect(again.code).toBe(ExitCode.notFound);
    expect(again.stderr).toBe('fleetwatch: ntf-1 is not a dead letter any more (it is delivered)\n');
    expect(receiver.deliveries.map((delivery) => [delivery.webhookId, delivery.answer])).toEqual([
      ['ntf-1', 422],
      ['ntf-2', 422],
      ['ntf-1', 200],
    ]);
  });

  it('unknown ids and receivers exit 4; a malformed receiver name, id and --all together, or neither, exit 2', async () => {
    const unknown = await runCli(['dlq', 'replay', 'ntf-nope'], env());
    expect(unknown.code).toBe(ExitCode.notFound);
    expect(unknown.stderr).toBe('fleetwatch: no dead letter ntf-nope\n');
    expect((await runCli(['dlq', 'purge', 'ntf-nope'], env())).code).toBe(ExitCode.notFound);
    const noReceiver = await runCli(['dlq', 'list', '--receiver', 'nobody'], env());
    expect(noReceiver.code).toBe(ExitCode.notFound);
    expect(noReceiver.stderr).toContain('no receiver named "nobody"');
    // A name no receiver can have is a usage error, worded as the API words it (400).
    const malformed = await runCli(['dlq', 'list', '--receiver', 'no body'], env());
    expect(malformed.code).toBe(ExitCode.usage);
    expect(malformed.stderr).toContain('a receiver name (1 to 64 letters, digits, _ or -)');
    expect((await runCli(['dlq', 'replay'], env())).code).toBe(ExitCode.usage);
    expect((await runCli(['dlq', 'purge', 'ntf-2', '--all'], env())).code).toBe(ExitCode.usage);
  });

  it('purge --all wants --yes; purge <id> removes one', async () => {
    const refused = await runCli(['dlq', 'purge', '--all'], env());
    expect(refused.code).toBe(ExitCode.usage);
    expect(refused.stderr).toContain('this deletes 1 dead letter for good; add --yes');

    const purged = await runCli(['dlq', 'purge', 'ntf-2'], env());
    expect(purged.code).toBe(ExitCode.ok);
    expect(purged.stdout).toBe(`purged ntf-2 (${RECEIVER})\n`);
    const empty = await runCli(['dlq', 'list'], env());
    expect(empty.stdout).toBe('no dead letters\n');
    const all = await runCli(['dlq', 'purge', '--all', '--yes'], env());
    expect(all.stdout).toBe('purged 0 dead letters\n');
    expect(receiver.deliveries).toHaveLength(3);
  });

  it('with no dead letters, replay --all says it replayed none and purge --all asks for nothing', async () => {
    await runCli(['dlq', 'purge', '--all', '--yes'], env());
    const replay = await runCli(['dlq', 'replay', '--all'], env());
    expect([replay.code, replay.stdout, replay.stderr]).toEqual([
      ExitCode.ok,
      'replayed 0 dead letters\n',
      '',
    ]);
    const purge = await runCli(['dlq', 'purge', '--all'], env());
    expect([purge.code, purge.stdout, purge.stderr]).toEqual([ExitCode.ok, 'purged 0 dead letters\n', '']);
  });
});

describe('fleetwatch receiver', () => {
  it('list shows a disabled receiver; enable turns it back on; unknown names exit 4', async () => {
    await h.disabledReceivers.disable(RECEIVER, { kind: 'webhook', reason: 'HTTP 410', status: 410 });
    const list = await runCli(['receiver', 'list', '--json'], env());
    expect(list.code).toBe(ExitCode.ok);
    expect(JSON.parse(list.stdout)).toEqual([
      {
        name: RECEIVER,
        kind: 'webhook',
        disabled: expect.objectContaining({ reason: 'HTTP 410', status: 410 }),
        hold: null,
        maxHoldMs: 300_000,
        deadLetters: 0,
      },
    ]);
    const replay = await runCli(['dlq', 'replay', '--all'], env());
    expect(replay.stdout).toContain(`${RECEIVER}: skipped, receiver disabled: HTTP 410`);

    const enabled = await runCli(['receiver', 'enable', RECEIVER], env());
    expect(enabled.code).toBe(ExitCode.ok);
    expect(enabled.stdout).toContain(`${RECEIVER} enabled again`);
    expect(await h.disabledReceivers.status(RECEIVER)).toBeUndefined();
    const again = await runCli(['receiver', 'enable', RECEIVER], env());
    expect(again.stdout).toBe(`${RECEIVER} is not disabled\n`);
    const text = await runCli(['receiver', 'list'], env());
    expect(text.stdout).toMatch(/ops-bridge\s+webhook\s+5m\s+0\s+enabled\n/);

    const unknown = await runCli(['receiver', 'enable', 'nobody'], env());
    expect(unknown.code).toBe(ExitCode.notFound);
    expect(unknown.stderr).toBe(
      'fleetwatch: no receiver named "nobody" in the config (configured: ops-bridge)\n',
    );
  });

  it('--help works', async () => {
    for (const args of [['dlq'], ['dlq', 'replay'], ['receiver', 'enable'], ['receiver', 'resume']]) {
      const run = await runCli([...args, '--help'], {});
      expect(run.code, args.join(' ')).toBe(ExitCode.ok);
      expect(run.stdout).toContain('Usage: fleetwatch');
    }
  });
});
