import type { FastifyInstance } from 'fastify';
import { VERSION } from '../../version.js';
import type { RouteContext } from '../context.js';
import { isPreflightRoute } from '../cors.js';
import { renderDocsPage } from '../docs-page.js';
import { buildOpenApi } from '../openapi.js';
import { RouteDocs } from '../route-doc.js';
import { QUEUE_UI_DOC, QUEUE_UI_PATH } from './queues.js';

/**
 * `GET /openapi.json` (the OpenAPI 3.1 document of every route this server registers) and `GET
 * /docs` (the same as a readable page), both open. The document is built once, when the server is
 * ready (every route is registered by then), and served as it was built.
 */

/** Starts collecting the routes: called before any route is registered. */
export function collectRouteDocs(app: FastifyInstance): RouteDocs {
  const docs = new RouteDocs([{ prefix: QUEUE_UI_PATH, access: 'admin', doc: QUEUE_UI_DOC }]);
  // The CORS preflight route (cors.ts) answers for every path; it is no operation of the API.
  app.addHook('onRoute', (route) => {
    if (!isPreflightRoute(route.method, route.url)) docs.add(route);
  });
  return docs;
}

export function registerDocRoutes(app: FastifyInstance, context: RouteContext, docs: RouteDocs): void {
  // Built at the first request, when every route is registered: the page is about half a
  // megabyte of text that most replicas are never asked for.
  let built: { json: string; page: string } | undefined;
  const build = () => {
    if (!built) {
      const document = buildOpenApi(docs.routes, {
        version: VERSION,
        installation: context.options.config.installation,
      });
      built = { json: JSON.stringify(document), page: renderDocsPage(document) };
    }
    return built;
  };

  app.get(
    '/openapi.json',
    {
      config: {
        access: 'open',
        doc: {
          summary: 'This document',
          description:
            'The OpenAPI 3.1 document of every route of this server, generated from the routes themselves.',
          tag: 'Documentation',
          responses: { 200: 'The OpenAPI document' },
        },
      },
    },
    async (_request, reply) => reply.type('application/json; charset=utf-8').send(build().json),
  );

  app.get(
    '/docs',
    {
      config: {
        access: 'open',
        doc: {
          summary: 'This document, to read',
          description: 'A self-contained page (no script, nothing fetched from elsewhere).',
          tag: 'Documentation',
          responses: { 200: { description: 'The page', type: 'text/html' } },
        },
      },
    },
    async (_request, reply) =>
      reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
        .send(build().page),
  );
}
