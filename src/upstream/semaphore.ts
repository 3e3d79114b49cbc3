import { onAbort } from '../lib/abort-fanout.js';

/** A counting semaphore with a FIFO queue; waiting can be cancelled with an AbortSignal. */
export class Semaphore {
  readonly #max: number;
  #active = 0;
  readonly #waiters: Array<{ grant: () => void }> = [];

  constructor(max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`semaphore size must be >= 1 (got ${max})`);
    this.#max = max;
  }

  /** Slots in use right now. */
  get active(): number {
    return this.#active;
  }

  /** Callers waiting for a slot. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** Waits for a slot; resolves with a `release` function that must be called exactly once. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#active < this.#max) {
      this.#active++;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          unlink?.();
          resolve(this.#releaser());
        },
      };
      // One listener on the signal for every waiter (abort-fanout.ts): a poll job queues hundreds.
      const unlink = signal
        ? onAbort(signal, (reason) => {
            const index = this.#waiters.indexOf(waiter);
            if (index >= 0) this.#waiters.splice(index, 1);
            reject(reason);
          })
        : undefined;
      this.#waiters.push(waiter);
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiters.shift();
      // The slot passes straight to the next waiter, so the count stays the same.
      if (next) next.grant();
      else this.#active--;
    };
  }
}
