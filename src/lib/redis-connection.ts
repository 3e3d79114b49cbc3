import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { secrets } from '../log/secrets.js';

/**
 * ioredis connections. Two roles:
 *
 * - **worker** (`maxRetriesPerRequest: null`): BullMQ workers, blocking reads (XREADGROUP/XREAD
 *   BLOCK). Commands wait across a reconnect instead of failing.
 * - **producer** (`enableOfflineQueue: false`): queues, the snapshot store, leases. A command while
 *   Redis is away fails at once, so a poll fails fast (and is retried) instead of piling up.
 *
 * Both reconnect forever with an exponential back-off capped at 5 s, so Redis going away and coming
 * back is survived; errors are handled (never thrown at the process as an unhandled `error` event)
 * and logged at debug, once per outage and connection: the Redis health check (redis-health.ts)
 * is the one voice of an outage at warn, so a dozen connections do not say it a dozen times.
 */

export type ConnectionRole = 'worker' | 'producer';

export interface ConnectionOptions {
  /** Shown in `CLIENT LIST` as `fleetwatch:<name>`. */
  name?: string;
  logger?: Logger;
  /** Do not connect until the first command or `connect()`. */
  lazyConnect?: boolean;
  /** Extra ioredis options (never `keyPrefix`: BullMQ forbids it; use key prefixes instead). */
  redis?: Omit<RedisOptions, 'keyPrefix'>;
}

const RETRY_BASE_MS = 100;
const RETRY_CAP_MS = 5_000;

/** Reconnect delay for the `times`-th attempt (1-based): 100 ms doubling, capped at 5 s, plus up to 20 % jitter. */
export function retryDelay(times: number, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(times - 1, 0), 16);
  const base = Math.min(RETRY_BASE_MS * 2 ** exponent, RETRY_CAP_MS);
  return Math.round(base * (1 + 0.2 * random()));
}

/** Registers the URL's password with the secret registry so it never reaches a log line. */
function rememberPassword(url: string): void {
  try {
    const parsed = new URL(url);
    if (parsed.password) secrets.add(decodeURIComponent(parsed.password));
  } catch {
    // ioredis reports a bad URL itself.
  }
}

function baseOptions(role: ConnectionRole, options: ConnectionOptions): RedisOptions {
  return {
    connectionName: `fleetwatch:${options.name ?? role}`,
    lazyConnect: options.lazyConnect ?? false,
    retryStrategy: (times) => retryDelay(times),
    // After a failover the old primary answers READONLY: reconnect and resend.
    reconnectOnError: (error) => (error.message.startsWith('READONLY') ? 2 : false),
    ...(role === 'worker'
      ? { maxRetriesPerRequest: null, enableOfflineQueue: true }
      : { maxRetriesPerRequest: 1, enableOfflineQueue: false }),
    ...options.redis,
  };
}

/**
 * Logs (at debug) the first error of an outage and the recovery of one connection; never lets
 * `error` go unhandled.
 */
export function attachErrorLogging(redis: Redis, label: string, logger?: Logger): void {
  let failing = false;
  redis.on('error', (error: Error) => {
    if (failing) return;
    failing = true;
    logger?.debug({ connection: label, err: error.message }, 'redis connection error; reconnecting');
  });
  redis.on('ready', () => {
    if (failing) logger?.debug({ connection: label }, 'redis connection restored');
    failing = false;
  });
}

/**
 * A warn logger for repeated errors (a Queue emits one per reconnect attempt): the first error
 * goes out at warn, then at most one per `everyMs`, with how many were held back; the rest at debug.
 */
export function throttledWarn(
  logger: Logger | undefined,
  everyMs = 30_000,
  now: () => number = Date.now,
): (fields: Record<string, unknown>, message: string) => void {
  let last = Number.NEGATIVE_INFINITY;
  let held = 0;
  return (fields, message) => {
    const at = now();
    if (at - last < everyMs) {
      held += 1;
      logger?.debug(fields, message);
      return;
    }
    logger?.warn(held > 0 ? { ...fields, repeated: held } : fields, message);
    last = at;
    held = 0;
  };
}

