import type { EntityKind } from '../events/types.js';
import {
  type EntityView,
  FleetReadModel,
  type FleetStore,
  type ListInfo,
  type RobotView,
  type VehicleView,
} from '../fleet/index.js';

/**
 * `/api/vehicles` and `/api/robots` as pages of the fleet read model (src/fleet: what each entity
 * shows and why), sorted by id, with opaque cursors.
 */

export type { RobotView, VehicleView };

export interface FleetPage<T> {
  items: T[];
  /** Pass as `?cursor=` for the next page; null on the last page. */
  nextCursor: string | null;
  /** Known ids of this kind. */
  total: number;
  list: ListInfo;
}

/** Cursors are opaque to clients: the last id of the page, base64url-encoded. */
export function encodeCursor(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): string | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  return id === '' || encodeCursor(id) !== cursor ? undefined : id;
}

/** Reads the fleet of one kind, a page or one entity at a time. */
export class FleetReader {
  readonly #model: FleetReadModel;

  constructor(store: FleetStore) {
    this.#model = new FleetReadModel(store);
  }

  /** One page of the known ids (sorted), after `afterId` when given. */
  async page<Kind extends EntityKind>(
    kind: Kind,
    options: { limit: number; afterId?: string },
  ): Promise<FleetPage<EntityView<Kind>>> {
    const [membership] = await this.#model.memberships([kind]);
    const { known: ids, list } = membership!;
    const start = options.afterId === undefined ? 0 : ids.findIndex((id) => id > options.afterId!);
    const from = start < 0 ? ids.length : start;
    const slice = ids.slice(from, from + options.limit);
    const items = await this.#model.views(kind, slice, membership!);
    const last = slice.at(-1);
    const more = from + slice.length < ids.length;
    return {
      items,
      nextCursor: more && last !== undefined ? encodeCursor(last) : null,
      total: ids.length,
      list,
    };
  }

  /** One known entity, or undefined when the membership snapshot does not know it. */
  async one<Kind extends EntityKind>(kind: Kind, id: string): Promise<EntityView<Kind> | undefined> {
    const [membership] = await this.#model.memberships([kind]);
    if (!membership!.known.includes(id)) return undefined;
    const [view] = await this.#model.views(kind, [id], membership!);
    return view;
  }
}
