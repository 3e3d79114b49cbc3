import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { installedCommand } from './installed.js';
import { freePort } from './private-redis.js';

/**
 * A Redis Cluster of the test's own: `masters` `redis-server --cluster-enabled yes` processes on
 * free loopback ports (no persistence, their node files in a temporary directory), joined by
 * `redis-cli --cluster create … --cluster-replicas 0`, which gives each master one contiguous,
 * equal range of the 16384 slots. `stop()` kills only these processes and removes the directory.
 */

export interface RedisCluster {
  /** `redis://127.0.0.1:<port>` of each master. */
  readonly nodes: readonly string[];
  readonly ports: readonly number[];
  /** What the servers and `redis-cli --cluster create` said. */
  output(): string;
  stop(): Promise<void>;
}

/** Why a cluster cannot be started here (a missing program), or undefined when it can. */
export function redisClusterUnavailable(): string | undefined {
  for (const program of ['redis-server', 'redis-cli']) {
    if (!installedCommand(program))
      return `${program} is not installed (Debian: apt-get install redis-server)`;
  }
  return undefined;
}

/** The longest the cluster may take to start and agree (`cluster_state:ok` on every node). */
const START_TIMEOUT_MS = 30_000;

/** Asks the node on `port` one thing on a short-lived connection; false when it does not answer. */
async function probeNode(port: number, ask: (client: Redis) => Promise<boolean>): Promise<boolean> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return await ask(client);
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

function answersPing(port: number): Promise<boolean> {
  return probeNode(port, async (client) => (await client.ping()) === 'PONG');
}

function clusterStateOk(port: number, masters: number): Promise<boolean> {
  return probeNode(port, async (client) => {
    const info = (await client.call('CLUSTER', 'INFO')) as string;
    return /cluster_state:ok/.test(info) && new RegExp(`cluster_known_nodes:${masters}\\b`).test(info);
  });
}

/** Polls `probe` with a back-off from 20 ms to 500 ms until it holds, or fails after `deadline`. */
async function until(what: string, deadline: number, probe: () => Promise<boolean>): Promise<void> {
  let wait = 20;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`redis cluster: ${what} within ${START_TIMEOUT_MS} ms`);
    await delay(wait);
    wait = Math.min(wait * 2, 500);
  }
}

export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'fleetwatch-cluster-'));
  const lines: string[] = [];
  const children: ChildProcess[] = [];
  const exited: Promise<void>[] = [];
  const ports: number[] = [];
  const stop = async (): Promise<void> => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(exited);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    while (ports.length < masters) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    for (const port of ports) {
      const child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--cluster-node-timeout',
          '5000',
          '--save',
          '',
          '--appendonly',
          'no',
          '--dir',
          dir,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      children.push(child);
      exited.push(
        new Promise((resolve) => child.once('exit', () => resolve()).once('error', () => resolve())),
      );
      for (const stream of [child.stdout, child.stderr]) {
        stream?.setEncoding('utf8');
        stream?.on('data', (chunk: string) => {
          for (const line of chunk.split('\n')) if (line.trim() !== '') lines.push(`[redis:${port}] ${line}`);
        });
      }
    }
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (const port of ports)
      await until(`port ${port} did not answer PING`, deadline, () => answersPing(port));
    const create = spawnSync(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { encoding: 'utf8', timeout: START_TIMEOUT_MS },
    );
    lines.push(`[redis-cli --cluster create] ${create.stdout}${create.stderr}`);
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed (status ${create.status})`);
    for (const port of ports) {
      await until(`port ${port} did not say cluster_state:ok`, deadline, () => clusterStateOk(port, masters));
    }
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${lines.join('\n')}`);
  }
  return {
    nodes: ports.map((port) => `redis://127.0.0.1:${port}`),
    ports,
    output: () => lines.join('\n'),
    stop,
  };
}
