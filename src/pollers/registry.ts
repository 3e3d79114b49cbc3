import type { EntityKind } from '../events/types.js';
import { powerPoller } from './power.js';
import { robotCommandQueuePoller } from './robot-command-queue.js';
import { robotConfigPoller } from './robot-config.js';
import { robotFeedbackPoller } from './robot-feedback.js';
import { robotHealthPoller } from './robot-health.js';
import { robotLeasePoller } from './robot-lease.js';
import { robotsPoller } from './robots.js';
import { upstreamPoller } from './upstream.js';
import { vehiclesPoller } from './vehicles.js';

/**
 * The one list of pollers, in the order the scheduler ticks them. Each definition carries its
 * name, its config section and the facet it writes; from this list come the poller names, the
 * `pollers:` config schema (config.ts), the facets of each kind (what a removed entity leaves
 * behind, what the fleet read model reads) and the pollers the daemon schedules. A new poller is
 * one file and one line here.
 */
const DEFINITIONS = [
  vehiclesPoller,
  powerPoller,
  robotsPoller,
  robotHealthPoller,
  robotFeedbackPoller,
  robotLeasePoller,
  robotConfigPoller,
  robotCommandQueuePoller,
  upstreamPoller,
] as const;

type Definition = (typeof DEFINITIONS)[number];

export type PollerName = Definition['name'];

/** The definition of one poller, with its literal types. */
export type PollerOf<Name extends PollerName> = Extract<Definition, { name: Name }>;

/** Every per-entity facet of a kind, as the pollers write it: `'link' | 'power'` for vehicles. */
export type FacetOf<Kind extends EntityKind> = Extract<
  NonNullable<Definition['writes']>,
  { kind: Kind }
>['facet'];

/** Every poller by name; the poll worker dispatches on `job.data.poller`. */
export const POLLERS = Object.fromEntries(DEFINITIONS.map((poller) => [poller.name, poller])) as {
  readonly [Name in PollerName]: PollerOf<Name>;
};

/** Every poller, in the order the scheduler ticks them. */
export const POLLER_NAMES: readonly PollerName[] = DEFINITIONS.map((poller) => poller.name);

export function isPollerName(value: unknown): value is PollerName {
  return typeof value === 'string' && Object.hasOwn(POLLERS, value);
}

function facetsOf<Kind extends EntityKind>(kind: Kind): FacetOf<Kind>[] {
  return DEFINITIONS.flatMap((poller) =>
    poller.writes?.kind === kind ? [poller.writes.facet as FacetOf<Kind>] : [],
  );
}

/** Every per-entity snapshot facet of each kind, in registry order. */
export const ENTITY_FACETS: { readonly [Kind in EntityKind]: readonly FacetOf<Kind>[] } = {
  vehicle: facetsOf('vehicle'),
  robot: facetsOf('robot'),
};
