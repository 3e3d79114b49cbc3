import type { Logger } from 'pino';
import type { UpstreamWindow } from '../events/detectors/upstream-health.js';
import type { RedisClient } from '../lib/redis-connection.js';
import { type StoreKeys, storeKeys } from '../store/keys.js';
import type { SnapshotRef } from '../store/snapshot-store.js';
import type { RequestInfo, RequestObserver } from '../upstream/http.js';
import { UPSTREAM_NAMES, type UpstreamName, upstreamOf } from '../upstream/names.js';

/**
 * The monitor's own upstream health (`monitor.upstream.degraded` / `recovered`).
 *
 * Every HTTP exchange of the upstream client is counted (`UpstreamWindows.observer`) per upstream
 * — `token` (the token issuer), `fleet` (`/v1`), `robots` (the robot gateway) — in fixed, clock
 * aligned windows of `pollers.upstream.interval` (window n = `floor(ms / interval)`). Each replica
 * adds its counts to one Redis hash per upstream and window (`HINCRBY`, flushed every second), so
 * a window holds what all replicas saw together. The `upstream` poller's job of tick n judges the
 * closed window n - 1 of every upstream with the `upstream-health` detector (see upstream.ts).
 *
 * The token issuer is asked for a token about once per token lifetime, so its own requests alone
 * would leave most windows empty (saying nothing) and an incident of it open for an hour after it
 * recovered. So a call that the fleet API or the robot gateway accepted with fleetwatch's token
 * (any answer but 401/403, 5xx or none) also counts as a good request of `token`: fleetwatch is
 * authenticated. While no token can be had, no such call is made.
 *
 * A call counts once, by its first attempt; its retries do not count again. An answer with a
 * success status whose body is not as the spec says (not JSON, or not its shape) counts as
 * `unreadable` beside it: a garbling gateway is as broken as a failing one.
 */

type Counts = Required<UpstreamWindow>;

function emptyCounts(): Counts {
  return { requests: 0, authFailures: 0, serverErrors: 0, timeouts: 0, unreadable: 0 };
}

/**
 * How one exchange counts. The token issuer answers bad credentials with 400 too. A 401 to a
 * first sending is not a failure: it is sent again with a fresh token, and that answer counts
 * (a 401 the fresh token recovered is none; one it did not is counted once).
 */
export function countExchange(
  counts: UpstreamWindow,
  info: Pick<RequestInfo, 'operation' | 'status' | 'auth'>,
): void {
  counts.requests += 1;
  const { status } = info;
  if (status === 'timeout' || status === 'network') counts.timeouts += 1;
  else if (
    (status === 401 && info.auth !== 'first') ||
    status === 403 ||
    (status === 400 && info.operation === 'oauth_token')
  )
    counts.authFailures += 1;
  else if (status >= 500) counts.serverErrors += 1;
}

/** The API accepted the bearer token: the answer is neither a refusal nor gateway trouble. */
function acceptedToken(status: RequestInfo['status']): boolean {
  return typeof status === 'number' && status < 500 && status !== 401 && status !== 403;
}

export function upstreamRef(name: string): SnapshotRef {
  return { kind: 'fleet', id: 'upstream', facet: name };
}

export interface UpstreamWindowsOptions {
  /** A producer connection; not closed here. */
  redis: RedisClient;
  prefix?: string;
  windowMs: number;
  now?: () => number;
  logger?: Logger;
  /** Flush period; default 1 s (at most a quarter of the window). */
  flushEveryMs?: number;
}

/** Windows this far back are still flushed after a Redis outage; older counts are dropped. */
const KEEP_WINDOWS = 10;

export class UpstreamWindows {
  readonly windowMs: number;
  readonly keys: StoreKeys;
  readonly #redis: RedisClient;
  readonly #now: () => number;
  readonly #logger: Logger | undefined;
  readonly #flushEveryMs: number;
  /** window → upstream → counts not yet in Redis. */
  #pending = new Map<number, Map<UpstreamName, Counts>>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #failing = false;

  constructor(options: UpstreamWindowsOptions) {
    if (!Number.isInteger(options.windowMs) || options.windowMs < 1)
      throw new RangeError('windowMs must be a positive integer');
    this.#redis = options.redis;
    this.keys = storeKeys(options.prefix);
    this.windowMs = options.windowMs;
    this.#now = options.now ?? Date.now;
    this.#logger = options.logger;
    this.#flushEveryMs = options.flushEveryMs ?? Math.max(50, Math.min(1_000, Math.floor(this.windowMs / 4)));
  }

  windowAt(ms: number): number {
    return Math.floor(ms / this.windowMs);
  }

