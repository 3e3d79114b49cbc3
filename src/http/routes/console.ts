import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { PACKAGE_ROOT } from '../../version.js';
import type { RouteContext } from '../context.js';
import { notFound } from '../errors.js';
import { parse, pathId } from '../validate.js';

/**
 * The web console (`console/`, built into `dist/console/` by `npm run build`): `GET /` is its page,
 * `GET /console/{file}` its script and stylesheet. The files hold no data (the page asks the API,
 * behind the login), so they are open. They are read once, when the server is built; a server
 * without a built console answers `/` with a page saying how to build it (and a file's 404 says
 * so too; with the console built, a 404 is only a name that is not one of its files).
 *
 * The page runs only the scripts it was served with: the Content-Security-Policy allows scripts,
 * styles and connections from this origin alone (no inline script, nothing from elsewhere).
 */

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Where `npm run build` puts the console: beside `src/` and `dist/` alike, under the package root. */
export const CONSOLE_DIR = `${join(PACKAGE_ROOT, 'dist', 'console')}${sep}`;

const TYPES: Record<string, string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.js.map': 'application/json; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'app.css.map': 'application/json; charset=utf-8',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

function load(dir: string, name: string, type: string): Asset | undefined {
  const path = `${dir}${name}`;
  if (!existsSync(path)) return undefined;
  const body = readFileSync(path);
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>fleetwatch</title></head>
<body><h1>The console is not built</h1><p>Run <code>npm run build</code> (the container image has it built);
the API answers meanwhile: <a href="/docs">/docs</a>.</p></body></html>`;

const fileParams = z.object({ file: pathId.describe('`app.js`, `app.css` or `app.js.map`') });

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset) {
  // Revalidated on every load (a new build must show at once), cheap with the ETag.
  reply.header('cache-control', 'no-cache').header('etag', asset.etag);
  if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  return reply.type(asset.type).send(asset.body);
}

export function registerConsoleRoutes(app: FastifyInstance, _context: RouteContext, dir = CONSOLE_DIR): void {
  const page = load(dir, 'index.html', 'text/html; charset=utf-8');
  const assets = new Map(
    Object.entries(TYPES).flatMap(([name, type]) => {
      const asset = load(dir, name, type);
      return asset ? [[name, asset] as const] : [];
    }),
  );

  app.get(
    '/',
    {
      config: {
        access: 'open',
        doc: {
          summary: 'The web console',
          description:
            'An HTML page (the console) that logs in with `POST /api/session` and shows incidents, the fleet, events and deliveries through this API.',
          tag: 'Console',
          responses: {
            200: { description: 'The page', type: 'text/html' },
            503: { description: 'The console is not built', type: 'text/html' },
          },
        },
      },
    },
    async (request, reply) => {
      reply.header('content-security-policy', CONSOLE_CSP);
      if (!page) return reply.code(503).type('text/html; charset=utf-8').send(NOT_BUILT);
      return send(request, reply, page);
    },
  );

  app.get(
    '/console/:file',
    {
      config: {
        access: 'open',
        doc: {
          summary: "The console's script and stylesheet",
          tag: 'Console',
          params: fileParams,
          responses: { 200: { description: 'The file', type: 'text/plain' }, 404: 'No such file' },
        },
      },
    },
    async (request, reply) => {
      const { file } = parse(fileParams, request.params, 'params');
      const asset = assets.get(file);
      if (!asset)
        throw notFound(
          page ? `no console file ${file}` : `the console is not built: no ${file} (run npm run build)`,
        );
      return send(request, reply, asset);
    },
  );
}
