import type { Logger } from 'pino';
import type { FleetEvent } from '../events/types.js';
import { throttledWarn } from '../lib/redis-connection.js';
import {
  applyIncidentOps,
  type IncidentOp,
  type IncidentRecord,
  type IncidentStore,
  incidentOps,
  type OpenIncidentCopy,
  openIncidentCopy,
} from '../store/incidents.js';
import type { IncidentsMoved, SnapshotStore, StoreGuard } from '../store/snapshot-store.js';
import { type Marker, newEpoch, type StoreMarker } from '../store/store-marker.js';
import { seedSnapshots } from './incident-seeds.js';

/**
 * What a replica does about its store being emptied (store-marker.ts has the marker and the one
 * atomic reset). The guard knows the marker's epoch and keeps an in-memory copy of the open
 * incidents, read again whenever another writer moved their revision (checked every `refreshMs`,
 * 2 s, and soon after a commit of this process it could not follow; its own commits, and the poll
 * thread's for the daemon's guard, it follows without a read). Every commit of the snapshot store
 * names the epoch; when the marker is gone or another (the store was emptied), the commit is
 * refused and `lost` runs:
 *
 * - marker gone: this replica claims the loss. It writes a new marker, ONE `monitor.store.reset`
 *   and its copy of the open incidents, in the incident records and seeded into the facet
 *   snapshots (incident-seeds.ts), in one Lua call. Of several replicas one wins; the others find
 *   the new marker.
 * - a new marker that replaced the known one: another replica claimed the loss; adopt it, and carry
 *   over (without another event) the open incidents this replica knew that are not open again —
 *   those the announcing replica had not read yet.
 * - a new marker that replaced nothing (a replica started on the emptied store and wrote it): claim
 *   the loss on it, carrying over the incidents not open again already.
 *
 * Each of these logs an error once. The periodic read notices a loss too, so it is announced within
 * `refreshMs` even when nothing commits. Lists (membership) need nothing: their snapshot is gone,
 * so their next observation is a silent baseline, like every facet's without an open incident.
 *
 * A replica's own commits change its copy at once. What the copy misses: an incident opened in the
 * last `refreshMs` before the loss by another replica fires again once its threshold is met; one
 * closed in that time resolves again.
 */

export interface StoreLossGuardOptions {
  marker: StoreMarker;
  incidents: IncidentStore;
  /** Reads facet snapshots to seed (reads are not guarded). */
  snapshots: Pick<SnapshotStore, 'read' | 'keyOf'>;
  logger?: Logger;
  now?: () => number;
  /** How often the open incidents and the marker are read; 2 s by default. */
  refreshMs?: number;
  /** Told the `monitor.store.reset` this replica wrote, as commits tell theirs (`fleetwatch_events_total`). */
  onEvent?: (events: readonly FleetEvent[]) => void;
  /**
   * Told every change of this process's commits to the open incidents, after the copy took it: the
   * poll thread tells the daemon's guard, whose copy then follows them too (poll-thread.ts).
   */
  onIncidentsChanged?: (events: readonly FleetEvent[], moved: IncidentsMoved | undefined) => void;
}

const SETTLE_TRIES = 5;

/**
 * The revision the copy stands at after a commit it knows the changes of (this process's, or its
 * poll thread's) moved shard `shard` to `revision`: when the copy stood at the revision just
 * before it, nobody else changed the open incidents in between, and the copy with the commit's
 * changes applied is current. Otherwise the revision held stays, and the next read finds it moved
 * and reads the records again. Without this, every commit that opened or closed an incident made
 * the next read fetch every open incident of the fleet (at 40,000 entities, 3,300 records several
 * times a second).
 */
export function followedRevision(held: string, shard: number, revision: number): string {
  const parts = held.split('.');
  const before = parts[shard];
  if (before === undefined || !/^\d+$/.test(before) || Number(before) + 1 !== revision) return held;
  parts[shard] = String(revision);
  return parts.join('.');
}

