/**
 * Failed logins (`POST /api/session` with a token that is none of the configured ones), counted per
 * remote address so a client cannot try tokens at speed: after `LOGIN_LIMITS.failures` failures
 * within `LOGIN_LIMITS.windowMs` of the first one, that address's logins are refused with 429 until
 * the window ends, whatever token it sends. A successful login does not reset the count (a holder
 * of one token must not be able to guess another between its own logins).
 *
 * Memory is bounded: at most `LOGIN_LIMITS.addresses` addresses are tracked; past that the oldest
 * is forgotten first. Each replica counts its own (a client spread over N replicas gets N times the
 * tries), which with tokens of 16 characters and more still leaves guessing hopeless.
 */

export const LOGIN_LIMITS = {
  failures: 10,
  windowMs: 5 * 60_000,
  addresses: 10_000,
} as const;

export interface LoginLimitOptions {
  failures?: number;
  windowMs?: number;
  addresses?: number;
  now?: () => number;
}

interface Window {
  failures: number;
  endsAt: number;
}

export class FailedLogins {
  readonly #failures: number;
  readonly #windowMs: number;
  readonly #addresses: number;
  readonly #now: () => number;
  readonly #byAddress = new Map<string, Window>();

  constructor(options: LoginLimitOptions = {}) {
    this.#failures = options.failures ?? LOGIN_LIMITS.failures;
    this.#windowMs = options.windowMs ?? LOGIN_LIMITS.windowMs;
    this.#addresses = options.addresses ?? LOGIN_LIMITS.addresses;
    this.#now = options.now ?? Date.now;
  }

  /** How many addresses are tracked (tests). */
  get tracked(): number {
    return this.#byAddress.size;
  }

  #current(address: string): Window | undefined {
    const window = this.#byAddress.get(address);
    if (window !== undefined && window.endsAt <= this.#now()) {
      this.#byAddress.delete(address);
      return undefined;
    }
    return window;
  }

  /** Milliseconds until `address` may try again, or 0 when it may now. */
  blockedFor(address: string): number {
    const window = this.#current(address);
    if (window === undefined || window.failures < this.#failures) return 0;
    return Math.max(1, window.endsAt - this.#now());
  }

  /** Counts one failed login of `address`. */
  fail(address: string): void {
    const window = this.#current(address);
    if (window !== undefined) {
      window.failures += 1;
      return;
    }
    while (this.#byAddress.size >= this.#addresses) {
      const oldest = this.#byAddress.keys().next().value;
      if (oldest === undefined) break;
      this.#byAddress.delete(oldest);
    }
    this.#byAddress.set(address, { failures: 1, endsAt: this.#now() + this.#windowMs });
  }
}
