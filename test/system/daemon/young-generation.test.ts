import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * The image starts fleetwatch with 2 MB semi-spaces (`NODE_OPTIONS` in the Dockerfile) for the
 * daemon thread; the poll thread, started after `pollThreadYoungGeneration`, gets 32 MB ones
 * (twice V8's default). Measured in a process started as the image starts one: each thread
 * allocates short-lived objects until its new space has grown as far as it may, and says how large
 * it got.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MB = 2 ** 20;

/** Allocates short-lived objects until new space has grown as far as it may; says how large it got. */
const GROWN_NEW_SPACE = `(() => {
  let kept = [];
  for (let i = 0; i < 4e6; i++) { kept.push({ i }); if (kept.length > 1e5) kept = []; }
  return process.getBuiltinModule('node:v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
})()`;

async function newSpaces(setBeforeThread: boolean): Promise<{ main: number; thread: number }> {
  const thread = `process.getBuiltinModule('node:worker_threads').parentPort.postMessage(${GROWN_NEW_SPACE});`;
  const script = `const { once } = await import('node:events');
const { Worker } = await import('node:worker_threads');
const { pollThreadYoungGeneration } = await import(${JSON.stringify(join(ROOT, 'src/lib/heap-growth.ts'))});
${GROWN_NEW_SPACE};
if (${setBeforeThread}) pollThreadYoungGeneration();
const worker = new Worker(${JSON.stringify(thread)}, { eval: true });
const [thread] = await once(worker, 'message');
await worker.terminate();
console.log(JSON.stringify({ main: ${GROWN_NEW_SPACE}, thread }));`;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '--max-semi-space-size=2' }, timeout: 30_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { main: number; thread: number };
}

describe('the young generation of each thread', () => {
  it('stays at the flag for the daemon thread and grows past V8’s default for the poll thread', async () => {
    const { main, thread } = await newSpaces(true);
    // Two 2 MB semi-spaces at most.
    expect(main).toBeLessThanOrEqual(4 * MB);
    // V8's default stops at two 16 MB semi-spaces; the poll thread's may grow to two of 32 MB.
    expect(thread).toBeGreaterThan(32 * MB);
    expect(thread).toBeLessThanOrEqual(64 * MB);
  });

  it('without pollThreadYoungGeneration, a new thread takes the flag too (what it is for)', async () => {
    const { main, thread } = await newSpaces(false);
    expect(main).toBeLessThanOrEqual(4 * MB);
    expect(thread).toBeLessThanOrEqual(4 * MB);
  });
});
