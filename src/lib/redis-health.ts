import type { Logger } from 'pino';
import { secrets } from '../log/secrets.js';
import { CachedLoader, LateError } from './cached-loader.js';
import { duplicateWith, type RedisClient, retryDelay } from './redis-connection.js';

/**
 * Whether Redis takes fleetwatch's writes, told by ONE check: a real write (`SET <key> <time> PX`)
 * on a connection of its own, so a server that answers PING but refuses writes (out of memory, a
 * read-only replica, a failed save) is seen as such. `/readyz` reads it, the daemon runs it every
 * `intervalMs` in the background, and it is the one voice of a Redis outage in the log: one line
 * when Redis stops taking writes (naming why), one when it is back (with how long it was out),
 * nothing at a healthy start and nothing per failed command elsewhere.
 *
 * One write is in flight at a time (`CachedLoader`); a caller waits at most `budgetMs` for it and
 * then hears `slow`, while the write goes on (bounded by the connection's command time-out).
 */

/** What the check says of Redis; every state but `ok` is a fault. */
export const REDIS_STATES = [
  'ok',
  'unreachable',
  'slow',
  'refusing_writes',
  'authentication',
  'error',
] as const;
export type RedisState = (typeof REDIS_STATES)[number];
export type RedisFault = Exclude<RedisState, 'ok'>;

export interface RedisCheck {
  ok: boolean;
  state: RedisState;
  /** How long the write took; when `slow`, how long it has been waiting. */
  durationMs: number;
  /** Why it failed, in words, starting with the fault (free of secrets). */
  error?: string;
  /** When this answer was taken (ISO 8601); a cached answer keeps its time. */
  checkedAt: string;
}

/** `refusing_writes` → `refusing writes`: how a fault is written in messages. */
const FAULT_WORDS: Record<RedisFault, string> = {
  unreachable: 'unreachable',
  slow: 'slow',
  refusing_writes: 'refusing writes',
  authentication: 'authentication refused',
  error: 'error',
};

/** Reply prefixes of the server (its error codes) and what they mean for fleetwatch. */
const REPLY_FAULTS: ReadonlyArray<[RegExp, RedisFault]> = [
  [/^(WRONGPASS|NOAUTH|NOPERM)\b/, 'authentication'],
  // Redis before 6 answered a wrong password with a plain ERR.
  [/^ERR invalid (username-)?password/i, 'authentication'],
  [/^(OOM|READONLY|MISCONF)\b/, 'refusing_writes'],
  [/^(LOADING|MASTERDOWN|CLUSTERDOWN|TRYAGAIN)\b/, 'unreachable'],
  [/^BUSY\b/, 'slow'],
];

/**
 * The fault an error of a Redis command or connection names: the server's error code leads its
 * message (`OOM command not allowed …`, `WRONGPASS …`); ioredis' own time-out is `slow`; any
 * other reply is an `error`, anything else (refused, reset, closed) `unreachable`.
 */
export function classifyRedisError(error: unknown): RedisFault {
  const message = error instanceof Error ? error.message : String(error);
  for (const [pattern, fault] of REPLY_FAULTS) if (pattern.test(message)) return fault;
  if (message === 'Command timed out') return 'slow';
  if (error instanceof Error && error.name === 'ReplyError') return 'error';
  return 'unreachable';
}

/**
 * The server's answer when `redis.url` names a database it does not have (`/99` where it keeps
 * 16). ioredis only reports it as a connection error and carries on in database 0, so the CLI and
 * the daemon refuse to go on instead.
 */
export function isMissingDatabase(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /^ERR (DB index is out of range|invalid DB index)/i.test(message);
}

/**
 * The one sentence for credentials Redis refused (`WRONGPASS`, `NOAUTH`, `NOPERM`) or a database
 * it does not have, naming `redis.url` and never its password: for the CLI's error and the daemon's log line.
 */
