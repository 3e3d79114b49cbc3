import type { Logger } from 'pino';
import { catalogueEntry, isFleetEventType } from '../../events/catalogue.js';
import { coversTime, type IncidentSource, incidentSource } from '../../events/detectors/incident-status.js';
import type { FleetEvent } from '../../events/types.js';
import { throttledWarn } from '../../lib/redis-connection.js';
import type { SnapshotRecord, SnapshotRef } from '../../store/snapshot-store.js';
import type { TagsFor } from '../routing/entity-tags.js';
import { incidentOf } from '../routing/labels.js';
import type { IncidentRecord } from './firing-incidents.js';
import { candidateSources, Inhibition, type InhibitRule } from './inhibition.js';
import { inMaintenance, type MaintenanceWindow } from './maintenance.js';
import type { Muted } from './muted.js';
import { type Silence, silencedBy } from './silences.js';

export type { Muted } from './muted.js';

/**
 * Whether an event is muted right now — silenced by an active silence, inside a maintenance
 * window, or inhibited by a firing incident (inhibition.ts) — and, for the flusher, whether it
 * must wait to know. The one muting mechanism: the dispatcher (a muted event keeps its incident
 * bookkeeping but is not notified), the flusher (mute at flush, waiting events, and a muted
 * incident's announcement once it is no longer muted) and anyone who asks "muted by what?" of an
 * event or an incident's latest event use it.
 *
 * Silences and the recorded incidents are read from Redis at most every `cacheMs` (2 s): a new
 * silence, or an incident that fired on another replica, takes effect within that (the wait below
 * covers the gap for inhibition). A check past half the reading's life starts the next read in the
 * background, so checks that keep coming do not wait for one; a silence's own end time is honoured exactly, because the cache
 * holds pending and active silences and each is judged at the time of the check.
 *
 * The wait (`judge`): a target event an inhibition rule could mute is not sent until the rule's
 * source side is known for the event's time — until the snapshot that would hold the source
 * incident (`incidentSource`: the upstream's counting window, the vehicle's link, …) has been
 * observed at or after that time and no bad streak is under way there — or until `maxWaitMs` after
 * the event's time (twice that while a bad streak of the source is still under way then). A
 * source snapshot never observed at all makes nothing wait (its poller is off). A snapshot that shows the source firing inhibits at once, even before the source's event
 * has reached the recorded incidents. So a target whose source is raised after the target's own
 * flush time is still inhibited (Alertmanager #2229). Likewise an incident opened muted whose
 * source has resolved is announced only once its own snapshot, observed after the source
 * resolved, says it still fires (it is not on its way to resolving), or `maxWaitMs` after the
 * source resolved. Guarantee 11.
 */

/** Judges one event at the time the check was made. `covering`: see `InhibitionQuestion`. */
export type MuteCheck = (event: FleetEvent, question?: { covering?: boolean }) => Muted | undefined;

export interface SilenceSource {
  /** Pending and active silences. */
  list(options: { now: number }): Promise<Silence[]>;
}

export interface IncidentSourceList {
  /** Incidents firing, and resolved ones still kept (see `FiringIncidents`). */
  list(now: number): Promise<readonly IncidentRecord[]>;
}

export type SnapshotReader = { read(refs: readonly SnapshotRef[]): Promise<SnapshotRecord[]> };

export interface InhibitionOptions {
  rules: readonly InhibitRule[];
  incidents: IncidentSourceList;
  /** The snapshots the wait reads; without it, nothing waits. */
  snapshots?: SnapshotReader;
  /** How long an event may wait; 0: never. */
  maxWaitMs: number;
}

export interface MutesOptions {
  silences?: SilenceSource;
  maintenance?: readonly MaintenanceWindow[];
  inhibition?: InhibitionOptions;
  tagsFor: TagsFor;
  cacheMs?: number;
  logger?: Logger;
}

