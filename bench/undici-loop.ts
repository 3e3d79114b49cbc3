import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { cyclePaths, fetchToken, listIds } from './cycle.js';

/**
 * The limit on this machine: a bare undici loop making one cycle's requests with fleetwatch's
 * connection pool size and concurrency, reading each body and doing nothing else. Runs in a
 * process of its own; prints one JSON line: requests, CPU microseconds of this process while
 * requesting, wall time.
 *
 * Flat out by default. With a rate, it starts the requests at that pace instead (at most
 * `concurrency` under way, the first `limit` of the cycle's requests), as fleetwatch spreads a
 * cycle over its interval: a request that goes out alone costs more than one in a stream, since
 * each one wakes the server and the answer wakes the loop, a cost a flat-out loop shares out.
 *
 *   node --import tsx bench/undici-loop.ts <simulator url> [connections] [concurrency] [rate/s] [limit]
 */

const [baseUrl, connectionsArg = '32', concurrencyArg = '64', rateArg, limitArg] = process.argv.slice(2);
if (!baseUrl) {
  console.error(
    'usage: undici-loop <simulator url> [connections] [concurrency] [requests per second] [limit]',
  );
  process.exit(2);
}
const rate = rateArg === undefined ? undefined : Number(rateArg);
if (rate !== undefined && !(rate > 0)) {
  console.error(`expected a rate above 0 requests per second; got ${rateArg}`);
  process.exit(2);
}

const token = await fetchToken(baseUrl);
const all = cyclePaths(await listIds(baseUrl, token));
const paths = limitArg === undefined ? all : all.slice(0, Math.max(1, Number(limitArg)));
const pool = new Pool(baseUrl, { connections: Number(connectionsArg) });
const headers = { authorization: `Bearer ${token}` };

let next = 0;
let errors = 0;
const request = async (path: string): Promise<void> => {
  const res = await pool.request({ path, method: 'GET', headers });
  await res.body.arrayBuffer();
  if (res.statusCode >= 500) errors += 1;
};
const worker = async (): Promise<void> => {
  while (next < paths.length) await request(paths[next++]!);
};

/** Starts request i at `started + i / rate`, with at most `concurrency` under way. */
async function paced(perSecond: number, concurrency: number, started: number): Promise<void> {
  const underWay = new Set<Promise<void>>();
  for (let i = 0; i < paths.length; i++) {
    const wait = started + (i * 1000) / perSecond - performance.now();
    if (wait >= 1) await sleep(wait);
    if (underWay.size >= concurrency) await Promise.race(underWay);
    const one = request(paths[i]!).finally(() => underWay.delete(one));
    underWay.add(one);
  }
  await Promise.all(underWay);
}

const cpuBefore = process.cpuUsage();
const started = performance.now();
if (rate === undefined) await Promise.all(Array.from({ length: Number(concurrencyArg) }, worker));
else await paced(rate, Number(concurrencyArg), started);
const wallMs = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
await pool.close();
console.log(
  JSON.stringify({
    requests: paths.length,
    errors,
    cpuMicros: cpu.user + cpu.system,
    wallMs,
    ...(rate === undefined ? {} : { rate }),
  }),
);
