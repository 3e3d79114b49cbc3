import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { type UpstreamWindow, upstreamHealthDetector } from '../events/detectors/upstream-health.js';
import type { Detector } from '../events/types.js';
import { type StoreKeys, storeKeys } from '../store/keys.js';
import type { SnapshotRef } from '../store/snapshot-store.js';
import type { RequestInfo, RequestObserver } from '../upstream/http.js';
import type { Poller } from './poller.js';

/**
 * The monitor's own upstream health (`monitor.upstream.degraded` / `recovered`).
 *
 * Every HTTP exchange of the upstream client is counted (`UpstreamWindows.observer`) per upstream
 * — `token` (the token issuer), `fleet` (`/v1`), `robots` (the robot gateway) — in fixed, clock
 * aligned windows of `pollers.upstream.interval` (window n = `floor(ms / interval)`). Each replica
 * adds its counts to one Redis hash per upstream and window (`HINCRBY`, flushed every second), so
 * a window holds what all replicas saw together. The `upstream` poller's job of tick n judges the
 * closed window n - 1 of every upstream with the `upstream-health` detector, on the `fleet` ref
 * `upstream/<name>`; the observation time is the window's end, and a window is applied at most
 * once (the pipeline drops an observation not newer than the stored one).
 */

export const UPSTREAM_NAMES = ['token', 'fleet', 'robots'] as const;
export type UpstreamName = (typeof UPSTREAM_NAMES)[number];

/** Which upstream an operation of the client talks to. */
export function upstreamOf(operation: string): UpstreamName {
  if (operation === 'oauth_token') return 'token';
  if (operation.startsWith('robot.')) return 'robots';
  return 'fleet';
}

type Counts = UpstreamWindow;

function emptyCounts(): Counts {
  return { requests: 0, authFailures: 0, serverErrors: 0, timeouts: 0 };
}

/** How one exchange counts. The token issuer answers bad credentials with 400 too. */
export function countExchange(counts: Counts, info: Pick<RequestInfo, 'operation' | 'status'>): void {
  counts.requests += 1;
  const { status } = info;
  if (status === 'timeout' || status === 'network') counts.timeouts += 1;
  else if (status === 401 || status === 403 || (status === 400 && info.operation === 'oauth_token'))
    counts.authFailures += 1;
  else if (status >= 500) counts.serverErrors += 1;
}

export function upstreamRef(name: string): SnapshotRef {
  return { kind: 'fleet', id: 'upstream', signal: name };
}

export interface UpstreamWindowsOptions {
  /** A producer connection; not closed here. */
  redis: Redis;
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
  readonly #redis: Redis;
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
  };

  record(info: Pick<RequestInfo, 'operation' | 'status'>, at = this.#now()): void {
    const window = this.windowAt(at);
    let byName = this.#pending.get(window);
    if (!byName) {
      byName = new Map();
      this.#pending.set(window, byName);
    }
    const name = upstreamOf(info.operation);
    let counts = byName.get(name);
    if (!counts) {
      counts = emptyCounts();
      byName.set(name, counts);
    }
    countExchange(counts, info);
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
          let target = this.#pending.get(window);
          if (!target) {
            target = new Map();
            this.#pending.set(window, target);
          }
          const into = target.get(name) ?? emptyCounts();
          into.requests += counts.requests;
          into.authFailures += counts.authFailures;
          into.serverErrors += counts.serverErrors;
          into.timeouts += counts.timeouts;
          target.set(name, into);
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
      };
    });
    return out;
  }
}

/** The upstream-health detector with `data.upstream` filled in, so the events' subject is `upstream/<name>`. */
function forUpstream<State, Options>(
  detector: Detector<State, UpstreamWindow, Options>,
  name: string,
): Detector<State, UpstreamWindow, Options> {
  return (previous, observation, context) => {
    const result = detector(previous, observation, context);
    return {
      state: result.state,
      events: result.events.map((draft) => ({ ...draft, data: { ...draft.data, upstream: name } })),
    };
  };
}

/**
 * `upstream`: the job of tick n judges window n - 1 (closed; scheduled a little after the tick
 * starts so every replica has flushed it) for each upstream.
 */
export const upstreamPoller: Poller = {
  name: 'upstream',
  async poll(ctx) {
    await ctx.windows.flush();
    const window = ctx.job.tick - 1;
    const counts = await ctx.windows.read(window);
    const at = new Date((window + 1) * ctx.windows.windowMs).toISOString();
    for (const name of UPSTREAM_NAMES) {
      await ctx.commit(
        {
          poller: 'upstream',
          detector: forUpstream(upstreamHealthDetector, name),
          options: ctx.detectors.upstreamHealth,
          strictlyNewer: true,
        },
        [{ ref: upstreamRef(name), observation: { ok: true, at, value: counts[name] } }],
      );
    }
  },
};
