import type { SnapshotRef } from '../store/snapshot-store.js';
import type { UpstreamName } from '../upstream/names.js';

/** The upstreams that serve a list: the fleet API the vehicles, the robot gateway the robots. */
export const LIST_UPSTREAMS = ['fleet', 'robots'] as const satisfies readonly UpstreamName[];

export type ListUpstream = (typeof LIST_UPSTREAMS)[number];

/**
 * Whether a list is read whole (`monitor.list.unreadable` / `readable`): every read of the list
 * is one observation of how many of its elements are not as the spec says (pollers/list-poll.ts),
 * judged by the `list-elements` detector on the `fleet` ref `list/<upstream>`.
 */
export function listRef(upstream: string): SnapshotRef {
  return { kind: 'fleet', id: 'list', facet: upstream };
}
