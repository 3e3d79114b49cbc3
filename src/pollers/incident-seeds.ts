import type { IncidentKey } from '../events/catalogue.js';
import type { SeedableDetector, SeedIncident } from '../events/detectors/define.js';
import { listElementsDetector } from '../events/detectors/list-elements.js';
import { pollPaceDetector } from '../events/detectors/poll-pace.js';
import { robotCommandQueueDetector } from '../events/detectors/robot-command-queue.js';
import { robotHealthDetector } from '../events/detectors/robot-health.js';
import { upstreamHealthDetector } from '../events/detectors/upstream-health.js';
import { vehicleLinkDetector } from '../events/detectors/vehicle-link.js';
import { vehiclePowerDetector } from '../events/detectors/vehicle-power.js';
import type { IncidentRecord } from '../store/incidents.js';
import type { SnapshotRef, SnapshotStore } from '../store/snapshot-store.js';
import type { SnapshotSeed } from '../store/store-marker.js';
import { listRef } from './list-ref.js';
import { paceRef } from './pace.js';
import type { FacetRef } from './poller.js';
import { POLLERS } from './registry.js';
import { upstreamRef } from './upstream-windows.js';

/**
 * Where each incident key's state lives — the snapshot of the facet whose detector fires it — and
 * that detector, which says how to put an open incident back into its state (`seeds`, next to each
 * detector). After the store was emptied, the replica that announces the loss writes these seeded
 * snapshots, so a facet still bad stays open without firing again and a facet now good resolves
 * with the incident's true duration (store-marker.ts, store-guard.ts).
 */

interface SeedTarget {
  /** The snapshot of the subject's entity (`veh-0003`, `token`). */
  ref(id: string): SnapshotRef;
  detector: Pick<SeedableDetector<unknown, unknown, unknown>, 'seed'>;
}

/** The facet a poller writes (a poller that writes none is a mistake in the table below). */
function facetOf(writes: FacetRef | undefined): (id: string) => SnapshotRef {
  if (!writes) throw new Error('an incident seed names a poller that writes no facet');
  return (id) => ({ kind: writes.kind, id, facet: writes.facet });
}

export const INCIDENT_SEEDS: { readonly [Key in IncidentKey]: SeedTarget } = {
  vpn: { ref: facetOf(POLLERS.vehicles.writes), detector: vehicleLinkDetector },
  reachability: { ref: facetOf(POLLERS.power.writes), detector: vehiclePowerDetector },
  stuck: { ref: facetOf(POLLERS.power.writes), detector: vehiclePowerDetector },
  stale: { ref: facetOf(POLLERS.power.writes), detector: vehiclePowerDetector },
  health: { ref: facetOf(POLLERS.robot_health.writes), detector: robotHealthDetector },
  backlog: { ref: facetOf(POLLERS.robot_command_queue.writes), detector: robotCommandQueueDetector },
  upstream: { ref: upstreamRef, detector: upstreamHealthDetector },
  list: { ref: listRef, detector: listElementsDetector },
  pace: { ref: paceRef, detector: pollPaceDetector },
};

function targetOf(key: string): SeedTarget | undefined {
  return Object.hasOwn(INCIDENT_SEEDS, key) ? INCIDENT_SEEDS[key as IncidentKey] : undefined;
}

function seedIncident(record: IncidentRecord): SeedIncident {
  return { key: record.key, since: Date.parse(record.since), data: record.event.data };
}

/**
 * The snapshots to write for `records` (open incidents): each facet once, with every incident it
 * owns seeded into its stored state (or its initial one), at the latest incident's time (never
 * before the stored reading's), expecting the version read now.
 */
export async function seedSnapshots(
  store: Pick<SnapshotStore, 'read' | 'keyOf'>,
  records: readonly IncidentRecord[],
): Promise<SnapshotSeed[]> {
  const byKey = new Map<string, { ref: SnapshotRef; target: SeedTarget; records: IncidentRecord[] }>();
  for (const record of records) {
    const target = targetOf(record.key);
    if (!target) continue;
    const ref = target.ref(record.subject.slice(record.subject.indexOf('/') + 1));
    const key = store.keyOf(ref);
    const entry = byKey.get(key) ?? { ref, target, records: [] };
    entry.records.push(record);
    byKey.set(key, entry);
  }
  const entries = [...byKey.entries()];
  const stored = await store.read(entries.map(([, entry]) => entry.ref));
  const seeds: SnapshotSeed[] = [];
  entries.forEach(([key, entry], i) => {
    const current = stored[i];
    let state: unknown = current?.state;
    let at = Date.parse(current?.observedAt ?? '');
    for (const record of entry.records) {
      state = entry.target.detector.seed(state, seedIncident(record)) ?? state;
      const changed = Date.parse(record.changedAt);
      if (!(at >= changed)) at = changed;
    }
    if (state === undefined || !Number.isFinite(at)) return;
    seeds.push({ key, expectedVersion: current?.version ?? 0, state, at: new Date(at).toISOString() });
  });
  return seeds;
}