  /** Hand this to `createUpstream({observer})` (possibly combined with others). */
  readonly observer: RequestObserver = {
    request: (info) => this.record(info),
    unreadable: (info) => this.recordUnreadable(info),
  };

  record(info: Pick<RequestInfo, 'operation' | 'status' | 'auth' | 'retry'>, at = this.#now()): void {
    // A call counts once, by its first attempt: retries would multiply the failures of a few
    // unanswering robots until they look like the share of a failing gateway.
    if (info.retry) return;
    const window = this.windowAt(at);
    const name = upstreamOf(info.operation);
    countExchange(this.#pendingCounts(window, name), info);
    if (name !== 'token' && acceptedToken(info.status)) this.#pendingCounts(window, 'token').requests += 1;
  }

  /**
   * A call whose answer had a success status (so `record` counted it as good) but a body not as
   * the spec says: a failure of its upstream all the same. Counted beside the exchange, in the
   * window of now (the same as the exchange's, but for an answer read across a window's end).
   */
  recordUnreadable(info: Pick<RequestInfo, 'operation'>, at = this.#now()): void {
    this.#pendingCounts(this.windowAt(at), upstreamOf(info.operation)).unreadable += 1;
  }

  /** The counts of `name` in `window` not yet in Redis, made on first use. */
  #pendingCounts(window: number, name: UpstreamName): Counts {
    let byName = this.#pending.get(window);
    if (!byName) {
      byName = new Map();
      this.#pending.set(window, byName);
    }
    let counts = byName.get(name);
    if (!counts) {
      counts = emptyCounts();
      byName.set(name, counts);
    }
    return counts;
  }

  /** Flushes every second until `stop`. */
  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      void this.flush();
    }, this.#flushEveryMs);
    this.#timer.unref();
  }

  /** Stops the timer and makes a last flush attempt. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  /** Adds the pending counts to Redis; on failure they stay pending (bounded). Never throws. */
  flush(): Promise<void> {
    this.#flushing ??= this.#flush().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  async #flush(): Promise<void> {
    const oldest = this.windowAt(this.#now()) - KEEP_WINDOWS;
    for (const window of this.#pending.keys()) if (window < oldest) this.#pending.delete(window);
    if (this.#pending.size === 0) return;
    const batch = this.#pending;
    this.#pending = new Map();
    const ttlMs = Math.max(this.windowMs * (KEEP_WINDOWS + 2), 600_000);
    try {
      const pipeline = this.#redis.pipeline();
      for (const [window, byName] of batch) {
        for (const [name, counts] of byName) {
          const key = this.keys.upstreamWindow(name, window);
          for (const [field, value] of Object.entries(counts)) {
            if (value > 0) pipeline.hincrby(key, field, value);
          }
          pipeline.pexpire(key, ttlMs);
        }
      }
      const replies = (await pipeline.exec()) ?? [];
      const failed = replies.find(([error]) => error);
      if (failed) throw failed[0];
      if (this.#failing) this.#logger?.info('upstream request counts are reaching Redis again');
      this.#failing = false;
    } catch (error) {
      // Put the counts back (merged with whatever arrived meanwhile) for the next attempt. A
      // partially applied pipeline may count some twice: an outage of Redis is rare and the
      // counts only feed a ratio.
      for (const [window, byName] of batch) {
        for (const [name, counts] of byName) {
          const into = this.#pendingCounts(window, name);
          for (const field of Object.keys(counts) as (keyof Counts)[]) into[field] += counts[field];
        }
      }
      if (!this.#failing) {
        this.#logger?.warn({ err: (error as Error).message }, 'could not flush upstream request counts');
      }
      this.#failing = true;
    }
  }

  /** The counts all replicas flushed for one window, per upstream. */
  async read(window: number): Promise<Record<UpstreamName, Counts>> {
    const pipeline = this.#redis.pipeline();
    for (const name of UPSTREAM_NAMES) pipeline.hgetall(this.keys.upstreamWindow(name, window));
    const replies = (await pipeline.exec()) ?? [];
    const out = {} as Record<UpstreamName, Counts>;
    UPSTREAM_NAMES.forEach((name, i) => {
      const [error, raw] = replies[i] ?? [new Error('missing pipeline reply'), null];
      if (error) throw error;
      const fields = (raw ?? {}) as Record<string, string>;
      const number = (field: keyof Counts) => {
        const value = Number.parseInt(fields[field] ?? '0', 10);
        return Number.isFinite(value) && value > 0 ? value : 0;
      };
      out[name] = {
        requests: number('requests'),
        authFailures: number('authFailures'),
        serverErrors: number('serverErrors'),
        timeouts: number('timeouts'),
        unreadable: number('unreadable'),
      };
    });
    return out;
  }
}