/** What the flusher needs to know about one event. */
export interface Verdict {
  muted?: Muted;
  /** Not known yet: look again soon (until the bounded wait ends). */
  waits?: true;
}

/**
 * The flusher's view of a group's events at one moment: `toSend` for a pending event about to be
 * flushed (muted when a source fires or fired over its time), `toAnnounce` for an incident opened
 * muted that would be announced now (muted while a source fires). An event not judged (it arrived
 * after the judgement was made) waits, to be judged at the next look.
 */
export interface Judgement {
  toSend(event: FleetEvent): Verdict;
  toAnnounce(event: FleetEvent): Verdict;
}

interface Loaded {
  at: number;
  silences: Silence[];
  /** The rules with the incidents read (labelled once per read, not once per check). */
  inhibition: Inhibition | undefined;
}

interface Observed {
  source: IncidentSource;
  record: SnapshotRecord | undefined;
}

/** Everything one judgement reads, once, for all its events. */
interface Scene {
  now: number;
  check: MuteCheck;
  inhibition: Inhibition;
  observed: Map<string, Observed>;
  options: InhibitionOptions;
}

function timeOf(iso: string | undefined): number {
  return iso === undefined ? Number.NaN : Date.parse(iso);
}

/** When the snapshot was last observed (committed or polled without a change); NaN if never. */
function observedMs(record: SnapshotRecord | undefined): number {
  const times = [timeOf(record?.observedAt), timeOf(record?.lastPolledAt)].filter(Number.isFinite);
  return times.length === 0 ? Number.NaN : Math.max(...times);
}

function refKey(ref: SnapshotRef): string {
  return `${ref.kind}\n${ref.id}\n${ref.facet}`;
}

export class Mutes {
  readonly #silences: SilenceSource | undefined;
  readonly #maintenance: readonly MaintenanceWindow[];
  readonly #inhibition: InhibitionOptions | undefined;
  readonly #tagsFor: TagsFor;
  readonly #cacheMs: number;
  readonly #warn: ReturnType<typeof throttledWarn>;
  #cached: Loaded | undefined;
  #loading: Promise<Loaded> | undefined;

  constructor(options: MutesOptions) {
    this.#silences = options.silences;
    this.#maintenance = options.maintenance ?? [];
    this.#inhibition = options.inhibition?.rules.length ? options.inhibition : undefined;
    this.#tagsFor = options.tagsFor;
    this.#cacheMs = options.cacheMs ?? 2_000;
    this.#warn = throttledWarn(options.logger);
  }

  /** A check for events at `now`. Rejects only when silences cannot be read and none were read before. */
  async at(now: number): Promise<MuteCheck> {
    const { check } = await this.#checkAt(now);
    return check;
  }

