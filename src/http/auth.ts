import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpConfig } from '../config/schema.js';
import type { RedisClient } from '../lib/redis-connection.js';
import { checkCsrfToken, checkOrigin, isUnsafe } from './csrf.js';
import { ApiError, sendApiError, unavailable } from './errors.js';
import { FailedLogins } from './login-limit.js';
import { cookieMayBeInsecure, type Session, SessionStore, sessionCookie, sessionIdOf } from './sessions.js';
import { type GuardedAccess, type Principal, roleAllows, rolesFor, TokenTable } from './tokens.js';

export { sameToken } from './tokens.js';

/**
 * Who may call what. Each route says what it needs (`config: { access }`); the tokens and their
 * roles are in tokens.ts, browser sessions in sessions.ts, the CSRF checks in csrf.ts.
 *
 * | access  | no token configured                     | `http.api_token` or `http.tokens` configured |
 * |---------|-----------------------------------------|----------------------------------------------|
 * | `open`  | open (/metrics, /healthz, /readyz)      | open                                         |
 * | `read`  | open (GET /api/...)                     | a token of any role                          |
 * | `write` | 403: set a token                        | role `operate` or `admin`                    |
 * | `admin` | 403: set a token (queue UI)             | role `admin`                                 |
 *
 * A request shows its token in one of three ways: `Authorization: Bearer <token>`; HTTP Basic with
 * the token as the password (any user name), for the queue UI only, because a browser resends Basic
 * credentials for the page's own requests; or the session cookie of `POST /api/session`. A change
 * (POST, PUT, PATCH, DELETE) made with the cookie must also pass the CSRF checks. An
 * `Authorization` header, when sent, is what counts, whatever cookie comes with it.
 *
 * Reads are open only while no token is configured (the server listens on loopback by default);
 * once an operator sets one, fleet inventory, addresses and event history need it too. A token
 * never appears in an answer or a log.
 */

export type Access = 'open' | GuardedAccess;

/** How the request showed its token. */
export type AuthVia = 'bearer' | 'basic' | 'session';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Who the guard accepted, for the audit trail (audit.ts): the token's name (`api_token` for
     * `http.api_token`), also when it came through a session. Unset on open routes and without a token.
     */
    actor?: string;
    /** How the accepted request showed its token. */
    authVia?: AuthVia;
  }
  interface FastifyContextConfig {
    /** Who may call the route; see `src/http/auth.ts`. Routes that do not say (the queue UI's) are `admin`. */
    access?: Access;
  }
}

/** Who a request is, as the guard accepted it. */
export interface Identity extends Principal {
  readonly via: AuthVia;
  /** The session, when the request came with the session cookie. */
  readonly session?: Session;
}

const REALM = 'fleetwatch';
const SET_TOKEN =
  'set http.api_token (or http.tokens) in the fleetwatch config (for example api_token: $' +
  '{FLEETWATCH_API_TOKEN}) and restart fleetwatch';

/** 403 for what needs a token while none is configured. */
export function tokenNotConfigured(what: string): ApiError {
  return new ApiError(403, 'api_token_not_configured', `${what}: ${SET_TOKEN}`);
}

type Credentials = { scheme: 'bearer' | 'basic'; token: string } | undefined;

