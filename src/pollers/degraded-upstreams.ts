import type { Logger } from 'pino';
import type { EntityKind } from '../events/types.js';
import type { SnapshotStore } from '../store/snapshot-store.js';
import { UPSTREAM_NAMES, type UpstreamName } from '../upstream/names.js';
import { upstreamOfKind } from './poller.js';
import { upstreamRef } from './upstream-windows.js';

/**
 * Which upstreams are degraded right now, as the `upstream` poller judged them (an open
 * `monitor.upstream.degraded` incident: its snapshot's threshold state is alerting).
 *
 * While the upstream a per-entity poller reads from is degraded (or the token issuer is: nothing
 * gets in then), polling the whole fleet only repeats what one incident already says, at the
 * full price: every read waits for its time-out or error, and every entity's failure streak is
 * committed. So the runner polls a sample instead (`pollers.upstream.degraded_sample`), enough
 * for the counting windows to see the upstream recover, and leaves every other entity's state as
 * it was. The states are read at most once per `ttlMs` (one judgement per window is the rate
 * they change at), and a change is logged once.
 */

export interface DegradedUpstreamsOptions {
  store: SnapshotStore;
  logger?: Logger;
  now?: () => number;
  /** How long a reading is reused; default 1 s. */
  ttlMs?: number;
}

function isAlerting(state: unknown): boolean {
  const health = (state as { health?: { alerting?: unknown } | null } | null)?.health;
  return health?.alerting === true;
}

export class DegradedUpstreams {
  readonly #store: SnapshotStore;
  readonly #logger: Logger | undefined;
  readonly #now: () => number;
  readonly #ttlMs: number;
  #degraded = new Set<UpstreamName>();
  #readAt = Number.NEGATIVE_INFINITY;
  #reading: Promise<void> | undefined;

  constructor(options: DegradedUpstreamsOptions) {
    this.#store = options.store;
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
    this.#ttlMs = options.ttlMs ?? 1_000;
  }

  /**
   * The degraded upstreams among the token issuer and the one `kind` is read from (empty when
   * both are fine). A failed read keeps the last answer and is tried again after `ttlMs`.
   */
  async of(kind: EntityKind): Promise<UpstreamName[]> {
    return this.known(kind) ?? (await this.#read(kind));
  }

  /**
   * The answer of `of` when it needs no read (the last one is fresh and none is under way), else
   * undefined: what a poll job asks before each entity costs no promise then.
   */
  known(kind: EntityKind): UpstreamName[] | undefined {
    if (this.#reading || this.#now() - this.#readAt >= this.#ttlMs) return undefined;
    return this.#answer(kind);
  }

  #answer(kind: EntityKind): UpstreamName[] {
    return (['token', upstreamOfKind(kind)] as const).filter((name) => this.#degraded.has(name));
  }

  async #read(kind: EntityKind): Promise<UpstreamName[]> {
    if (!this.#reading && this.#now() - this.#readAt >= this.#ttlMs) {
      this.#reading = this.#refresh().finally(() => {
        this.#reading = undefined;
      });
    }
    // A reading under way is waited for: a job must not take the old answer while it is renewed.
    if (this.#reading) await this.#reading;
    return this.#answer(kind);
  }

  async #refresh(): Promise<void> {
    this.#readAt = this.#now();
    let next: Set<UpstreamName>;
    try {
      const records = await this.#store.read(UPSTREAM_NAMES.map((name) => upstreamRef(name)));
      next = new Set(UPSTREAM_NAMES.filter((_, i) => isAlerting(records[i]?.state)));
    } catch (error) {
      this.#logger?.debug({ err: (error as Error).message }, 'could not read the upstreams’ health');
      return;
    }
    for (const name of next) {
      if (!this.#degraded.has(name))
        this.#logger?.warn(
          { upstream: name },
          'upstream degraded: polling a sample of the entities it serves until it recovers',
        );
    }
    for (const name of this.#degraded) {
      if (!next.has(name))
        this.#logger?.info({ upstream: name }, 'upstream recovered: polling every entity again');
    }
    this.#degraded = next;
  }
}
