import { api } from './api.js';

/**
 * The fleet as the API shows it (`GET /api/vehicles`, `/api/robots`, one of them by id): the
 * fields the console reads, as the README's "HTTP API" describes them. Every reading may be null
 * before fleetwatch first saw it.
 */

export type EntityKind = 'vehicle' | 'robot';

export interface ErrorView {
  signal: string;
  code: string;
  status?: number;
  message: string;
}

export interface Presence {
  status: 'listed' | 'missing';
  missingSince: string | null;
  missedLists: number;
}

/** What every entity's view has. */
export interface EntityBase {
  id: string;
  presence: Presence;
  /** The latest successful observation of any of its facets. */
  lastSeenAt: string | null;
  lastError: ErrorView | null;
}

export interface VehicleView extends EntityBase {
  vpn: {
    connected: boolean | null;
    ipAddress: string | null;
    alerting: boolean;
    disconnectedSince: string | null;
  };
  power: {
    state: string | null;
    pendingCommand: { state: 'on' | 'off'; since: string | null } | null;
    updatedAt: string | null;
    powerCapable: boolean | null;
    stuck: boolean;
    staleSince: string | null;
    reachable: boolean | null;
  };
}

export interface StatusPair {
  status: number | null;
  text: string | null;
}

export interface ConfigPart {
  name: string | null;
  fields: string[] | null;
  hash: string;
}

export interface RobotView extends EntityBase {
  health: { up: boolean | null; alerting: boolean; downSince: string | null };
  autonomy: StatusPair | null;
  navigation: StatusPair | null;
  state: string | null;
  lease: { holderId: string | null } | null;
  config: {
    activeSite: ConfigPart | null;
    loadedRoute: ConfigPart | null;
    loadedZoneSet: ConfigPart | null;
  };
  commandQueue: { length: number | null; backlogSince: string | null };
}

export type EntityView<Kind extends EntityKind> = Kind extends 'vehicle' ? VehicleView : RobotView;

/** An element of the latest list that is not as the spec says. */
export interface RejectedElement {
  index: number;
  id: string | null;
  code: string;
  message: string;
}

/** The list itself, as of its latest read: when it answered, its failure, its elements not as the spec says. */
export interface ListView {
  lastSeenAt: string | null;
  lastError: ErrorView | null;
  rejected: { count: number; elements: RejectedElement[] };
}

export interface FleetPage<T> {
  items: T[];
  nextCursor: string | null;
  total: number;
  list: ListView;
}

/** The API's largest page (`?limit=`, README "HTTP API"). */
export const FLEET_PAGE_LIMIT = 1_000;

export const fleetPath = (kind: EntityKind): string => (kind === 'vehicle' ? '/api/vehicles' : '/api/robots');

export function entityPath(kind: EntityKind, id: string): string {
  return `${fleetPath(kind)}/${encodeURIComponent(id)}`;
}

/**
 * Every entity of a kind, page after page (the API's cursor), each page handed to `onPage` as it
 * arrives so that a page shows rows long before the last of 40,000 came.
 */
export async function loadFleet<Kind extends EntityKind>(
  kind: Kind,
  onPage: (items: EntityView<Kind>[], loaded: number, total: number, list: ListView) => void,
  signal: AbortSignal,
): Promise<void> {
  let cursor: string | undefined;
  let loaded = 0;
  do {
    const page = await api<FleetPage<EntityView<Kind>>>(fleetPath(kind), {
      query: { limit: FLEET_PAGE_LIMIT, cursor },
      signal,
    });
    loaded += page.items.length;
    onPage(page.items, loaded, page.total, page.list);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && !signal.aborted);
}

/** `vehicle/veh-0001` → the kind and the id, when it names an entity. */
export function parseSubject(subject: string): { kind: EntityKind; id: string } | undefined {
  const slash = subject.indexOf('/');
  const kind = subject.slice(0, slash);
  if (slash < 0 || (kind !== 'vehicle' && kind !== 'robot')) return undefined;
  return { kind, id: subject.slice(slash + 1) };
}
