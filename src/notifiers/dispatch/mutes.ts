import type { Logger } from 'pino';
import type { FleetEvent } from '../../events/types.js';
import { throttledWarn } from '../../queues/connection.js';
import type { TagsFor } from '../routing/entity-tags.js';
import { inMaintenance, type MaintenanceWindow } from '../routing/maintenance.js';
import { type Silence, silencedBy } from '../routing/silences.js';

/**
 * Whether an event is muted right now: silenced by an active silence, or inside a maintenance
 * window. Used by the dispatcher (a muted event keeps its incident bookkeeping but is not
 * notified) and by the flusher (a muted incident's reminder waits). Silences are read from the
 * store at most every `cacheMs` (2 s): a new or expired silence takes effect within that; a
 * silence's own end time is honoured exactly, because the cache holds pending and active silences
 * and each is judged at the time of the check.
 */

export interface Muted {
  reason: 'silenced' | 'maintenance';
  /** The silence id or the maintenance window name. */
  by: string;
}

/** Judges one event at the time the check was made. */
export type MuteCheck = (event: FleetEvent) => Muted | undefined;

export interface SilenceSource {
  /** Pending and active silences. */
  list(options: { now: number }): Promise<Silence[]>;
}

export interface MutesOptions {
  silences?: SilenceSource;
  maintenance?: readonly MaintenanceWindow[];
  tagsFor: TagsFor;
  cacheMs?: number;
  logger?: Logger;
}

export class Mutes {
  readonly #silences: SilenceSource | undefined;
  readonly #maintenance: readonly MaintenanceWindow[];
  readonly #tagsFor: TagsFor;
  readonly #cacheMs: number;
  readonly #warn: ReturnType<typeof throttledWarn>;
  #cached: { at: number; silences: Silence[] } | undefined;
  #loading: Promise<Silence[]> | undefined;

  constructor(options: MutesOptions) {
    this.#silences = options.silences;
    this.#maintenance = options.maintenance ?? [];
    this.#tagsFor = options.tagsFor;
    this.#cacheMs = options.cacheMs ?? 2_000;
    this.#warn = throttledWarn(options.logger);
  }

  /** A check for events at `now`. Rejects only when silences cannot be read and none were read before. */
  async at(now: number): Promise<MuteCheck> {
    const silences = await this.#current(now);
    return (event) => {
      if (silences.length === 0 && this.#maintenance.length === 0) return undefined;
      const tags = this.#tagsFor(event.subject);
      const silence = silencedBy(event, tags, silences, now);
      if (silence) return { reason: 'silenced', by: silence.id };
      const window = inMaintenance(event, tags, this.#maintenance, now);
      return window === undefined ? undefined : { reason: 'maintenance', by: window };
    };
  }

  /** Forgets the cached silences (the next check reads them again). */
  invalidate(): void {
    this.#cached = undefined;
  }

  async #current(now: number): Promise<Silence[]> {
    if (!this.#silences) return [];
    const cached = this.#cached;
    if (cached && Math.abs(now - cached.at) < this.#cacheMs) return cached.silences;
    this.#loading ??= this.#silences.list({ now }).finally(() => {
      this.#loading = undefined;
    });
    try {
      const silences = await this.#loading;
      this.#cached = { at: now, silences };
      return silences;
    } catch (error) {
      if (!cached) throw error;
      this.#warn({ err: (error as Error).message }, 'cannot read silences; using the last ones read');
      return cached.silences;
    }
  }
}
