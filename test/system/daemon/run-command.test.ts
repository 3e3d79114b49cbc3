import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { closeQuietly } from '../../../src/lib/redis-connection.js';
import { startSimulator } from '../../../src/simulator/index.js';
import type { Simulator } from '../../../src/simulator/types.js';
import { within } from '../../support/daemon-process.js';
import { connect, deletePrefixKeys, eventually, redisUrl, uniquePrefix } from '../../support/redis.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

let sim: Simulator;
let admin: Redis;
let dir: string;
const prefix = uniquePrefix();

beforeAll(async () => {
  sim = await startSimulator({ vehicles: 3, robots: 1, seed: 5, behaviours: false });
  admin = connect();
  dir = mkdtempSync(join(tmpdir(), 'fleetwatch-run-'));
});

afterAll(async () => {
  await sim?.close();
  await deletePrefixKeys(admin, prefix);
  await closeQuietly(admin);
  rmSync(dir, { recursive: true, force: true });
});

describe('fleetwatch run', () => {
  it('runs as a child process until SIGTERM, then stops gracefully and exits 0', async () => {
    const file = join(dir, 'fleetwatch.yaml');
    writeFileSync(
      file,
      stringify({
        installation: 'cli-test',
        upstream: {
          base_url: sim.url,
          robot_base_url: sim.url,
          auth_url: sim.url,
          client_id: 'fleetwatch-demo',
          client_secret: '${SIM_SECRET}',
        },
        redis: { url: redisUrl(), prefix },
        pollers: { vehicles: { interval: '1s' }, power: { interval: '1s' } },
        worker: { shutdown_grace: '2s' },
        log: { format: 'json' },
      }),
    );
    const child = spawn(process.execPath, ['bin/fleetwatch.js', 'run', '--config', file], {
      cwd: ROOT,
      env: { ...process.env, SIM_SECRET: 'demo-secret', FLEETWATCH_CONFIG: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await eventually(
        () => admin.exists(`{${prefix}}:snap:fleet:vehicle:membership`),
        (n) => n === 1,
        { timeoutMs: 15_000, intervalMs: 100 },
      );
      child.kill('SIGTERM');
      expect(await within(exited, 15_000), `exit status within 15 s of SIGTERM\n${stderr}`).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
    const lines = stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const start = lines.find((line) => line.msg === 'fleetwatch running');
    expect(start).toMatchObject({ installation: 'cli-test', redis: redisUrl(), prefix });
    expect(lines.some((line) => line.msg === 'fleetwatch stopped')).toBe(true);
    expect(stderr).not.toContain('demo-secret');
  }, 30_000);
});
