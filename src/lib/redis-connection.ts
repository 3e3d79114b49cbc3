import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
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
 *
 * The endpoint is one server (`redis.url`) or a Redis Cluster (`redis.cluster.nodes`): then every
 * connection is an ioredis `Cluster` with the same role options on each node's connection. Code
 * that only sends commands takes a `RedisClient`, which is either.
 */

/** A Redis we talk to: one server, or a Redis Cluster (commands are routed by their keys' slot). */
export type RedisClient = Redis | Cluster;

/** Where Redis is: one server's URL, or the seed nodes of a Redis Cluster. */
export type RedisEndpoint = string | { readonly cluster: readonly string[] };

/** The endpoint the `redis` config section names: `cluster.nodes` when set, else `url`. */
export function redisEndpoint(config: {
  readonly url: string;
  readonly cluster?: { readonly nodes: readonly string[] } | undefined;
}): RedisEndpoint {
  return config.cluster ? { cluster: config.cluster.nodes } : config.url;
}

/** The URLs of an endpoint (one, or every seed node). */
export function endpointUrls(endpoint: RedisEndpoint): readonly string[] {
  return typeof endpoint === 'string' ? [endpoint] : endpoint.cluster;
}

export function isCluster(redis: RedisClient): redis is Cluster {
  return redis instanceof Cluster;
}

/**
 * The connections a command for every key must go to: each master of a Cluster (SCAN, KEYS and
 * INFO see only the node they are sent to), or the one server.
 */
export function masters(redis: RedisClient): Redis[] {
  return isCluster(redis) ? redis.nodes('master') : [redis];
}

/**
 * Every key matching `pattern` (SCAN MATCH, `COUNT` per call), on every master of a Cluster.
 * Keys are read in batches; a key written meanwhile may or may not be seen (SCAN's rule).
 */
