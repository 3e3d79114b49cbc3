/**
 * A value loaded on demand, reused for `ttlMs`, with ONE load in flight at a time and a bound on
 * how long a caller waits for it. What keeps scrapes and probes cheap and prompt whatever Redis or
 * an upstream does:
 *
 * - concurrent callers share the load under way (a scrape collects every gauge at once, probes
 *   arrive in bursts), so a store that stops answering sees one request, not one per caller;
 * - with `budgetMs`, a caller waits at most that long for a load under way and then gets a
 *   `LateError`; the load goes on in the background and, once it settles, its value serves the
 *   next callers. A load already older than the budget answers `LateError` at once;
 * - `latest` is the last value loaded, however old: what a caller that heard `LateError` can show
 *   instead (a load that always outlasts the budget still brings news once per load);
 * - a failed load is not cached, so the next call tries again (a load that must remember its
 *   failures returns them as values).
 *
 * Measured on a monotonic clock, never on a test clock.
 */

/** A load that did not settle within a caller's budget; it is still under way. */
export class LateError extends Error {
  constructor(
    readonly budgetMs: number,
    /** How long the load had been under way when the caller gave up on it. */
    readonly runningMs: number,
  ) {
    super(`no answer within ${budgetMs} ms (waiting for ${(runningMs / 1000).toFixed(1)} s)`);
    this.name = 'LateError';
  }
}

export interface CachedLoaderOptions {
  /** How long a loaded value is reused; 0 reuses nothing but the load under way. */
  ttlMs: number;
  /** How long `get` waits for a load under way; unbounded when absent. */
  budgetMs?: number;
  /** Milliseconds on a monotonic clock; `performance.now` by default. */
  clock?: () => number;
}

export class CachedLoader<T> {
  readonly #load: () => Promise<T>;
  readonly #ttlMs: number;
  readonly #budgetMs: number | undefined;
  readonly #clock: () => number;
  #value: { at: number; value: T } | undefined;
  #loading: { since: number; promise: Promise<T> } | undefined;

  constructor(load: () => Promise<T>, options: CachedLoaderOptions) {
    this.#load = load;
    this.#ttlMs = Math.max(0, options.ttlMs);
    this.#budgetMs = options.budgetMs === undefined ? undefined : Math.max(0, options.budgetMs);
    this.#clock = options.clock ?? (() => performance.now());
  }

  /** The fresh value, else the load under way (or a new one), within the budget. */
  get(): Promise<T> {
    const cached = this.#value;
    if (cached && this.#clock() - cached.at < this.#ttlMs) return Promise.resolve(cached.value);
    const loading = this.#loading ?? this.#start();
    const budget = this.#budgetMs;
    if (budget === undefined) return loading.promise;
    const left = budget - (this.#clock() - loading.since);
    if (left <= 0) return Promise.reject(new LateError(budget, this.#clock() - loading.since));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new LateError(budget, this.#clock() - loading.since)), left);
    });
    return Promise.race([loading.promise, late]).finally(() => clearTimeout(timer));
  }

  /** The value of the last load that succeeded, past its ttl too; undefined before the first. */
  get latest(): T | undefined {
    return this.#value?.value;
  }

  /** How long the load under way has been running, in ms; undefined when none is. */
  get runningMs(): number | undefined {
    return this.#loading ? this.#clock() - this.#loading.since : undefined;
  }

  /** Forgets the cached value (the next `get` loads, or joins the load under way). */
  clear(): void {
    this.#value = undefined;
  }

  #start(): { since: number; promise: Promise<T> } {
    const promise = Promise.resolve()
      .then(() => this.#load())
      .then((value) => {
        this.#value = { at: this.#clock(), value };
        return value;
      });
    const loading = { since: this.#clock(), promise };
    this.#loading = loading;
    const clear = () => {
      if (this.#loading === loading) this.#loading = undefined;
    };
    promise.then(clear, clear);
    return loading;
  }
}
