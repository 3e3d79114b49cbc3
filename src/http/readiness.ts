import { CachedLoader, LateError } from '../lib/cached-loader.js';
import type { RedisCheck, RedisHealth } from '../lib/redis-health.js';
import { secrets } from '../log/secrets.js';
import { AuthenticationError } from '../upstream/errors.js';
import type { TokenProvider } from '../upstream/token-provider.js';

/**
 * What `/readyz` checks, each named with its state:
 *
 * - `redis`: Redis takes a write (the daemon's `RedisHealth`: `ok`, `unreachable`, `slow`,
 *   `refusing_writes`, `authentication`, `error`);
 * - `upstream`: an access token can be had, from the token cache or from the issuer (`ok`,
 *   `authentication` when the issuer refuses the client credentials, `failing`, `slow`).
 *
 * Each check has one run in flight at a time, its result is reused for `cacheMs`, and a probe
 * waits at most `budgetMs` for it (then hears `slow`, while the run goes on in the background), so
 * `/readyz` answers within a second whatever Redis or the issuer do, and a tight probe loop cannot
 * hammer either.
 */

export type UpstreamState = 'ok' | 'authentication' | 'failing' | 'slow';

export interface CheckResult<State extends string = string> {
  ok: boolean;
  state: State;
  /** How long the check took (when `slow`: how long it has been waiting). */
  durationMs: number;
  /** Why it failed (free of secrets). */
  error?: string;
  /** When this answer was taken (ISO 8601); a cached answer keeps its time. */
  checkedAt: string;
}

export interface Readiness {
  ready: boolean;
  checks: { redis: RedisCheck; upstream: CheckResult<UpstreamState> };
  /** When this answer was given (ISO 8601). */
  checkedAt: string;
}

export interface ReadinessOptions {
  redis: Pick<RedisHealth, 'check'>;
  tokens: Pick<TokenProvider, 'getToken'>;
  /** How long the upstream result is reused; default 1 s. */
  cacheMs?: number;
  /** How long a probe waits for the upstream check; default 500 ms. */
  budgetMs?: number;
  now?: () => number;
}

export class ReadinessCheck {
  readonly #redis: Pick<RedisHealth, 'check'>;
  readonly #upstream: CachedLoader<CheckResult<UpstreamState>>;
  readonly #now: () => number;

  constructor(options: ReadinessOptions) {
    this.#redis = options.redis;
    this.#now = options.now ?? Date.now;
    const tokens = options.tokens;
    this.#upstream = new CachedLoader(
      async () => {
        const started = performance.now();
        const checkedAt = new Date(this.#now()).toISOString();
        const took = () => Math.round(performance.now() - started);
        try {
          await tokens.getToken();
          return { ok: true, state: 'ok', durationMs: took(), checkedAt };
        } catch (error) {
          const message = secrets.scrub(error instanceof Error ? error.message : String(error));
          const state = error instanceof AuthenticationError ? 'authentication' : 'failing';
          return { ok: false, state, durationMs: took(), error: message, checkedAt };
        }
      },
      { ttlMs: options.cacheMs ?? 1_000, budgetMs: options.budgetMs ?? 500 },
    );
  }

  /** Both checks, each within its budget. */
  async check(): Promise<Readiness> {
    const checkedAt = new Date(this.#now()).toISOString();
    const [redis, upstream] = await Promise.all([
      this.#redis.check(),
      this.#upstream.get().catch(
        (error: unknown): CheckResult<UpstreamState> => ({
          ok: false,
          state: 'slow',
          durationMs: error instanceof LateError ? Math.round(error.runningMs) : 0,
          error: `slow: ${(error as Error).message}`,
          checkedAt,
        }),
      ),
    ]);
    return { ready: redis.ok && upstream.ok, checks: { redis, upstream }, checkedAt };
  }
}