  /** Judges `events` for the flusher at `now` (see `Judgement`); reads the snapshots the wait needs. */
  async judge(events: readonly FleetEvent[], now: number): Promise<Judgement> {
    const { check, inhibition } = await this.#checkAt(now);
    const options = this.#inhibition;
    if (!options || !inhibition) {
      const verdict = (event: FleetEvent): Verdict => {
        const muted = check(event);
        return muted ? { muted } : {};
      };
      return { toSend: verdict, toAnnounce: verdict };
    }
    const scene: Scene = {
      now,
      check,
      inhibition,
      options,
      observed: await this.#observe(events, inhibition, options),
    };
    const judged = new Map<string, { send: Verdict; announce: Verdict }>();
    for (const event of events) {
      judged.set(event.id, { send: this.#toSend(event, scene), announce: this.#toAnnounce(event, scene) });
    }
    return {
      toSend: (event) => judged.get(event.id)?.send ?? { waits: true },
      toAnnounce: (event) => judged.get(event.id)?.announce ?? { waits: true },
    };
  }

  /** Forgets the cached silences and incidents (the next check reads them again). */
  invalidate(): void {
    this.#cached = undefined;
  }

  async #checkAt(now: number): Promise<{ check: MuteCheck; inhibition: Inhibition | undefined }> {
    const { silences, inhibition } = await this.#current(now);
    const check: MuteCheck = (event, question) => {
      if (silences.length === 0 && this.#maintenance.length === 0 && !inhibition) return undefined;
      const tags = this.#tagsFor(event.subject);
      const silence = silencedBy(event, tags, silences, now);
      if (silence) return { reason: 'silenced', by: silence.id };
      const window = inMaintenance(event, tags, this.#maintenance, now);
      if (window !== undefined) return { reason: 'maintenance', by: window };
      return inhibition?.check(event, { covering: question?.covering === true });
    };
    return { check, inhibition };
  }

  /** The snapshots of every candidate source of the events, and of their own incidents: one read. */
  async #observe(
    events: readonly FleetEvent[],
    inhibition: Inhibition,
    options: InhibitionOptions,
  ): Promise<Map<string, Observed>> {
    const wanted = new Map<string, IncidentSource>();
    const want = (subject: string, key: string | undefined) => {
      const source = key === undefined ? undefined : incidentSource(subject, key);
      if (source) wanted.set(`${subject}#${key}`, source);
    };
    for (const event of events) {
      const rules = inhibition.rulesFor(event);
      if (rules.length === 0) continue;
      want(event.subject, incidentOf(event.type)?.key);
      for (const rule of rules)
        for (const candidate of candidateSources(rule, event)) want(candidate.subject, candidate.key);
    }
    const observed = new Map<string, Observed>();
    if (wanted.size === 0 || !options.snapshots) return observed;
    const byRef = new Map<string, SnapshotRef>();
    for (const source of wanted.values()) byRef.set(refKey(source.ref), source.ref);
    const refs = [...byRef.values()];
    const records = await options.snapshots.read(refs);
    const recordOf = new Map(refs.map((ref, i) => [refKey(ref), records[i]]));
    for (const [id, source] of wanted) observed.set(id, { source, record: recordOf.get(refKey(source.ref)) });
    return observed;
  }

  /** Incidents a snapshot shows open, before (or without) their event among the recorded ones. */
  #snapshotSources(
    event: FleetEvent,
    inhibition: Inhibition,
    observed: Map<string, Observed>,
  ): IncidentRecord[] {
    const out: IncidentRecord[] = [];
    for (const rule of inhibition.rulesFor(event)) {
      for (const candidate of candidateSources(rule, event)) {
        const seen = observed.get(`${candidate.subject}#${candidate.key}`);
        if (!seen?.record) continue;
        const status = seen.source.status(seen.record.state);
        if (status !== 'firing' && status !== 'resolving') continue;
        const at = observedMs(seen.record);
        out.push({
          subject: candidate.subject,
          key: candidate.key,
          type: candidate.type,
          severity: isFleetEventType(candidate.type) ? catalogueEntry(candidate.type).severity : 'info',
          firing: true,
          since: at,
          at,
        });
      }
    }
    return out;
  }

  /** Muted by what the recorded state says, or by a source only its snapshot shows open yet. */
  #mutedIn(event: FleetEvent, scene: Scene, covering: boolean): Muted | undefined {
    const muted = scene.check(event, { covering });
    if (muted) return muted;
    const open = this.#snapshotSources(event, scene.inhibition, scene.observed);
    return open.length > 0 ? scene.inhibition.check(event, { covering }, open) : undefined;
  }