export function describeRefusal(error: unknown, target: string): string {
  const message = secrets.scrub(error instanceof Error ? error.message : String(error));
  if (isMissingDatabase(error)) {
    return `Redis at ${target} has no such database (${message}): the number at the end of redis.url must be one of the server's databases, 0 to its \`databases\` setting minus 1 (16 by default)`;
  }
  if (message.startsWith('NOAUTH')) {
    return `Redis at ${target} requires a password and redis.url gives none (${message})`;
  }
  if (message.startsWith('NOPERM')) {
    return `Redis at ${target} refused a command to the user of redis.url (${message}): grant that user the commands and keys fleetwatch needs, or use another user`;
  }
  return `Redis at ${target} refused the credentials in redis.url (${message}): check its user name and password`;
}

export interface RedisHealthOptions {
  /** A connection to copy (same server and credentials); the check opens one of its own. */
  redis: RedisClient;
  /** The key the write check sets (`storeKeys(prefix).healthCheck`). */
  key: string;
  /** How Redis is named in log lines: `redis.url` with its password masked. */
  target?: string;
  logger?: Logger;
  /** How long a caller waits for the write before hearing `slow`; default 500 ms. */
  budgetMs?: number;
  /** How long a result is reused; default 1 s. */
  cacheMs?: number;
  /** How often `start()` checks; default 2 s. */
  intervalMs?: number;
  /** Told every state as it changes (metrics). */
  onState?: (state: RedisState) => void;
  /** Epoch ms, for outage durations; `Date.now` by default. */
  now?: () => number;
}

/** The longest a write of the check may wait for its answer; then it fails as `slow`. */
const COMMAND_TIMEOUT_MS = 10_000;
/** How long the check's key lives: well past the interval, so it is always there to overwrite. */
const KEY_TTL_MS = 60_000;

export const DEFAULT_REDIS_HEALTH = { budgetMs: 500, cacheMs: 1_000, intervalMs: 2_000 } as const;

interface Outage {
  state: RedisFault;
  /** Epoch ms. */
  since: number;
}

