import type { RouteOptions } from 'fastify';
import type { z } from 'zod';
import type { Access } from './auth.js';

/**
 * What the OpenAPI document says of a route, carried by the route itself (`config.doc`, next to
 * `config.access`) and collected by an `onRoute` hook (`RouteDocs`): a route registered without
 * one is listed as undocumented, and the route-coverage test names it. The schemas are the ones
 * the handler parses with (`parse(schema, request.query, 'query')`), so the document cannot drift
 * from what the route accepts.
 */

/** One answer of a route. */
export interface ResponseDoc {
  description: string;
  /** The body's schema; absent: an error answer has the error shape, any other none is said. */
  schema?: z.ZodType;
  /** Default `application/json`. */
  type?: 'application/json' | 'text/plain' | 'text/html' | 'text/event-stream';
}

export interface RouteDoc {
  summary: string;
  /** A paragraph or two (Markdown). */
  description?: string;
  /** The group it is listed under (`Fleet`, `Robot: Site Management`, ...). */
  tag: string;
  /** Stable name of the operation; by default derived from the method and path. */
  operationId?: string;
  /** The path parameters' schema (an object of strings). */
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: { schema: z.ZodType; required: boolean; description?: string };
  /** By status; a string is the description of a JSON answer without a given schema. */
  responses: Readonly<Record<number, ResponseDoc | string>>;
  /** OpenAPI extensions such as `x-destructive`. */
  extensions?: Readonly<Record<`x-${string}`, unknown>>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's entry in `/openapi.json`; see `src/http/route-doc.ts`. */
    doc?: RouteDoc;
  }
}

/** A route as registered, with what the document needs of it. */
export interface RegisteredRoute {
  method: string;
  /** fastify's pattern: `:name` is a parameter, `*` the rest. */
  url: string;
  access: Access;
  doc: RouteDoc | undefined;
}

/**
 * Routes that stand as one entry: a plugin's own pages, assets and JSON below `prefix` (the queue
 * UI) are one documented `GET prefix`.
 */
export interface RouteGroup {
  prefix: string;
  access: Access;
  doc: RouteDoc;
}

/**
 * Every route the server registers, as fastify's `onRoute` hook reports them; the hook is added
 * before any route, so that none is missed. HEAD routes that fastify adds beside each GET are left
 * out (they answer like the GET, without a body).
 */
export class RouteDocs {
  readonly #routes: RegisteredRoute[] = [];
  readonly #groups: readonly RouteGroup[];
  constructor(groups: readonly RouteGroup[] = []) {
    this.#groups = groups;
  }

  add(route: RouteOptions): void {
    const methods = typeof route.method === 'string' ? [route.method] : route.method;
    const config = (route.config ?? {}) as { access?: Access; doc?: RouteDoc };
    const group = this.#groups.find(
      ({ prefix }) => route.url === prefix || route.url.startsWith(`${prefix}/`),
    );
    if (group) {
      if (!this.#routes.some((known) => known.url === group.prefix && known.method === 'GET')) {
        this.#routes.push({ method: 'GET', url: group.prefix, access: group.access, doc: group.doc });
      }
      return;
    }
    for (const method of methods.map((name) => name.toUpperCase())) {
      if (method === 'HEAD') continue;
      this.#routes.push({ method, url: route.url, access: config.access ?? 'admin', doc: config.doc });
    }
  }

  /** What was registered so far, in registration order. */
  get routes(): readonly RegisteredRoute[] {
    return this.#routes;
  }
}
