import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { redisServerAvailable } from '../../support/private-redis.js';
import { eventually } from '../../support/redis.js';

/**
 * A benchmark stopped by SIGTERM or Ctrl-C leaves nothing running: its redis-server, simulator
 * and fleetwatch (and the webhook receiver, which lives in the benchmark's own process) go with it.
 * The benchmark runs fleetwatch from its bundle in dist/bin/ (`npm run bench` builds first; the
 * tests' global setup builds it, so `npm ci && npm test` works on a fresh clone).
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const outDir = mkdtempSync(join(tmpdir(), 'fleetwatch-bench-cleanup-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

/** Gone, or a zombie nobody has reaped yet: either way no longer running. */
function ended(pid: number): boolean {
  const file = `/proc/${pid}/stat`;
  if (!existsSync(file)) return true;
  try {
    const stat = readFileSync(file, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Every process below `root` now, with its command line. */
function descendants(root: number): Array<{ pid: number; command: string }> {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const found: Array<{ pid: number; command: string }> = [];
  const walk = (parent: number): void => {
    for (const [pid, ppid] of parents) {
      if (ppid !== parent) continue;
      let command = '';
      try {
        command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      } catch {
        // Gone meanwhile.
      }
      found.push({ pid, command });
      walk(pid);
    }
  };
  walk(root);
  return found;
}

describe.skipIf(!redisServerAvailable())('a benchmark that is stopped', () => {
  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)(
    'on %s stops its redis-server, simulator and fleetwatch and exits %i',
    async (signal, status) => {
      const bench = spawn(
        process.execPath,
        ['--import', 'tsx', 'bench/run.ts', '--sizes', '1k', '--out', outDir],
        {
          cwd: ROOT,
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let stderr = '';
      bench.stderr.setEncoding('utf8');
      const started = new Promise<void>((resolve, reject) => {
        bench.stderr.on('data', (chunk: string) => {
          stderr += chunk;
          // fleetwatch is up and polling: everything the size starts is running.
          if (stderr.includes('waiting for the baseline cycle')) resolve();
        });
        bench.once('exit', () => reject(new Error(`the benchmark exited early:\n${stderr}`)));
      });
      await started;
      const children = descendants(bench.pid!);
      const named = (word: string) => children.some(({ command }) => command.includes(word));
      expect(named('redis-server'), JSON.stringify(children)).toBe(true);
      expect(named('simulate'), JSON.stringify(children)).toBe(true);
      expect(named(' run'), JSON.stringify(children)).toBe(true);

      const exited = once(bench, 'exit');
      bench.kill(signal);
      const [code] = (await exited) as [number | null];
      expect(code, stderr).toBe(status);
      await eventually(
        async () => children.filter(({ pid }) => !ended(pid)),
        (running) => running.length === 0,
      );
      // Nothing was written: the run did not finish.
      expect(existsSync(join(outDir, 'BENCHMARKS.md'))).toBe(false);
    },
    120_000,
  );
});
