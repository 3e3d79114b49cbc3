/**
 * A value loaded on demand and reused for `ttlMs`: what keeps scrapes cheap. Concurrent callers
 * share one load (a scrape collects every gauge at once, and two Prometheus servers may scrape
 * together); a failed load is not cached, so the next call tries again. `ttlMs` 0 reuses nothing
 * but the load under way. Measured on a monotonic clock, never on a test clock.
 */
export class CachedLoader<T> {
  readonly #load: () => Promise<T>;
  readonly #ttlMs: number;
  readonly #clock: () => number;
  #value: { at: number; value: T } | undefined;
  #loading: Promise<T> | undefined;

  constructor(load: () => Promise<T>, ttlMs: number, clock: () => number = () => performance.now()) {
    this.#load = load;
    this.#ttlMs = Math.max(0, ttlMs);
    this.#clock = clock;
  }

  get(): Promise<T> {
    const cached = this.#value;
    if (cached && this.#clock() - cached.at < this.#ttlMs) return Promise.resolve(cached.value);
    if (this.#loading) return this.#loading;
    const loading = Promise.resolve()
      .then(() => this.#load())
      .then((value) => {
        this.#value = { at: this.#clock(), value };
        return value;
      });
    this.#loading = loading;
    const clear = () => {
      if (this.#loading === loading) this.#loading = undefined;
    };
    loading.then(clear, clear);
    return loading;
  }

  /** Forgets the cached value (the next `get` loads). */
  clear(): void {
    this.#value = undefined;
  }
}