function create(role: ConnectionRole, url: string, options: ConnectionOptions): Redis {
  rememberPassword(url);
  const redis = new Redis(url, baseOptions(role, options));
  attachErrorLogging(redis, options.name ?? role, options.logger);
  return redis;
}

/** For BullMQ workers and blocking reads: `maxRetriesPerRequest: null`. */
export function createWorkerConnection(url: string, options: ConnectionOptions = {}): Redis {
  return create('worker', url, options);
}

/** For queues (producers), the snapshot store and leases: `enableOfflineQueue: false`, fails fast. */
export function createProducerConnection(url: string, options: ConnectionOptions = {}): Redis {
  return create('producer', url, options);
}

/**
 * A dedicated blocking connection cloned from `redis` (same server and credentials), for
 * XREADGROUP/XREAD BLOCK loops that must not stall the shared connection. Offline queue off, so a
 * loop sees failures at once and applies its own back-off; wait for `ready` with `waitForReady`.
 */
export function duplicateForBlocking(redis: Redis, name: string, logger?: Logger): Redis {
  const copy = redis.duplicate({
    connectionName: `fleetwatch:${name}`,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    lazyConnect: false,
    retryStrategy: (times: number) => retryDelay(times),
  });
  attachErrorLogging(copy, name, logger);
  return copy;
}

/**
 * Resolves when `redis` is ready; rejects when it ends for good, on `timeoutMs` (naming the last
 * connection error), when `signal` aborts, or at once with a connection error `failOn` picks (a
 * refused password will not cure itself). Other reconnect attempts in between do not reject.
 */
export function waitForReady(
  redis: Redis,
  options: { timeoutMs?: number; signal?: AbortSignal; failOn?: (error: Error) => boolean } = {},
): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  if (redis.status === 'wait') void redis.connect().catch(() => {});
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    let lastError: Error | undefined;
    const cleanup = (): void => {
      redis.off('ready', onReady);
      redis.off('end', onEnd);
      redis.off('error', onError);
      options.signal?.removeEventListener('abort', onAbort);
      if (timer) clearTimeout(timer);
    };
    const onReady = (): void => {
      cleanup();
      resolve();
    };
    const onEnd = (): void => {
      cleanup();
      reject(new Error('redis connection closed'));
    };
    const onAbort = (): void => {
      cleanup();
      reject(options.signal?.reason ?? new Error('aborted'));
    };
    const onError = (error: Error): void => {
      lastError = error;
      if (!options.failOn?.(error)) return;
      cleanup();
      reject(error);
    };
    if (redis.status === 'end') return onEnd();
    if (options.signal?.aborted) return onAbort();
    redis.on('ready', onReady);
    redis.on('end', onEnd);
    redis.on('error', onError);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.timeoutMs !== undefined) {
      timer = setTimeout(() => {
        cleanup();
        const why = lastError ? ` (${lastError.message})` : '';
        reject(new Error(`redis not ready after ${options.timeoutMs} ms${why}`));
      }, options.timeoutMs);
    }
  });
}

/**
 * Closes connections without throwing: QUIT when connected (bounded by `graceMs`), otherwise (or
 * when QUIT does not answer in time) a hard disconnect. Safe to call twice.
 */
export async function closeQuietly(
  connections: Redis | undefined | ReadonlyArray<Redis | undefined>,
  graceMs = 1_000,
): Promise<void> {
  const list = Array.isArray(connections) ? connections : [connections];
  await Promise.all(
    list.map(async (redis: Redis | undefined) => {
      if (!redis || redis.status === 'end') return;
      if (redis.status !== 'ready') {
        redis.disconnect();
        return;
      }
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          redis.quit(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error('quit timed out')), graceMs);
          }),
        ]);
      } catch {
        redis.disconnect();
      } finally {
        if (timer) clearTimeout(timer);
      }
    }),
  );
}