function credentialsOf(header: string): Credentials {
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

type Refusal = 'missing' | 'invalid' | 'ended';

const UNAUTHORIZED_MESSAGES: Record<Refusal, string> = {
  missing:
    'this endpoint needs a token: send Authorization: Bearer <token> (http.api_token or one of http.tokens), or log in with POST /api/session',
  invalid: 'the API token is not valid',
  ended:
    'the session has ended (it expired, was logged out, or its token changed): log in again with POST /api/session',
};

/**
 * 401 with its challenges. The queue UI's carries two `WWW-Authenticate` lines, Bearer and Basic:
 * browsers show their login prompt only for a Basic challenge they can find, and Chromium does
 * not look for one after a Bearer challenge on the same line.
 */
function unauthorized(
  access: GuardedAccess,
  why: Refusal,
  headers: Readonly<Record<string, string>> = {},
): ApiError {
  const bearer =
    why === 'invalid' ? `Bearer realm="${REALM}", error="invalid_token"` : `Bearer realm="${REALM}"`;
  const challenges = access === 'admin' ? [bearer, `Basic realm="${REALM}", charset="UTF-8"`] : bearer;
  return new ApiError(401, 'unauthorized', UNAUTHORIZED_MESSAGES[why], undefined, {
    'www-authenticate': challenges,
    ...headers,
  });
}

export interface GuardOptions {
  http: Pick<HttpConfig, 'api_token' | 'tokens' | 'cors' | 'session_ttl'>;
  /** Where sessions are kept (a producer connection) and under which key prefix. */
  redis: RedisClient;
  prefix: string;
}

export interface Guard {
  /** Whether any token is configured. */
  readonly configured: boolean;
  readonly tokens: TokenTable;
  readonly sessions: SessionStore;
  /** `http.cors.origins`: the other origins whose pages may make changes with the cookie. */
  readonly origins: ReadonlySet<string>;
  readonly failedLogins: FailedLogins;
  /**
   * Who the request is: its bearer token, Basic (only where `access` is `admin`) or session cookie,
   * with the CSRF checks for a change made with the cookie. Throws the 401/403/503 `ApiError`.
   */
  identify(request: FastifyRequest, access: GuardedAccess): Promise<Identity>;
  /** Throws the 401/403 `ApiError` when the request may not have `access`; sets `request.actor`. */
  check(request: FastifyRequest, access: Access): Promise<void>;
  /** An `onRequest` hook enforcing the route's `config.access` (default `admin`: deny unless said). */
  hook(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined>;
}

export function createGuard(options: GuardOptions): Guard {
  const tokens = new TokenTable(options.http);
  const sessions = new SessionStore({
    redis: options.redis,
    prefix: options.prefix,
    ttlMs: options.http.session_ttl,
    tokens,
  });
  const origins: ReadonlySet<string> = new Set(options.http.cors.origins);
  const failedLogins = new FailedLogins();

  async function identify(request: FastifyRequest, access: GuardedAccess): Promise<Identity> {
    const header = request.headers.authorization;
    if (header) {
      const credentials = credentialsOf(header);
      if (!credentials || (credentials.scheme === 'basic' && access !== 'admin')) {
        throw unauthorized(access, 'missing');
      }
      const principal = tokens.find(credentials.token);
      if (!principal) throw unauthorized(access, 'invalid');
      return { ...principal, via: credentials.scheme };
    }
    const id = sessionIdOf(request.headers.cookie);
    if (id === undefined) throw unauthorized(access, 'missing');
    let session: Session | undefined;
    try {
      session = await sessions.read(id);
    } catch {
      throw unavailable('cannot check the session right now: Redis does not answer');
    }
    // The browser drops a cookie that leads nowhere.
    if (!session) {
      throw unauthorized(access, 'ended', {
        'set-cookie': sessionCookie('', 0, !cookieMayBeInsecure(request)),
      });
    }
    if (isUnsafe(request.method)) {
      checkOrigin(request, origins);
      checkCsrfToken(request, session);
    }
    return { actor: session.actor, role: session.role, via: 'session', session };
  }

  async function check(request: FastifyRequest, access: Access): Promise<void> {
    if (access === 'open') return;
    if (!tokens.configured) {
      if (access === 'read') return;
      throw tokenNotConfigured(
        access === 'admin'
          ? 'the queue UI and the other admin endpoints are disabled'
          : 'this endpoint changes state and is disabled',
      );
    }
    const identity = await identify(request, access);
    if (!roleAllows(identity.role, access)) {
      throw new ApiError(
        403,
        'forbidden',
        `this endpoint needs a token of role ${rolesFor(access)}; ${identity.actor} has role ${identity.role}`,
      );
    }
    request.actor = identity.actor;
    request.authVia = identity.via;
  }

  return {
    configured: tokens.configured,
    tokens,
    sessions,
    origins,
    failedLogins,
    identify,
    check,
    async hook(request, reply) {
      // An unknown path is a plain 404, whoever asks. A preflight carries no credentials by design;
      // the one OPTIONS route is the CORS plugin's (cors.ts), which answers only allowed origins.
      if (request.is404 || request.method === 'OPTIONS') return;
      try {
        await check(request, request.routeOptions.config.access ?? 'admin');
      } catch (error) {
        // Answered here rather than thrown: the queue UI's plugin has an error handler of its own.
        if (error instanceof ApiError) return sendApiError(reply, error);
        throw error;
      }
    },
  };
}
