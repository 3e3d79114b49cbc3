import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { redisAnswers } from '../../src/demo/redis.js';

/**
 * A `redis-server` of the test's own, on a free loopback port. By default with no persistence:
 * stopping it loses every key (which is what a Redis restart without persistence, or a failover to
 * an empty replica, does to fleetwatch). With `persistence: 'aof'` it keeps an append-only file in a
 * temporary directory, fsynced before every reply (`appendfsync always`), so a restart, even after
 * SIGKILL, comes back with every write it acknowledged: how a production Redis that must not lose
 * state is run. It can be stopped and started again on the same port.
 */

export interface PrivateRedisOptions {
  /** `none` (default): every restart starts empty. `aof`: the data survives restarts. */
  persistence?: 'none' | 'aof';
}

/** A TCP port nothing listens on right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

/** Whether `redis-server` can be run here (the test explains itself when it cannot). */
export function redisServerAvailable(): boolean {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return probe.status === 0;
}

function pingOnce(port: number): Promise<boolean> {
  return redisAnswers(`redis://127.0.0.1:${port}`, 500);
}

export class PrivateRedis {
  readonly port: number;
  readonly persistence: 'none' | 'aof';
  /** Where the append-only file lives (`aof` only). */
  readonly #dataDir: string | undefined;
  #process: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #lines: string[] = [];
  /** How many times the server was started (1 after `PrivateRedis.start`). */
  starts = 0;

  private constructor(port: number, options: PrivateRedisOptions) {
    this.port = port;
    this.persistence = options.persistence ?? 'none';
    this.#dataDir = this.persistence === 'aof' ? mkdtempSync(join(tmpdir(), 'fleetwatch-redis-')) : undefined;
  }

  /** Starts a server on `port` (default: a free one) and resolves once it answers PING. */
  static async start(port?: number, options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
    const redis = new PrivateRedis(port ?? (await freePort()), options);
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** The server's working directory (`aof` only): where its append-only file and snapshots go. */
  get dataDir(): string | undefined {
    return this.#dataDir;
  }

  get running(): boolean {
    return this.#process !== undefined;
  }

  /** What the server logged (its stdout/stderr). */
  output(): string {
    return this.#lines.join('\n');
  }

  /** Starts the server again on the same port (empty, unless it persists to an append-only file). */
  async start(timeoutMs = 10_000): Promise<void> {
    if (this.#process) throw new Error(`redis-server on port ${this.port} is already running`);
    const persistence = this.#dataDir
      ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', this.#dataDir]
      : ['--appendonly', 'no'];
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--save', '', ...persistence, '--bind', '127.0.0.1'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.starts += 1;
    const tag = `[redis:${this.port}#${this.starts}]`;
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        for (const line of chunk.split('\n')) if (line.trim() !== '') this.#lines.push(`${tag} ${line}`);
      });
    }
    let exitedEarly: string | undefined;
    this.#exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        exitedEarly = `exited code=${code} signal=${signal}`;
        if (this.#process === child) this.#process = undefined;
        resolve();
      });
      child.once('error', (error) => {
        exitedEarly = `could not start: ${error.message}`;
        if (this.#process === child) this.#process = undefined;
        resolve();
      });
    });
    this.#process = child;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (exitedEarly) throw new Error(`redis-server on port ${this.port} ${exitedEarly}\n${this.output()}`);
      if (await pingOnce(this.port)) return;
      if (Date.now() > deadline) {
        await this.stop();
        throw new Error(`redis-server on port ${this.port} did not answer PING within ${timeoutMs} ms`);
      }
      await delay(50);
    }
  }

  /**
   * Stops the server: `shutdown` sends SHUTDOWN NOSAVE (clients see the connection close);
   * `kill` SIGKILLs it (as a crash). Resolves once the process is gone.
   */
  async stop(how: 'shutdown' | 'kill' = 'shutdown'): Promise<void> {
    const child = this.#process;
    if (!child) return;
    if (how === 'shutdown') {
      const client = new Redis({
        host: '127.0.0.1',
        port: this.port,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      client.on('error', () => {});
      // The server closes the connection instead of answering; that rejection is expected.
      await client.shutdown('NOSAVE').catch(() => {});
      client.disconnect();
      const gone = await Promise.race([this.#exited.then(() => true), delay(5_000, false)]);
      if (!gone) child.kill('SIGKILL');
    } else {
      child.kill('SIGKILL');
    }
    await this.#exited;
    this.#process = undefined;
  }

  /** Stops the server (SIGKILL) and deletes its append-only file, if it kept one. */
  async dispose(): Promise<void> {
    await this.stop('kill');
    if (this.#dataDir) rmSync(this.#dataDir, { recursive: true, force: true });
  }
}
