import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { EntityKind } from '../../events/types.js';
import type { RouteContext } from '../context.js';
import { notFound } from '../errors.js';
import { decodeCursor, FleetReader } from '../fleet-view.js';
import { parse, pathId, queryInt, rejectRequest } from '../validate.js';

/**
 * `GET /api/vehicles`, `GET /api/robots`: the fleet as fleetwatch last observed it (snapshots in
 * Redis; the upstream is not asked), sorted by id, paged with `?limit=` (default 100, at most 1000)
 * and `?cursor=` (the previous page's `nextCursor`). `GET /api/vehicles/{id}`, `GET
 * /api/robots/{id}`: one, 404 when the membership snapshot does not know the id. See src/fleet
 * for the shape.
 */

const pageQuery = z.strictObject({
  limit: queryInt(1, 1_000).optional(),
  cursor: z.string().optional(),
});

const idParams = z.object({ id: pathId });

export function registerFleetRoutes(app: FastifyInstance, context: RouteContext): void {
  const reader = new FleetReader(context.options.store);

  const routes: Array<{ kind: EntityKind; path: string; noun: string }> = [
    { kind: 'vehicle', path: '/api/vehicles', noun: 'vehicle' },
    { kind: 'robot', path: '/api/robots', noun: 'robot' },
  ];

  for (const { kind, path, noun } of routes) {
    app.get(
      path,
      {
        config: {
          access: 'read',
          doc: {
            summary: `The ${noun}s as fleetwatch last observed them`,
            description: `From the snapshots (the fleet service is not asked), sorted by id, paged with \`limit\` and \`cursor\` (the previous page's \`nextCursor\`).`,
            tag: 'Fleet',
            query: pageQuery,
            responses: { 200: `\`{items, nextCursor, total, list}\`: a page of ${noun}s` },
          },
        },
      },
      async (request) => {
        const query = parse(pageQuery, request.query, 'query');
        let afterId: string | undefined;
        if (query.cursor !== undefined) {
          afterId = decodeCursor(query.cursor);
          if (afterId === undefined) {
            rejectRequest([
              'query.cursor: is not a cursor this API returned (use nextCursor of the previous page)',
            ]);
          }
        }
        return reader.page(kind, {
          limit: query.limit ?? 100,
          ...(afterId === undefined ? {} : { afterId }),
        });
      },
    );

    app.get(
      `${path}/:id`,
      {
        config: {
          access: 'read',
          doc: {
            summary: `One ${noun} as fleetwatch last observed it`,
            tag: 'Fleet',
            params: idParams,
            responses: { 200: `The ${noun}`, 404: `fleetwatch knows no such ${noun}` },
          },
        },
      },
      async (request) => {
        const { id } = parse(idParams, request.params, 'params');
        const view = await reader.one(kind, id);
        if (!view) {
          throw notFound(`fleetwatch knows no ${noun} "${id}" (GET ${path} lists the ones it has seen)`);
        }
        return view;
      },
    );
  }
}
