import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { maskUrlPassword } from '../config/mask.js';

/**
 * Where the demo keeps its state. In order: `REDIS_URL`; a server answering on 127.0.0.1:6379; a
 * private `redis-server` on a free loopback port (no persistence, stopped on exit); else the demo
 * cannot run and says in one line how to get a Redis.
 */

export const LOCAL_REDIS_URL = 'redis://127.0.0.1:6379';

export interface DemoRedis {
  url: string;
  /** How it was found: from REDIS_URL, the local default, or started for this demo. */
  source: 'env' | 'local' | 'private';
  /** Stops a private server (waits until it is gone); nothing for the others. */
  stop(): Promise<void>;
}

/** No Redis to be had; the message is one line that says how to get one. */
export class DemoRedisError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DemoRedisError';
  }
}

export const NO_REDIS_MESSAGE =
  'the demo needs Redis: nothing answers on 127.0.0.1:6379 and redis-server is not installed; ' +
  'install it (apt-get install redis-server, brew install redis), run one with ' +
  '`docker run -p 6379:6379 redis:7`, or set REDIS_URL';

/** Whether a Redis answers PING at `url` within about a second. */
export async function redisAnswers(url: string, timeoutMs = 1_000): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: timeoutMs,
    enableOfflineQueue: false,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** A TCP port nothing listens on right now (the OS picks it). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

/**
 * Starts `redis-server` on a free loopback port with no persistence. It runs in a process group
 * of its own, so the Ctrl-C a terminal sends to the demo's group does not stop it before the demo
 * has shut down against it. Resolves to undefined when there is no `redis-server` on PATH.
 */
export async function startPrivateRedis(timeoutMs = 10_000): Promise<DemoRedis | undefined> {
  const port = await freePort();
  let child: ChildProcess;
  try {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
  } catch {
    return undefined;
  }
  const output: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      output.push(chunk);
      if (output.length > 50) output.shift();
    });
  }
  let failure: string | undefined;
  let missing = false;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      failure ??= `exited (code ${code}, signal ${signal})`;
      resolve();
    });
    child.once('error', (error: NodeJS.ErrnoException) => {
      missing = error.code === 'ENOENT';
      failure ??= error.message;
      resolve();
    });
  });
  const url = `redis://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null || failure !== undefined) return;
    child.kill('SIGTERM');
    const killed = await Promise.race([exited.then(() => true), delay(5_000, false)]);
    if (!killed) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (failure !== undefined) {
      if (missing) return undefined;
      throw new DemoRedisError(`could not start redis-server: ${failure} ${output.join('').trim()}`.trim());
    }
    if (await redisAnswers(url, 500)) return { url, source: 'private', stop };
    if (Date.now() > deadline) {
      await stop();
      throw new DemoRedisError(`redis-server on port ${port} did not answer within ${timeoutMs} ms`);
    }
    await delay(50);
  }
}

/** Finds or starts the demo's Redis (see the top of this file); throws `DemoRedisError` when there is none. */
export async function findRedis(env: NodeJS.ProcessEnv): Promise<DemoRedis> {
  const none = async () => {};
  const fromEnv = env.REDIS_URL?.trim();
  if (fromEnv) {
    if (!/^rediss?:\/\//.test(fromEnv)) {
      throw new DemoRedisError(`REDIS_URL must be a redis:// or rediss:// URL`);
    }
    if (await redisAnswers(fromEnv, 2_000)) return { url: fromEnv, source: 'env', stop: none };
    throw new DemoRedisError(
      `REDIS_URL=${maskUrlPassword(fromEnv)} does not answer; start that Redis or unset REDIS_URL`,
    );
  }
  if (await redisAnswers(LOCAL_REDIS_URL)) return { url: LOCAL_REDIS_URL, source: 'local', stop: none };
  const started = await startPrivateRedis();
  if (started) return started;
  throw new DemoRedisError(NO_REDIS_MESSAGE);
}

/** Deletes every key under the `{prefix}` hash tag (SCAN MATCH + UNLINK); resolves to what is left. */
export async function deletePrefixKeys(url: string, prefix: string): Promise<number> {
  const redis = new Redis(url, { maxRetriesPerRequest: 2, connectionName: 'fleetwatch:demo-cleanup' });
  redis.on('error', () => {});
  const pattern = `{${prefix}}*`;
  try {
    const sweep = async () => {
      let cursor = '0';
      let found = 0;
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        found += keys.length;
        if (keys.length > 0) await redis.unlink(...keys);
      } while (cursor !== '0');
      return found;
    };
    await sweep();
    // A second pass confirms nothing came back (and removes stragglers written meanwhile).
    await sweep();
    return await sweep();
  } finally {
    redis.disconnect();
  }
}
