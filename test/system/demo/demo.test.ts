import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { within } from '../../support/daemon-process.js';
import { connect, deletePrefixKeys, redisUrl } from '../../support/redis.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** What the console receiver prints for each kind of event the demo promises in its first minute. */
const WANTED = {
  powerOn: /reports a new power state: \w+ → on|completed its power command: power on/,
  robotHealth: /fails its health check|passes its health check again/,
  vpn: /is off the VPN|is back on the VPN/,
} as const;

function startDemo(env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, ['bin/fleetwatch.js', 'demo', '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, ...env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

async function until(probe: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`${what()} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('fleetwatch demo', () => {
  const prefixes: string[] = [];
  afterAll(async () => {
    // Only if the demo failed to clean up after itself (the assertion below says so).
    const redis = connect();
    for (const prefix of prefixes) await deletePrefixKeys(redis, prefix);
    redis.disconnect();
  });

  it('prints a power-on, a robot health and a VPN event within a minute, and stops cleanly on Ctrl-C', async () => {
    const demo = startDemo({ REDIS_URL: redisUrl() });
    try {
      await until(
        () => /keys under \{(demo-[0-9a-f]+)\}/.test(demo.stdout()) || demo.child.exitCode !== null,
        20_000,
        () => `no start-up banner (stdout: ${demo.stdout()}, stderr: ${demo.stderr()})`,
      );
      const prefix = /keys under \{(demo-[0-9a-f]+)\}/.exec(demo.stdout())?.[1];
      expect(prefix, demo.stderr()).toBeDefined();
      prefixes.push(prefix!);

      await until(
        () => Object.values(WANTED).every((pattern) => pattern.test(demo.stdout())),
        60_000,
        () => {
          const missing = Object.entries(WANTED)
            .filter(([, pattern]) => !pattern.test(demo.stdout()))
            .map(([name]) => name);
          return `missing ${missing.join(', ')} (stdout:\n${demo.stdout()}\nstderr:\n${demo.stderr()})`;
        },
      );
      // The narration comes before what it causes.
      const out = demo.stdout();
      expect(out).toMatch(/▶ asking veh-\d+ to power on/);
      expect(out.indexOf('▶ asking')).toBeLessThan(out.search(WANTED.powerOn));
      // The robot's critical goes out while the robot is down, not held until its recovery: it
      // waits only for the upstream window holding its time to be judged (the inhibition rule).
      await until(
        () => /▶ robot \S+ recovers/.test(demo.stdout()),
        30_000,
        () => `no recovery narrated (stdout:\n${demo.stdout()})`,
      );
      const story = demo.stdout();
      const failed = story.search(/CRIT\s+\S+ fails its health check/);
      expect(failed, story).toBeGreaterThan(-1);
      expect(failed, story).toBeLessThan(story.search(/▶ robot \S+ recovers/));

      // Still running keys while it runs: it really used that Redis under that prefix.
      const redis = connect();
      try {
        const [, keys] = await redis.scan('0', 'MATCH', `{${prefix}}*`, 'COUNT', 10_000);
        expect(keys.length).toBeGreaterThan(0);
      } finally {
        redis.disconnect();
      }

      demo.child.kill('SIGINT');
      // [exit code, signal], or 'late' when it is still running.
      expect(await within(demo.exited, 15_000), `exit after Ctrl-C\n${demo.stderr()}`).toEqual([0, null]);
      expect(demo.stdout()).toContain(`the keys under {${prefix}} are deleted`);
      expect(demo.stderr()).not.toContain('demo script failed');

      const check = connect();
      try {
        let cursor = '0';
        const left: string[] = [];
        do {
          const [next, keys] = await check.scan(cursor, 'MATCH', `{${prefix}}*`, 'COUNT', 1000);
          cursor = next;
          left.push(...keys);
        } while (cursor !== '0');
        expect(left).toEqual([]);
      } finally {
        check.disconnect();
      }
    } finally {
      if (demo.child.exitCode === null && demo.child.signalCode === null) {
        demo.child.kill('SIGKILL');
        await demo.exited;
      }
    }
  }, 120_000);

  it('says in one line how to get a Redis when REDIS_URL does not answer, and exits 2', async () => {
    // Port 1 on loopback: nothing listens there.
    const demo = startDemo({ REDIS_URL: 'redis://127.0.0.1:1' });
    expect(await within(demo.exited, 20_000), `exit\n${demo.stderr()}`).toEqual([2, null]);
    expect(demo.stdout()).toBe('');
    expect(demo.stderr().trim().split('\n')).toEqual([
      'fleetwatch: REDIS_URL=redis://127.0.0.1:1 does not answer; start that Redis or unset REDIS_URL',
    ]);
  }, 30_000);
});
