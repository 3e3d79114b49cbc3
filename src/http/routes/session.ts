import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { TOKEN_ROLES } from '../../config/schema.js';
import { audit } from '../audit.js';
import { type Identity, tokenNotConfigured } from '../auth.js';
import type { RouteContext } from '../context.js';
import { checkCsrfToken, checkOrigin } from '../csrf.js';
import { ApiError, unavailable } from '../errors.js';
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

export function registerSessionRoutes(app: FastifyInstance, context: RouteContext): void {
  const { guard, logger } = context;

  app.post('/api/session', { config: { access: 'open' } }, async (request, reply) => {
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

  app.get('/api/session', { config: { access: 'open' } }, async (request) => {
    if (!guard.configured) throw tokenNotConfigured(NOT_CONFIGURED);
    return view(await guard.identify(request, 'read'));
  });

  app.delete('/api/session', { config: { access: 'open' } }, async (request, reply) => {
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
