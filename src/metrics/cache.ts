import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import { CachedLoader, LateError } from '../lib/cached-loader.js';
import { throttledWarn } from '../lib/redis-connection.js';

export interface ScrapedGaugesOptions {
  /** `fleetwatch_metrics_collect_errors_total{source}` of a failed read. */
  source: string;
  errors: Counter<'source'>;
  cacheMs: number;
  /**
   * How long a scrape waits for a read; past it the scrape shows the last reading and the read
   * goes on in the background (one at a time). Default 500 ms, so `/metrics` answers within 1 s.
   */
  timeoutMs?: number;
  logger?: Logger;
  /** The warning logged (at most every 30 s) when a read fails. */
  failure: string;
}

/** How long a scrape waits for a Redis read by default. */
export const DEFAULT_COLLECT_TIMEOUT_MS = 500;

/**
 * Gauges filled at scrape time (each gauge's `collect`) from one reading: read at most once per
 * `cacheMs` however many gauges and scrapers ask, one read in flight at a time, and waited for at
 * most `timeoutMs` (`CachedLoader`); applied to the gauges once per new reading. A read that is
 * late shows the last one that finished, when that is newer than what the gauges show: a large
 * fleet's reading can take longer than a scrape waits, and its gauges must still move, one scrape
 * behind (the reading's timestamp says so). When a read fails, or is late with nothing newer, the
 * gauges keep the last reading and the failure is counted under `source`; before the first good
 * reading, and while unbound, nothing is read.
 */
export abstract class ScrapedGauges<T> {
  readonly #scrape: ScrapedGaugesOptions;
  readonly #warn: ReturnType<typeof throttledWarn>;
  #loader: CachedLoader<T> | undefined;
  #last: T | undefined;
  #applied: T | undefined;
  #collecting: Promise<void> | undefined;

  constructor(options: ScrapedGaugesOptions) {
    this.#scrape = options;
    this.#warn = throttledWarn(options.logger);
  }

  /** Brings the gauges up to date with a new reading. */
  protected abstract apply(reading: T): void;

  /** Where readings come from; `undefined` detaches (the gauges keep what they show). */
  protected readFrom(read: (() => Promise<T>) | undefined): void {
    this.#loader = read
      ? new CachedLoader(read, {
          ttlMs: this.#scrape.cacheMs,
          budgetMs: this.#scrape.timeoutMs ?? DEFAULT_COLLECT_TIMEOUT_MS,
        })
      : undefined;
  }

  /**
   * Called from every gauge's `collect`: brings all of them up to date. The gauges of one scrape
   * share one call, so a failed or late read counts once per scrape, not once per gauge.
   */
  collect(): Promise<void> {
    this.#collecting ??= this.#collect().finally(() => {
      this.#collecting = undefined;
    });
    return this.#collecting;
  }

  async #collect(): Promise<void> {
    const loader = this.#loader;
    if (loader) {
      try {
        this.#last = await loader.get();
      } catch (error) {
        const finished = error instanceof LateError ? loader.latest : undefined;
        if (finished !== undefined && finished !== this.#applied) {
          this.#last = finished;
        } else {
          this.#scrape.errors.inc({ source: this.#scrape.source });
          this.#warn({ err: (error as Error).message }, this.#scrape.failure);
        }
      }
    }
    if (this.#last !== undefined && this.#last !== this.#applied) {
      this.#applied = this.#last;
      this.apply(this.#last);
    }
  }
}
