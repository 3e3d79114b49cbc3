import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';
import type { Session } from './sessions.js';
import { sameToken } from './tokens.js';

/**
 * Cross-site request forgery: a browser sends the session cookie by itself, so a change made with
 * it must prove it comes from a page that may make it. Two checks, both needed for the cookie:
 *
 * 1. Where it comes from: an `Origin` must be this server's own (same host and port; the scheme is
 *    not compared, as a TLS proxy in front changes it) or one of `http.cors.origins`; without an
 *    `Origin`, a `Sec-Fetch-Site` of `cross-site` or `same-site` is refused too. Also checked for
 *    the login itself.
 * 2. The synchronizer token: `X-CSRF-Token` equal to the session's own (`GET /api/session` gives it),
 *    which a page of another site cannot read.
 *
 * A bearer token needs neither: a browser never adds one by itself. Safe methods (GET, HEAD,
 * OPTIONS) change nothing and need neither.
 */

export const CSRF_HEADER = 'x-csrf-token';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function isUnsafe(method: string): boolean {
  return UNSAFE.has(method.toUpperCase());
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

function refused(message: string): ApiError {
  return new ApiError(403, 'cross_site_refused', message);
}

/** Throws 403 when the request comes from a page of another origin that is not allowed. */
export function checkOrigin(request: FastifyRequest, allowedOrigins: ReadonlySet<string>): void {
  const origin = header(request, 'origin');
  if (origin !== undefined) {
    if (allowedOrigins.has(origin)) return;
    let host: string | undefined;
    try {
      host = new URL(origin).host;
    } catch {
      host = undefined;
    }
    if (host !== undefined && host === request.headers.host?.toLowerCase()) return;
    throw refused(
      `requests from pages of ${origin === 'null' ? 'an opaque origin' : origin} are refused: add the origin to http.cors.origins to allow it`,
    );
  }
  const site = header(request, 'sec-fetch-site');
  if (site === 'cross-site' || site === 'same-site') {
    throw refused(`a ${site} request without an Origin header is refused`);
  }
}

/** Throws 403 unless `X-CSRF-Token` is the session's CSRF token. */
export function checkCsrfToken(request: FastifyRequest, session: Session): void {
  const given = header(request, CSRF_HEADER);
  if (given === undefined || given === '') {
    throw new ApiError(
      403,
      'csrf_token_missing',
      'a change made with the session cookie needs the X-CSRF-Token header: the csrfToken of GET /api/session',
    );
  }
  if (!sameToken(given, session.csrfToken)) {
    throw new ApiError(
      403,
      'csrf_token_invalid',
      "X-CSRF-Token is not this session's CSRF token: read it again from GET /api/session",
    );
  }
}