export class StoreLossGuard implements StoreGuard {
  readonly #marker: StoreMarker;
  readonly #incidents: IncidentStore;
  readonly #snapshots: Pick<SnapshotStore, 'read' | 'keyOf'>;
  readonly #logger: Logger | undefined;
  readonly #now: () => number;
  readonly #refreshMs: number;
  readonly #warn: ReturnType<typeof throttledWarn>;
  readonly #onEvent: (events: readonly FleetEvent[]) => void;
  readonly #onIncidentsChanged: StoreLossGuardOptions['onIncidentsChanged'];
  #known: Marker | undefined;
  /** When the known marker was last seen in the store (epoch ms). */
  #seenAt = 0;
  #copy: OpenIncidentCopy = new Map();
  /** This process's own changes since the read under way began: applied on top of what it reads. */
  #changedDuringRead: IncidentOp[] | undefined;
  /**
   * The revisions those changes moved to: followed again from the revision the read returns, so
   * that the changes a read overlapped do not make the next read fetch every record.
   */
  #movedDuringRead: IncidentsMoved[] | undefined;
  #revision = '';
  #establishing: Promise<string> | undefined;
  #settling: Promise<void> | undefined;
  #refreshing: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #soon: NodeJS.Timeout | undefined;
  #running = false;

  constructor(options: StoreLossGuardOptions) {
    this.#marker = options.marker;
    this.#incidents = options.incidents;
    this.#snapshots = options.snapshots;
    this.#logger = options.logger?.child({ component: 'store-guard' });
    this.#now = options.now ?? Date.now;
    this.#refreshMs = Math.max(100, options.refreshMs ?? 2_000);
    this.#warn = throttledWarn(this.#logger);
    this.#onEvent = options.onEvent ?? (() => {});
    this.#onIncidentsChanged = options.onIncidentsChanged;
  }

  /** The open incidents as last read (a copy of the store's). */
  get openIncidents(): readonly IncidentRecord[] {
    return [...this.#copy.values()];
  }

  /** The marker this process knows, if it knows one yet. */
  get marker(): Marker | undefined {
    return this.#known;
  }

  /** Reads the marker and the open incidents now, then every `refreshMs`. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#schedule(0);
  }

  async stop(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#timer);
    clearTimeout(this.#soon);
    this.#timer = undefined;
    this.#soon = undefined;
    await this.#refreshing;
    await this.#settling?.catch(() => {});
  }

  epoch(): Promise<string> {
    if (this.#known) return Promise.resolve(this.#known.epoch);
    this.#establishing ??= this.#establish().finally(() => {
      this.#establishing = undefined;
    });
    return this.#establishing;
  }

  lost(): Promise<void> {
    this.#settling ??= this.#settle().finally(() => {
      this.#settling = undefined;
    });
    return this.#settling;
  }

  /**
   * A commit of this process changed the open incidents: the copy takes the changes at once and,
   * when `moved` is the only change since its revision, follows the revision. When it cannot
   * (another writer moved it too), the records are read again soon rather than at the next period.
   */
  incidentsChanged(events: readonly FleetEvent[], moved?: IncidentsMoved): void {
    const followed = this.#take(events, moved);
    this.#onIncidentsChanged?.(events, moved);
    if (followed || !this.#running || this.#soon) return;
    this.#soon = setTimeout(() => {
      this.#soon = undefined;
      void this.refresh();
    }, 50);
  }

  /**
   * A commit of the daemon's poll thread changed the open incidents (the thread tells the daemon):
   * taken as the daemon's own, but never a reason to read sooner than the period.
   */
  threadChanged(events: readonly FleetEvent[], moved: IncidentsMoved | undefined): void {
    this.#take(events, moved);
  }

  /** Applies a commit's changes to the copy; whether the copy now stands at the revision it moved to. */
  #take(events: readonly FleetEvent[], moved: IncidentsMoved | undefined): boolean {
    // At once, so that a loss right after this commit still carries it over.
    const ops = incidentOps(events);
    applyIncidentOps(this.#copy, ops);
    this.#changedDuringRead?.push(...ops);
    if (!moved) return false;
    this.#movedDuringRead?.push(moved);
    return this.#follow(moved);
  }

  #follow(moved: IncidentsMoved): boolean {
    const held = this.#revision;
    this.#revision = followedRevision(held, moved.shard, moved.revision);
    if (this.#revision === held) return false;
    this.#logger?.debug({ open: this.#copy.size, revision: this.#revision }, 'open incidents followed');
    return true;
  }

