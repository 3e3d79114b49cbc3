import type { Logger } from 'pino';
import { type IncidentStatus, incidentSource } from '../events/detectors/incident-status.js';
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

/** How far the upstream's `monitor.upstream.degraded` incident is (incident-status.ts), from its snapshot. */
function statusOf(name: UpstreamName, state: unknown): IncidentStatus | undefined {
  return incidentSource(`upstream/${name}`, 'upstream')?.status(state);
}

export class DegradedUpstreams {
  readonly #store: SnapshotStore;
  readonly #logger: Logger | undefined;
  readonly #now: () => number;
  readonly #ttlMs: number;
  #degraded = new Set<UpstreamName>();
  /** Degraded, or not settled either way: a bad streak under way, or a good one while degraded. */
  #unsettled = new Set<UpstreamName>();
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

  #answer(kind: EntityKind, of: ReadonlySet<UpstreamName> = this.#degraded): UpstreamName[] {
    return (['token', upstreamOfKind(kind)] as const).filter((name) => of.has(name));
  }

  /**
   * Like `of`, but also the upstreams not settled either way: a bad streak under way (it may be
   * degraded within a window or two), or a good one while degraded. What an upstream's trouble
   * may explain is not judged meanwhile (the polling pace, runner.ts).
   */
  async unsettled(kind: EntityKind): Promise<UpstreamName[]> {
    await this.of(kind);
    return this.#answer(kind, this.#unsettled);
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
      const statuses = UPSTREAM_NAMES.map((name, i) => statusOf(name, records[i]?.state));
      next = new Set(
        UPSTREAM_NAMES.filter((_, i) => statuses[i] === 'firing' || statuses[i] === 'resolving'),
      );
      this.#unsettled = new Set(
        UPSTREAM_NAMES.filter((_, i) => statuses[i] !== undefined && statuses[i] !== 'clear'),
      );
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
