import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/**
 * CORS for the pages of `http.cors.origins` (exact origins; none by default, then nothing is
 * registered and no answer carries a CORS header). An allowed origin gets its own origin back with
 * `Access-Control-Allow-Credentials: true` (so its page may send the session cookie or a bearer
 * token), and its preflights are answered with the methods and headers below. Any other origin
 * gets no CORS header at all, and its preflight is answered like any request for a method the path
 * does not take (405, or 404).
 */

/** The methods the API takes (PUT and PATCH for routes that take them). */
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** The request headers a page may send: the token, JSON bodies, the CSRF token, SSE resumption. */
export const CORS_HEADERS = ['Authorization', 'Content-Type', 'X-CSRF-Token', 'Last-Event-ID'] as const;

/** How long a browser may reuse a preflight's answer (seconds). */
const PREFLIGHT_MAX_AGE_S = 600;

/** Registers CORS (before the guard's hook: a preflight carries no credentials). */
export async function registerCors(app: FastifyInstance, origins: readonly string[]): Promise<void> {
  if (origins.length === 0) return;
  const allowed = new Set(origins);
  await app.register(cors, {
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    credentials: true,
    methods: [...CORS_METHODS],
    allowedHeaders: [...CORS_HEADERS],
    // Pages may read why a request failed and when to retry.
    exposedHeaders: ['Retry-After', 'WWW-Authenticate'],
    maxAge: PREFLIGHT_MAX_AGE_S,
  });
}

/** Whether a route is the CORS plugin's own preflight route (not one of the API's paths). */
export function isPreflightRoute(method: string | readonly string[], url: string): boolean {
  return url === '*' && (method === 'OPTIONS' || (Array.isArray(method) && method.includes('OPTIONS')));
}