export async function scanKeys(redis: RedisClient, pattern: string, count = 1_000): Promise<string[]> {
  const found: string[] = [];
  for (const node of masters(redis)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', count);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  }
  return found;
}

export type ConnectionRole = 'worker' | 'producer';

export interface ConnectionOptions {
  /** Shown in `CLIENT LIST` as `fleetwatch:<name>`. */
  name?: string;
  logger?: Logger;
  /** Do not connect until the first command or `connect()`. */
  lazyConnect?: boolean;
  /** Extra ioredis options (never `keyPrefix`: BullMQ forbids it; use key prefixes instead). */
  redis?: Omit<RedisOptions, 'keyPrefix' | 'replyMapping'>;
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

/** One client's options: ioredis' own, in its default (legacy) reply shapes, which all code here reads. */
type ClientOptions = RedisOptions & { replyMapping?: 'legacy' };

function baseOptions(role: ConnectionRole, options: ConnectionOptions): ClientOptions {
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
export function attachErrorLogging(redis: RedisClient, label: string, logger?: Logger): void {
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

/**
 * What every node connection of a Cluster is given: the credentials and TLS of the first seed URL
 * (a Cluster's nodes share them; the nodes it discovers are given no URL of their own) and the
 * role's options. The Cluster itself reconnects (`clusterRetryStrategy`) and queues offline.
 */
function nodeCredentials(url: string): ClientOptions {
  try {
    const parsed = new URL(url);
    return {
      ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
      ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
      ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    };
  } catch {
    return {};
  }
}

function clusterOptions(
  role: ConnectionRole,
  nodes: readonly string[],
  options: ConnectionOptions,
): ClusterOptions & { redisOptions?: ClientOptions } {
  const { lazyConnect, retryStrategy: _perNode, ...node } = baseOptions(role, options);
  return {
    lazyConnect: lazyConnect ?? false,
    enableOfflineQueue: node.enableOfflineQueue ?? true,
    clusterRetryStrategy: (times) => retryDelay(times),
    redisOptions: { ...nodeCredentials(nodes[0] ?? ''), ...node },
  };
}

/** The two steps of ioredis' own close that its `disconnect()` skips while it waits to reconnect. */
interface ClosingSteps {
  setStatus?: (status: 'end') => void;
  flushQueue?: (error: Error) => void;
}

/** Ends a client the way its close event would have: status `end`, queued commands rejected. */
function endStranded(client: Redis | Cluster): void {
  const steps = client as unknown as ClosingSteps;
  if (typeof steps.setStatus !== 'function' || typeof steps.flushQueue !== 'function') return;
  steps.setStatus.call(client, 'end');
  steps.flushQueue.call(client, new Error('Connection is closed.'));
}

/*
 * ioredis' clients, whose `disconnect()` always ends them and settles every command they still
 * hold (they reject with "Connection is closed."), and whose duplicates (BullMQ's blocking
 * connections) are of the same kind.
 *
 * Why: called while a client waits to reconnect, ioredis' `disconnect()` cancels the reconnect,
 * but the socket (a Cluster's every node) is already closed, so no close event ever comes to end
 * the client; whatever waits for its `end` and every command in its offline queue stay pending
 * for good (redis/ioredis#2169). A BullMQ worker whose Redis went away then never closes: it
 * awaits its blocking connection's `end`, and its lock timers keep a stopped process alive. Their
 * tests fail if an ioredis upgrade changes either step.
 */

/** A single server's client (see above). */
export class EndingRedis extends Redis {
  override disconnect(reconnect = false): void {
    super.disconnect(reconnect);
    if (!reconnect && this.status === 'reconnecting') endStranded(this);
  }
}

/** A Redis Cluster's client (see above). */
export class EndingCluster extends Cluster {
  override disconnect(reconnect = false): void {
    const waiting = this.status === 'reconnecting';
    super.disconnect(reconnect);
    if (!reconnect && waiting) endStranded(this);
  }
}

// ioredis' own `duplicate` builds a plain client: the copies are given this kind's methods (they
// add no state). Set on the prototypes, with the base methods' types: their return types are
// generic in the reply mapping, which these options never change.
EndingRedis.prototype.duplicate = function duplicate(
  this: EndingRedis,
  ...args: Parameters<Redis['duplicate']>
) {
  return Object.setPrototypeOf(Redis.prototype.duplicate.apply(this, args), EndingRedis.prototype);
} as Redis['duplicate'];
EndingCluster.prototype.duplicate = function duplicate(
  this: EndingCluster,
  ...args: Parameters<Cluster['duplicate']>
) {
  return Object.setPrototypeOf(Cluster.prototype.duplicate.apply(this, args), EndingCluster.prototype);
} as Cluster['duplicate'];

function create(role: ConnectionRole, endpoint: RedisEndpoint, options: ConnectionOptions): RedisClient {
  for (const url of endpointUrls(endpoint)) rememberPassword(url);
  const redis =
    typeof endpoint === 'string'
      ? new EndingRedis(endpoint, baseOptions(role, options))
      : new EndingCluster([...endpoint.cluster], clusterOptions(role, endpoint.cluster, options));
  attachErrorLogging(redis, options.name ?? role, options.logger);
  return redis;
}

/** For BullMQ workers and blocking reads: `maxRetriesPerRequest: null`. */
export function createWorkerConnection(url: string, options?: ConnectionOptions): Redis;
export function createWorkerConnection(endpoint: RedisEndpoint, options?: ConnectionOptions): RedisClient;
export function createWorkerConnection(
  endpoint: RedisEndpoint,
  options: ConnectionOptions = {},
): RedisClient {
  return create('worker', endpoint, options);
}

/** For queues (producers), the snapshot store and leases: `enableOfflineQueue: false`, fails fast. */
export function createProducerConnection(url: string, options?: ConnectionOptions): Redis;
export function createProducerConnection(endpoint: RedisEndpoint, options?: ConnectionOptions): RedisClient;
export function createProducerConnection(
  endpoint: RedisEndpoint,
  options: ConnectionOptions = {},
): RedisClient {
  return create('producer', endpoint, options);
}

/**
 * A copy of `redis` (same server or Cluster, same credentials) with `overrides` on its connection
 * (on each node's connection for a Cluster, whose own `enableOfflineQueue` and `lazyConnect`
 * follow them).
 */
export function duplicateWith(redis: Redis, overrides: RedisOptions): Redis;
export function duplicateWith(redis: RedisClient, overrides: RedisOptions): RedisClient;
export function duplicateWith(redis: RedisClient, overrides: RedisOptions): RedisClient {
  if (!isCluster(redis)) return redis.duplicate(overrides);
  const { lazyConnect, enableOfflineQueue, enableReadyCheck, retryStrategy: _perNode, ...node } = overrides;
  return redis.duplicate([], {
    ...(lazyConnect === undefined ? {} : { lazyConnect }),
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(enableReadyCheck === undefined ? {} : { enableReadyCheck }),
    redisOptions: {
      ...redis.options.redisOptions,
      ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
      ...node,
    },
  });
}

/**
 * A dedicated blocking connection cloned from `redis` (same server and credentials), for
 * XREADGROUP/XREAD BLOCK loops that must not stall the shared connection. Offline queue off, so a
 * loop sees failures at once and applies its own back-off; wait for `ready` with `waitForReady`.
 */
export function duplicateForBlocking(redis: Redis, name: string, logger?: Logger): Redis;
export function duplicateForBlocking(redis: RedisClient, name: string, logger?: Logger): RedisClient;
export function duplicateForBlocking(redis: RedisClient, name: string, logger?: Logger): RedisClient {
  const copy = duplicateWith(redis, {
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
  redis: RedisClient,
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
  connections: RedisClient | undefined | ReadonlyArray<RedisClient | undefined>,
  graceMs = 1_000,
): Promise<void> {
  const list = Array.isArray(connections) ? connections : [connections];
  await Promise.all(
    list.map(async (redis: RedisClient | undefined) => {
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
