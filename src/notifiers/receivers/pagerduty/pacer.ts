import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Keeps sends under PagerDuty's Events API limit (120 events a minute per routing key) before
 * PagerDuty has to answer 429: at most `limit` exchanges in any `windowMs`. An exchange is counted
 * from the moment its answer came (or it failed), which is after PagerDuty received it, so however
 * long the requests travel PagerDuty never sees more than `limit` within one window.
 *
 * The count is per receiver and per process: receivers sharing one routing key, or replicas
 * taking turns on one receiver, share PagerDuty's limit between them (lower `events_per_minute`
 * for that); a 429 still holds the receiver. It remembers at most `limit` times.
 */
export class SendPacer {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  /** When the last `limit` exchanges ended, oldest first. */
  readonly #ended: number[] = [];

  constructor(limit: number, windowMs: number, now: () => number = Date.now) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('the limit is at least 1');
    if (!(windowMs > 0)) throw new RangeError('the window is longer than 0 ms');
    this.#limit = limit;
    this.#windowMs = windowMs;
    this.#now = now;
  }

  /** Milliseconds until the next exchange may start (at most one window); 0 when it may now. */
  delay(): number {
    if (this.#ended.length < this.#limit) return 0;
    const oldest = this.#ended[0] ?? 0;
    return Math.max(0, Math.min(this.#windowMs, oldest + this.#windowMs - this.#now()));
  }

  /** Resolves when the next exchange may start; rejects (AbortError) when `signal` aborts first. */
  async ready(signal?: AbortSignal): Promise<void> {
    for (let wait = this.delay(); wait > 0; wait = this.delay()) {
      await sleep(wait, undefined, signal ? { signal } : {});
    }
  }

  /** An exchange just ended (answered or failed). */
  ended(): void {
    this.#ended.push(this.#now());
    if (this.#ended.length > this.#limit) this.#ended.shift();
  }
}
