import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, sendApiError } from './errors.js';

/**
 * API token checks. Each route says what it needs (`config: { access }`):
 *
 * | access  | no `http.api_token` configured          | `http.api_token` configured            |
 * |---------|-----------------------------------------|----------------------------------------|
 * | `open`  | open (/metrics, /healthz, /readyz)      | open                                   |
 * | `read`  | open (GET /api/...)                     | `Authorization: Bearer <token>`        |
 * | `write` | 403: set `http.api_token`               | `Authorization: Bearer <token>`        |
 * | `admin` | 403: set `http.api_token` (queue UI)    | Bearer, or Basic with the token as the password |
 *
 * Reads are open only while no token is configured (the server listens on loopback by default);
 * once an operator sets a token, fleet inventory, addresses and event history need it too. The
 * queue UI also takes HTTP Basic (any user name, the token as the password) because a browser
 * cannot add a bearer header to the page's own requests but does resend Basic credentials.
 *
 * Tokens are compared in constant time (SHA-256 of both sides, then `timingSafeEqual`, so neither
 * the content nor the length leaks through timing). A token never appears in an answer or a log.
 */

export type Access = 'open' | 'read' | 'write' | 'admin';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the guard accepted, for the audit trail (audit.ts); unset on open routes and without a token. */
    actor?: string;
  }
  interface FastifyContextConfig {
    /** Who may call the route; see `src/http/auth.ts`. Routes that do not say (the queue UI's) are `admin`. */
    access?: Access;
  }
}

const REALM = 'fleetwatch';
const SET_TOKEN =
  'set http.api_token in the fleetwatch config (for example api_token: $' +
  '{FLEETWATCH_API_TOKEN}) and restart fleetwatch';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Constant-time equality of two strings of any lengths. */
export function sameToken(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

type Credentials = { scheme: 'bearer' | 'basic'; token: string } | undefined;

function credentialsOf(header: string | undefined): Credentials {
  if (!header) return undefined;
  const match = /^(\S+)\s+(.+)$/.exec(header.trim());
  if (!match) return undefined;
  const scheme = match[1]!.toLowerCase();
  const value = match[2]!.trim();
  if (scheme === 'bearer') return { scheme: 'bearer', token: value };
  if (scheme === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return { scheme: 'basic', token: colon >= 0 ? decoded.slice(colon + 1) : decoded };
  }
  return undefined;
}

export interface Guard {
  /** Whether an API token is configured. */
  readonly configured: boolean;
  /** Throws the 401/403 `ApiError` when the request may not have `access`. */
  check(request: FastifyRequest, access: Access): void;
  /** An `onRequest` hook enforcing the route's `config.access` (default `admin`: deny unless said). */
  hook(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined>;
}

export function createGuard(token: string | undefined): Guard {
  const configured = token !== undefined && token !== '';

  function unauthorized(access: Access, why: 'missing' | 'invalid'): ApiError {
    const bearer =
      why === 'invalid' ? `Bearer realm="${REALM}", error="invalid_token"` : `Bearer realm="${REALM}"`;
    const challenge = access === 'admin' ? `${bearer}, Basic realm="${REALM}", charset="UTF-8"` : bearer;
    return new ApiError(
      401,
      'unauthorized',
      why === 'missing'
        ? 'this endpoint needs the API token: send Authorization: Bearer <http.api_token>'
        : 'the API token is not valid',
      undefined,
      { 'www-authenticate': challenge },
    );
  }

  function check(request: FastifyRequest, access: Access): void {
    if (access === 'open') return;
    if (!configured) {
      if (access === 'read') return;
      throw new ApiError(
        403,
        'api_token_not_configured',
        `${access === 'admin' ? 'the queue UI is disabled' : 'this endpoint changes state and is disabled'}: ${SET_TOKEN}`,
      );
    }
    const credentials = credentialsOf(request.headers.authorization);
    if (!credentials) throw unauthorized(access, 'missing');
    if (credentials.scheme === 'basic' && access !== 'admin') throw unauthorized(access, 'missing');
    if (!sameToken(credentials.token, token!)) throw unauthorized(access, 'invalid');
    request.actor = 'api_token';
  }

  return {
    configured,
    check,
    async hook(request, reply) {
      // An unknown path is a plain 404, whoever asks.
      if (request.is404) return;
      try {
        check(request, request.routeOptions.config.access ?? 'admin');
      } catch (error) {
        // Answered here rather than thrown: the queue UI's plugin has an error handler of its own.
        if (error instanceof ApiError) return sendApiError(reply, error);
        throw error;
      }
    },
  };
}