  #toSend(event: FleetEvent, scene: Scene): Verdict {
    const { now, inhibition, observed, options } = scene;
    const muted = this.#mutedIn(event, scene, true);
    if (muted) return { muted };
    const stamped = Date.parse(event.time);
    if (!options.snapshots || !Number.isFinite(stamped)) return {};
    // A source still deciding (a bad streak under way) when the wait ends gets one more
    // `maxWaitMs`: a gateway failing in the middle of a poll round leaves one mixed window, so the
    // upstream fires a window later than the robots the round failed.
    const waited = now - stamped;
    if (waited >= 2 * options.maxWaitMs) return {};
    // An event stamped at the end of a counting window (an upstream's) is about the time before it.
    const ownKey = incidentOf(event.type)?.key;
    const time =
      ownKey !== undefined && incidentSource(event.subject, ownKey)?.windowEnd ? stamped - 1 : stamped;
    for (const rule of inhibition.rulesFor(event)) {
      for (const candidate of candidateSources(rule, event)) {
        const seen = observed.get(`${candidate.subject}#${candidate.key}`);
        // Never observed: nothing watches that source (its poller is off), so nothing will come.
        if (!seen || !Number.isFinite(observedMs(seen.record))) continue;
        const status = seen.source.status(seen.record?.state);
        const known =
          coversTime(seen.source, observedMs(seen.record), time) &&
          status !== undefined &&
          status !== 'pending';
        if (!known && (waited < options.maxWaitMs || status === 'pending')) return { waits: true };
      }
    }
    return {};
  }

  #toAnnounce(event: FleetEvent, scene: Scene): Verdict {
    const { now, inhibition, observed, options } = scene;
    const muted = this.#mutedIn(event, scene, false);
    if (muted) return { muted };
    const own = observed.get(`${event.subject}#${incidentOf(event.type)?.key}`);
    const time = Date.parse(event.time);
    if (!options.snapshots || !own || !Number.isFinite(time)) return {};
    // A source that resolved after this incident began: wait until the incident's own snapshot,
    // observed since, says it still fires.
    for (const rule of inhibition.rulesFor(event)) {
      for (const candidate of candidateSources(rule, event)) {
        const resolved = inhibition.recorded(rule, candidate.subject, candidate.key);
        if (!resolved || resolved.firing || resolved.at < time || now >= resolved.at + options.maxWaitMs)
          continue;
        const settled =
          coversTime(own.source, observedMs(own.record), resolved.at) &&
          own.source.status(own.record?.state) === 'firing';
        if (!settled) return { waits: true };
      }
    }
    return {};
  }

  async #current(now: number): Promise<Loaded> {
    if (!this.#silences && !this.#inhibition) return { at: now, silences: [], inhibition: undefined };
    const cached = this.#cached;
    const age = cached ? Math.abs(now - cached.at) : Number.POSITIVE_INFINITY;
    if (cached && age < this.#cacheMs) {
      // Past half its life, the next reading starts in the background: while checks keep coming,
      // none waits for a read (on a large fleet the incidents' read takes tens of milliseconds),
      // and what is used is still never older than `cacheMs`.
      if (age >= this.#cacheMs / 2) this.#reading(now).catch(() => undefined);
      return cached;
    }
    try {
      return await this.#reading(now);
    } catch (error) {
      if (!cached) throw error;
      this.#warn(
        { err: (error as Error).message },
        'cannot read silences or incidents; using the last ones read',
      );
      return cached;
    }
  }

  /** The read under way, or a new one from `now`; the cache takes what it read. */
  #reading(now: number): Promise<Loaded> {
    this.#loading ??= this.#load(now)
      .then((loaded) => {
        this.#cached = loaded;
        return loaded;
      })
      .finally(() => {
        this.#loading = undefined;
      });
    return this.#loading;
  }

  async #load(now: number): Promise<Loaded> {
    const [silences, incidents] = await Promise.all([
      this.#silences?.list({ now }) ?? [],
      this.#inhibition?.incidents.list(now) ?? [],
    ]);
    // The last reading again when the incidents did not change (the same array); else the last
    // reading's index brought up to date by the records that came and went.
    const previous = this.#cached?.inhibition;
    const options = this.#inhibition;
    const inhibition = !options
      ? undefined
      : previous?.builtFrom(options.rules, this.#tagsFor, incidents)
        ? previous
        : new Inhibition(options.rules, this.#tagsFor, incidents, previous);
    return { at: now, silences, inhibition };
  }
}
