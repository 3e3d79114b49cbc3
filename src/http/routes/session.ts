import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { TOKEN_ROLES } from '../../config/schema.js';
import { audit } from '../audit.js';
import { type Identity, tokenNotConfigured } from '../auth.js';
import type { RouteContext } from '../context.js';
import { checkCsrfToken, checkOrigin } from '../csrf.js';
import { ApiError, unavailable } from '../errors.js';
import type { RouteDoc } from '../route-doc.js';
import { cookieMayBeInsecure, type Session, sessionCookie, sessionIdOf } from '../sessions.js';
import { parse } from '../validate.js';

/**
 * Browser sessions (sessions.ts):
 *
 * - `POST /api/session` `{"token": "<a configured token>"}` → 201 with the session (below) and the
 *   `fleetwatch_session` cookie. A token that is none of the configured ones: 401, the same message
 *   whatever was sent; failed logins are limited per address (login-limit.ts: 429 with
 *   `Retry-After`). A page of another origin that is not allowed is refused (403).
 * - `GET /api/session` → 200 `{actor, role, via, expiresAt, csrfToken}` for whoever the request
 *   is (`expiresAt` and `csrfToken` are null unless it came with the cookie); 401 otherwise.
 * - `DELETE /api/session` → 204: the cookie's session ends (with the cookie, the CSRF header is
 *   needed like for any change) and the cookie is cleared; 204 too when there was none.
 *
 * All three answer 403 `api_token_not_configured` while no token is configured.
 */

/** The login's body. */
export const loginBodySchema = z
  .object({
    token: z
      .string({ error: 'expected the API token as text' })
      .min(1, { error: 'must not be empty' })
      .max(1_024, { error: 'must be at most 1024 characters' }),
  })
  .strict();

const NOT_CONFIGURED = 'sessions are disabled';

/** What `POST` and `GET /api/session` answer. */
export const sessionViewSchema = z.object({
  /** The token's name (`api_token` for `http.api_token`). */
  actor: z.string(),
  role: z.enum(TOKEN_ROLES),
  via: z.enum(['bearer', 'basic', 'session']),
  /** ISO time; null unless the request came with the session cookie. */
  expiresAt: z.string().nullable(),
  /** What `X-CSRF-Token` must be; null unless the request came with the session cookie. */
  csrfToken: z.string().nullable(),
});

export type SessionView = z.output<typeof sessionViewSchema>;

function view(identity: Identity): SessionView {
  return {
    actor: identity.actor,
    role: identity.role,
    via: identity.via,
    expiresAt: identity.session ? new Date(identity.session.expiresAt).toISOString() : null,
    csrfToken: identity.session?.csrfToken ?? null,
  };
}

function setCookie(request: FastifyRequest, reply: FastifyReply, id: string, maxAgeMs: number): void {
  reply.header('set-cookie', sessionCookie(id, maxAgeMs, !cookieMayBeInsecure(request)));
}

const LOGIN_DOC: RouteDoc = {
  summary: 'Log in: a session cookie for a browser',
  description:
    'Takes any configured token and sets the `fleetwatch_session` cookie (HttpOnly, SameSite=Strict, Secure except over plain http to loopback), accepted wherever the token is. Failed logins are limited per address.',
  tag: 'Session',
  body: { schema: loginBodySchema, required: true },
  responses: {
    201: { description: 'The session; the cookie is in `Set-Cookie`', schema: sessionViewSchema },
    401: 'The token is not valid',
    403: 'No token is configured (`api_token_not_configured`), or the request came from another site (`cross_site_refused`)',
    429: 'Too many failed logins from this address (`too_many_failed_logins`, with `Retry-After`)',
  },
};

const WHO_DOC: RouteDoc = {
  summary: 'Who you are: actor, role, and the session’s expiry and CSRF token',
  description:
    'Checks the bearer token, the Basic password or the cookie itself; `expiresAt` and `csrfToken` are null without the cookie.',
  tag: 'Session',
  responses: {
    200: { description: 'The caller', schema: sessionViewSchema },
    401: 'No valid token or session',
    403: 'No token is configured',
  },
};

const LOGOUT_DOC: RouteDoc = {
  summary: 'Log out: the session ends and the cookie is cleared',
  description:
    'With a valid cookie the `X-CSRF-Token` header is needed; without a session the answer is 204 too.',
  tag: 'Session',
  responses: { 204: { description: 'Logged out' }, 403: 'The CSRF token or the origin was refused' },
};

export function registerSessionRoutes(app: FastifyInstance, context: RouteContext): void {
  const { guard, logger } = context;

  app.post('/api/session', { config: { access: 'open', doc: LOGIN_DOC } }, async (request, reply) => {
    if (!guard.configured) throw tokenNotConfigured(NOT_CONFIGURED);
    checkOrigin(request, guard.origins);
    const blockedMs = guard.failedLogins.blockedFor(request.ip);
    if (blockedMs > 0) {
      const seconds = Math.ceil(blockedMs / 1000);
      throw new ApiError(
        429,
        'too_many_failed_logins',
        `too many failed logins from ${request.ip}: try again in ${seconds} s`,
        undefined,
        { 'retry-after': String(seconds) },
      );
    }
    const { token } = parse(loginBodySchema, request.body, 'body');
    const principal = guard.tokens.find(token);
    if (!principal) {
      guard.failedLogins.fail(request.ip);
      logger.warn({ remote: request.ip }, 'failed login: the token is none of the configured ones');
      throw new ApiError(401, 'unauthorized', 'the token is not valid');
    }
    let opened: { id: string; session: Session };
    try {
      opened = await guard.sessions.open(principal);
    } catch {
      throw unavailable('cannot open a session right now: Redis does not answer');
    }
    request.actor = principal.actor;
    request.authVia = 'session';
    const expiresAt = new Date(opened.session.expiresAt).toISOString();
    audit(logger, request, { session: 'opened', role: principal.role, expiresAt }, 'session opened');
    setCookie(request, reply, opened.id, guard.sessions.ttlMs);
    return reply.code(201).send(view({ ...principal, via: 'session', session: opened.session }));
  });

  app.get('/api/session', { config: { access: 'open', doc: WHO_DOC } }, async (request) => {
    if (!guard.configured) throw tokenNotConfigured(NOT_CONFIGURED);
    return view(await guard.identify(request, 'read'));
  });

  app.delete('/api/session', { config: { access: 'open', doc: LOGOUT_DOC } }, async (request, reply) => {
    if (!guard.configured) throw tokenNotConfigured(NOT_CONFIGURED);
    const id = sessionIdOf(request.headers.cookie);
    if (id !== undefined) {
      let session: Session | undefined;
      try {
        session = await guard.sessions.read(id);
        if (session) {
          checkOrigin(request, guard.origins);
          checkCsrfToken(request, session);
          await guard.sessions.close(id, session);
        }
      } catch (error) {
        if (error instanceof ApiError) throw error;
        throw unavailable('cannot end the session right now: Redis does not answer');
      }
      if (session) {
        request.actor = session.actor;
        request.authVia = 'session';
        audit(logger, request, { session: 'closed' }, 'session closed');
      }
    }
    setCookie(request, reply, '', 0);
    return reply.code(204).send();
  });
}
