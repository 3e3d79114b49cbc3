import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

/**
 * The audit trail: one info line per change made through the API, saying who (`actor`, set by the
 * guard in auth.ts: the name of the token that was accepted, directly or through a session; `via`:
 * `bearer`, `basic` or `session`), from where (`remote`),
 * what (the route's fields) and the answer. Routes that change state log through this, so every
 * line has the same shape (`audit: true`) and can be filtered out of the log as one stream.
 */
export function audit(
  logger: Logger,
  request: FastifyRequest,
  fields: Record<string, unknown>,
  message: string,
): void {
  logger.info(
    { audit: true, actor: request.actor ?? 'anonymous', via: request.authVia, remote: request.ip, ...fields },
    message,
  );
}