export class RedisHealth {
  readonly #options: RedisHealthOptions;
  readonly #connection: RedisClient;
  readonly #loader: CachedLoader<RedisCheck>;
  readonly #now: () => number;
  /** The last error of the connection since it was last ready (why a write could not be sent). */
  #connectionError: Error | undefined;
  #state: RedisState | undefined;
  #outage: Outage | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: RedisHealthOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#connection = duplicateWith(options.redis, {
      connectionName: 'fleetwatch:health',
      lazyConnect: false,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: COMMAND_TIMEOUT_MS,
      // INFO is not the check (and an ACL may forbid it): the write is.
      enableReadyCheck: false,
      // A read-only replica must be seen as one, not reconnected to.
      reconnectOnError: () => false,
      retryStrategy: (times: number) => retryDelay(times),
    });
    this.#connection.on('error', (error: Error) => {
      this.#connectionError = error;
      options.logger?.debug({ connection: 'health', err: error.message }, 'redis connection error');
    });
    this.#connection.on('close', () => {
      this.#connectionError ??= new Error('the connection closed');
    });
    this.#connection.on('ready', () => {
      this.#connectionError = undefined;
    });
    this.#loader = new CachedLoader(() => this.#write(), {
      ttlMs: options.cacheMs ?? DEFAULT_REDIS_HEALTH.cacheMs,
      budgetMs: this.#budgetMs,
    });
  }

  get #budgetMs(): number {
    return this.#options.budgetMs ?? DEFAULT_REDIS_HEALTH.budgetMs;
  }

  /** The state last seen; undefined before the first check. */
  get state(): RedisState | undefined {
    return this.#state;
  }

  /** The check's answer within the budget (the last one while it is fresh); never rejects. */
  async check(): Promise<RedisCheck> {
    let result: RedisCheck;
    try {
      result = await this.#loader.get();
    } catch (error) {
      const running = error instanceof LateError ? error.runningMs : 0;
      result = fault('slow', Math.round(running), (error as Error).message, this.#now());
    }
    this.#observe(result);
    return result;
  }

  /** Checks every `intervalMs` in the background (the first at once), so an outage is logged. */
  start(): void {
    if (this.#timer) return;
    const tick = () => void this.check();
    tick();
    this.#timer = setInterval(tick, this.#options.intervalMs ?? DEFAULT_REDIS_HEALTH.intervalMs);
    this.#timer.unref();
  }

  /** Stops the background checks and closes the check's connection. Safe to call twice. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#connection.disconnect();
  }

  /** One write, whatever happens: a result, never a throw. */
  async #write(): Promise<RedisCheck> {
    const started = performance.now();
    const at = this.#now();
    const took = () => Math.round(performance.now() - started);
    const connection = this.#connection;
    try {
      if (connection.status !== 'ready') {
        // Why it is not connected, when it knows; else wait for the connection to settle.
        if (this.#connectionError) throw this.#connectionError;
        await settled(connection, COMMAND_TIMEOUT_MS);
      }
      await connection.set(this.#options.key, String(this.#now()), 'PX', KEY_TTL_MS);
      return { ok: true, state: 'ok', durationMs: took(), checkedAt: iso(at) };
    } catch (error) {
      const message = secrets.scrub((error as Error).message);
      return fault(classifyRedisError(error), took(), message, at);
    }
  }

  /** Logs a change of state: once down (naming why), once back (with how long it was out). */
  #observe(result: RedisCheck): void {
    const previous = this.#state;
    if (previous === result.state) return;
    this.#state = result.state;
    this.#options.onState?.(result.state);
    const logger = this.#options.logger;
    const fields = { redis: this.#options.target, state: result.state };
    const at = this.#now();
    if (result.state === 'ok') {
      const outage = this.#outage;
      this.#outage = undefined;
      if (!outage) return;
      const downMs = at - outage.since;
      logger?.info(
        { ...fields, was: outage.state, downMs },
        `Redis is back (out for ${(downMs / 1000).toFixed(1)} s: ${FAULT_WORDS[outage.state]})`,
      );
      return;
    }
    // A slow write has been out since it was sent.
    const since = result.state === 'slow' ? at - result.durationMs : at;
    const outage: Outage = { state: result.state, since: this.#outage?.since ?? since };
    this.#outage = outage;
    const message = this.#say(result);
    if (result.state === 'authentication') logger?.error({ ...fields, since: iso(outage.since) }, message);
    else logger?.warn({ ...fields, since: iso(outage.since) }, message);
  }

  #say(result: RedisCheck): string {
    const why = stripWords(result.error ?? '');
    switch (result.state) {
      case 'authentication':
        return `${describeRefusal(why, this.#options.target ?? 'redis.url')}; not ready until it is fixed`;
      case 'slow':
        return `Redis is not answering: a write got no answer within ${this.#budgetMs} ms; not ready until it answers`;
      case 'refusing_writes':
        return `Redis refuses writes (${why}); not ready until it takes them again`;
      case 'unreachable':
        return `Redis is unreachable (${why}); not ready until it is back`;
      default:
        return `Redis answers writes with an error (${why}); not ready until it takes them again`;
    }
  }
}

function fault(state: RedisFault, durationMs: number, message: string, at: number): RedisCheck {
  return { ok: false, state, durationMs, error: `${FAULT_WORDS[state]}: ${message}`, checkedAt: iso(at) };
}

/** The server's or the connection's own words, without the fault that leads `RedisCheck.error`. */
function stripWords(error: string): string {
  const colon = error.indexOf(': ');
  return colon >= 0 ? error.slice(colon + 2) : error;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Resolves once `redis` is ready; rejects with its first error, or after `timeoutMs`. */
function settled(redis: RedisClient, timeoutMs: number): Promise<void> {
  if (redis.status === 'end') return Promise.reject(new Error('the connection closed'));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error('Command timed out')), timeoutMs);
    const onReady = () => done();
    const onError = (error: Error) => done(error);
    const done = (error?: Error) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
      if (error) reject(error);
      else resolve();
    };
    redis.on('ready', onReady);
    redis.on('error', onError);
  });
}
