import { Pool } from 'undici';
import { cyclePaths, fetchToken, listIds } from './cycle.js';

/**
 * The limit on this machine: a bare undici loop making one cycle's requests with fleetwatch's
 * connection pool size and concurrency, reading each body and doing nothing else. Runs in a
 * process of its own; prints one JSON line: requests, CPU microseconds of this process while
 * requesting, wall time.
 *
 *   node --import tsx bench/undici-loop.ts <simulator url> <connections> <concurrency>
 */

const [baseUrl, connectionsArg = '32', concurrencyArg = '64'] = process.argv.slice(2);
if (!baseUrl) {
  console.error('usage: undici-loop <simulator url> [connections] [concurrency]');
  process.exit(2);
}

const token = await fetchToken(baseUrl);
const paths = cyclePaths(await listIds(baseUrl, token));
const pool = new Pool(baseUrl, { connections: Number(connectionsArg) });
const headers = { authorization: `Bearer ${token}` };

let next = 0;
let errors = 0;
const worker = async (): Promise<void> => {
  while (next < paths.length) {
    const path = paths[next++]!;
    const res = await pool.request({ path, method: 'GET', headers });
    await res.body.arrayBuffer();
    if (res.statusCode >= 500) errors += 1;
  }
};

const cpuBefore = process.cpuUsage();
const started = performance.now();
await Promise.all(Array.from({ length: Number(concurrencyArg) }, worker));
const wallMs = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
await pool.close();
console.log(JSON.stringify({ requests: paths.length, errors, cpuMicros: cpu.user + cpu.system, wallMs }));
