import { EVENT } from '../events/catalogue.js';
import type { EntityKind, FleetEvent } from '../events/types.js';
import type { SnapshotRef } from '../store/snapshot-store.js';
import type { PollContext } from './poller.js';

const REMOVED: Readonly<Record<EntityKind, string>> = {
  vehicle: EVENT.vehicleRemoved,
  robot: EVENT.robotRemoved,
};

/**
 * Deletes the snapshots of the entities a membership commit just removed, so a fleet that churns
 * does not leave Redis holding every vehicle it ever saw. Runs after the `*.removed` event is
 * committed: a replica that dies in between leaves the snapshots behind, which costs memory and
 * nothing else. An entity that comes back starts from a silent baseline, like a new one. A
 * failure is logged, never thrown: the removal itself has happened.
 */
export async function forgetRemoved(
  ctx: PollContext,
  kind: EntityKind,
  events: readonly FleetEvent[],
): Promise<void> {
  const prefix = `${kind}/`;
  const ids = events
    .filter((event) => event.type === REMOVED[kind] && event.subject.startsWith(prefix))
    .map((event) => event.subject.slice(prefix.length));
  if (ids.length === 0) return;
  const facets = ctx.entityFacets[kind];
  const refs: SnapshotRef[] = ids.flatMap((id) => facets.map((facet) => ({ kind, id, facet })));
  try {
    await ctx.store.forget(refs);
    ctx.logger.debug({ kind, ids }, 'forgot the snapshots of removed entities');
  } catch (error) {
    ctx.logger.warn(
      { kind, count: ids.length, err: (error as Error).message },
      'could not delete the snapshots of removed entities; they stay until deleted by hand',
    );
  }
}
