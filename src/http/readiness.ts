import type { Redis } from 'ioredis';
import { secrets } from '../log/secrets.js';
import type { TokenProvider } from '../upstream/token-provider.js';

/**
 * What `/readyz` checks: Redis answers PING, and an upstream access token can be had (from the
 * token cache, or from the issuer when the cache has none). A result is reused for `cacheMs` and
 * probes arriving while a check runs share it, so a tight probe loop cannot hammer the issuer.
 */

export interface CheckResult {
  ok: boolean;
  /** How long the check took. */
  durationMs: number;
  /** Why it failed (free of secrets). */
  error?: string;
}

export interface Readiness {
  ready: boolean;
  checks: { redis: CheckResult; upstream: CheckResult };
  /** When the checks ran (ISO 8601). */
  checkedAt: string;
}

export interface ReadinessOptions {
  redis: Redis;
  tokens: Pick<TokenProvider, 'getToken'>;
  /** Default 5 s. */
  cacheMs?: number;
  /** Per check; default 5 s. */
  timeoutMs?: number;
  now?: () => number;
}

async function timed(
  run: (signal: AbortSignal) => Promise<unknown>,
  timeoutMs: number,
): Promise<CheckResult> {
  const started = performance.now();
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    await Promise.race([run(controller.signal), late]);
    return { ok: true, durationMs: Math.round(performance.now() - started) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, durationMs: Math.round(performance.now() - started), error: secrets.scrub(message) };
  } finally {
    clearTimeout(timer);
  }
}

export class ReadinessCheck {
  readonly #options: ReadinessOptions;
  readonly #cacheMs: number;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  #last: { at: number; result: Readiness } | undefined;
  #running: Promise<Readiness> | undefined;

  constructor(options: ReadinessOptions) {
    this.#options = options;
    this.#cacheMs = options.cacheMs ?? 5_000;
    this.#timeoutMs = options.timeoutMs ?? 5_000;
    this.#now = options.now ?? Date.now;
  }

  /** The last result while it is fresh, else a new one (shared by concurrent callers). */
  check(): Promise<Readiness> {
    const last = this.#last;
    if (last && this.#now() - last.at < this.#cacheMs) return Promise.resolve(last.result);
    this.#running ??= this.#run().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #run(): Promise<Readiness> {
    const at = this.#now();
    const [redis, upstream] = await Promise.all([
      timed(async () => {
        const answer = await this.#options.redis.ping();
        if (answer !== 'PONG') throw new Error(`PING answered ${JSON.stringify(answer)}`);
      }, this.#timeoutMs),
      timed((signal) => this.#options.tokens.getToken({ signal }), this.#timeoutMs),
    ]);
    const result: Readiness = {
      ready: redis.ok && upstream.ok,
      checks: { redis, upstream },
      checkedAt: new Date(at).toISOString(),
    };
    this.#last = { at, result };
    return result;
  }
}
