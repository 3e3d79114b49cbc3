import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { closeQuietly, createProducerConnection, waitForReady } from '../../src/queues/connection.js';
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
    { kind: 'vehicle', id, signal: 'link' },
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
      '08:15:02  warning   vehicle.vpn.disconnected        veh-0001 lost its VPN connection: connected → disconnected',
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
    expect(run.stdout).toContain('veh-0003 lost its VPN connection');
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
});
