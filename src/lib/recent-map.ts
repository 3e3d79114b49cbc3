/**
 * A map that keeps only what was set recently: at most `maxEntries`, and none left unset for
 * longer than `maxIdleMs`. For caches whose entries pay off soon after they are set or not at
 * all: once the work that filled them is over, they are let go instead of kept until the count
 * bound pushes them out (which, after one burst, may be never).
 *
 * Entries are kept in the order they were last set, so the ones to let go are always the first:
 * a `set` lets go of every entry past a bound, at a cost of the entries it lets go. Nothing runs
 * between two `set`s: an idle map keeps its entries until the next one.
 */
export interface RecentMapOptions {
  /** At most this many entries; at least 1. */
  maxEntries: number;
  /** An entry not set again for longer than this goes at the next `set`. */
  maxIdleMs: number;
  /** Clock (epoch ms); `Date.now` by default. */
  now?: () => number;
}

interface Entry<V> {
  value: V;
  setAt: number;
}

export class RecentMap<K, V> {
  readonly #entries = new Map<K, Entry<V>>();
  readonly #maxEntries: number;
  readonly #maxIdleMs: number;
  readonly #now: () => number;

  constructor(options: RecentMapOptions) {
    this.#maxEntries = Math.max(1, Math.floor(options.maxEntries));
    this.#maxIdleMs = Math.max(0, options.maxIdleMs);
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    return this.#entries.get(key)?.value;
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  /** Sets `key` as the most recent entry, then lets go of what is past either bound. */
  set(key: K, value: V): void {
    const now = this.#now();
    this.#entries.delete(key);
    this.#entries.set(key, { value, setAt: now });
    const idleSince = now - this.#maxIdleMs;
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && entry.setAt >= idleSince) break;
      this.#entries.delete(oldest);
    }
  }

  delete(key: K): boolean {
    return this.#entries.delete(key);
  }
}