  /** Reads the open incidents if they changed, and notices a lost marker. */
  refresh(): Promise<void> {
    this.#refreshing ??= this.#refresh().finally(() => {
      this.#refreshing = undefined;
    });
    return this.#refreshing;
  }

  async #refresh(): Promise<void> {
    const changed: IncidentOp[] = [];
    const moves: IncidentsMoved[] = [];
    this.#changedDuringRead = changed;
    this.#movedDuringRead = moves;
    try {
      await this.epoch();
      const read = await this.#incidents.readOpen(this.#revision);
      if (read.epoch !== this.#known?.epoch) {
        await this.lost();
        return;
      }
      this.#seenAt = this.#now();
      this.#revision = read.revision;
      if (read.records) {
        this.#copy = applyIncidentOps(openIncidentCopy(read.records), changed);
        this.#logger?.debug({ open: read.records.length, revision: read.revision }, 'open incidents read');
      }
      // The changes applied over the read, in the order they moved the revision.
      for (const moved of moves.sort((a, b) => a.revision - b.revision)) this.#follow(moved);
    } catch (error) {
      this.#warn(
        { err: (error as Error).message },
        'cannot read the store marker and open incidents; retrying',
      );
    } finally {
      this.#changedDuringRead = undefined;
      this.#movedDuringRead = undefined;
    }
  }

  async #establish(): Promise<string> {
    const marker = await this.#marker.establish(this.#now());
    this.#adopt(marker);
    this.#logger?.debug({ epoch: marker.epoch, createdAt: marker.createdAt }, 'store marker');
    return marker.epoch;
  }

  #adopt(marker: Marker): void {
    this.#known = marker;
    this.#seenAt = this.#now();
    // Read the incidents again: the copy belongs to the marker it was read with.
    this.#revision = '';
  }

  async #settle(): Promise<void> {
    for (let attempt = 0; attempt < SETTLE_TRIES; attempt += 1) {
      const known = this.#known;
      if (!known) {
        await this.epoch();
        return;
      }
      const found = await this.#marker.read();
      // With shards, the known marker with a shard's copy gone: that shard's data was lost.
      const damaged = found?.epoch === known.epoch && found.damaged === true;
      if (found?.epoch === known.epoch && !damaged) return;
      const announced = !damaged && found !== undefined && found.replaced !== '';
      if (announced && found.replaced !== known.epoch) {
        // Not the loss of the marker this replica knew: nothing of its own to carry over.
        this.#adopt(found);
        this.#logger?.error(
          { lostEpoch: known.epoch, epoch: found.epoch, replaced: found.replaced },
          'the Redis store was emptied; another replica announced it (monitor.store.reset)',
        );
        return;
      }
      const open = found ? await this.#incidents.open() : [];
      const reopened = new Set(open.map((record) => `${record.subject}#${record.key}`));
      const carry = this.openIncidents.filter((record) => !reopened.has(`${record.subject}#${record.key}`));
      if (announced && carry.length === 0) {
        this.#adopt(found);
        this.#logger?.error(
          { lostEpoch: known.epoch, epoch: found.epoch },
          'the Redis store was emptied; another replica announced it (monitor.store.reset) and carried the open incidents over',
        );
        return;
      }
      const now = this.#now();
      const lastSeenAt = new Date(this.#seenAt).toISOString();
      const epoch = found && !damaged ? found.epoch : newEpoch();
      const outcome = await this.#marker.reset({
        expect: damaged ? 'damaged' : found ? (announced ? 'carry' : 'fresh') : 'absent',
        epoch,
        lost: known.epoch,
        lastSeenAt,
        at: new Date(now).toISOString(),
        incidents: carry,
        snapshots: await seedSnapshots(this.#snapshots, carry),
      });
      if (outcome.kind === 'done') {
        this.#adopt(
          found && !damaged
            ? found
            : { epoch, createdAt: new Date(now).toISOString(), replaced: known.epoch },
        );
        const fields = { lostEpoch: known.epoch, epoch, carriedOver: outcome.carried, lastSeenAt };
        if (outcome.event) {
          this.#onEvent([outcome.event]);
          this.#logger?.error(
            { ...fields, event: outcome.event.id },
            'the Redis store was emptied (restarted without persistence, flushed, or failed over to an empty replica): queued notifications, aggregation groups, silences and dead letters are gone; the open incidents were carried over without being announced again and the fleet is re-baselined silently (monitor.store.reset)',
          );
        } else {
          this.#logger?.error(
            fields,
            'the Redis store was emptied; another replica announced it (monitor.store.reset) and carried the open incidents over, this one the ones it alone knew',
          );
        }
        return;
      }
      // Taken (someone else's marker) or a seeded snapshot moved: look again.
    }
    throw new Error(
      `could not settle the store marker after ${SETTLE_TRIES} tries (too many writers at once)`,
    );
  }

  #schedule(delayMs: number): void {
    if (!this.#running) return;
    this.#timer = setTimeout(() => {
      void this.refresh().finally(() => this.#schedule(this.#refreshMs));
    }, delayMs);
  }
}
