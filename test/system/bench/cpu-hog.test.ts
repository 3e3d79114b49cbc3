import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CpuHog } from '../../../bench/hog.js';
import { cpuMicros } from '../../../bench/proc.js';
import { eventually } from '../../support/redis.js';

/**
 * The contended mode's CPU hog never outlives the benchmark: stopped, interrupted, or with the
 * benchmark killed outright.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const logDir = mkdtempSync(join(tmpdir(), 'fleetwatch-hog-'));
afterAll(() => rmSync(logDir, { recursive: true, force: true }));

/** Gone, or a zombie waiting for whoever adopted it to reap it: either way no longer running. */
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

/** A benchmark stand-in: a process that starts a hog, prints its pid and waits. */
async function parentWithHog() {
  const script = `const { CpuHog } = await import(${JSON.stringify(join(ROOT, 'bench/hog.ts'))});
const hog = CpuHog.start(${JSON.stringify(join(logDir, 'child-hog.log'))});
console.log(hog.pid);
setInterval(() => {}, 60_000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [chunk] = (await once(child.stdout, 'data')) as [Buffer];
  const hogPid = Number(chunk.toString('utf8').trim());
  expect(Number.isInteger(hogPid)).toBe(true);
  expect(ended(hogPid)).toBe(false);
  return { child, hogPid };
}

describe('the CPU hog', () => {
  it('spins one core until stopped and says what it took', async () => {
    const hog = CpuHog.start(join(logDir, 'hog.log'));
    const pid = hog.pid;
    expect(ended(pid)).toBe(false);
    // CPU time is counted in clock ticks, and the hog may already have been charged one when it
    // read its starting CPU (a busy host runs the child first): wait for a tick after this reading,
    // which is no earlier than the hog's own.
    const first = cpuMicros(pid);
    await eventually(
      async () => cpuMicros(pid),
      (micros) => micros > first,
    );
    const result = await hog.stop();
    expect(ended(pid)).toBe(true);
    expect(result.cores).toBeGreaterThan(0);
    expect(result.pinnedCpu === null || result.pinnedCpu === 1).toBe(true);
  });

  it('is killed when the benchmark is interrupted', async () => {
    const { child, hogPid } = await parentWithHog();
    const exited = once(child, 'exit');
    child.kill('SIGINT');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(130);
    await eventually(async () => ended(hogPid), Boolean);
  });

  it('exits by itself when the benchmark is killed outright', async () => {
    const { child, hogPid } = await parentWithHog();
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
    await eventually(async () => ended(hogPid), Boolean);
  });
});
