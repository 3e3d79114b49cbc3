import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { SilenceStore } from '../../notifiers/muting/silence-store.js';
import { type Silence, silenceInputSchema, silenceState } from '../../notifiers/muting/silences.js';
import { audit } from '../audit.js';
import type { RouteContext } from '../context.js';
import { notFound } from '../errors.js';
import { parse, pathId, queryFlag, rejectRequest } from '../validate.js';

/**
 * Silences, the same ones `fleetwatch silence` manages (`{p}:silences`; every replica sees a change
 * within its 2 s silence cache):
 * - `GET /api/silences` (`?all=true` includes expired ones, kept 7 days): pending and active ones.
 * - `POST /api/silences` (token): body validated by the CLI's schema (`silenceInputSchema`):
 *   `{ matchers: { type?, subject?, severity?, tags? }, duration: "2h" | endsAt: ISO, startsAt?,
 *   createdBy, comment }`. 201 with the silence.
 * - `DELETE /api/silences/{id}` (token): expires it now (kept, listed with `?all=true`); 200.
 */

const listQuery = z.strictObject({ all: queryFlag.optional() });
const idParams = z.object({ id: pathId });

function withState(silence: Silence, now: number) {
  return { ...silence, state: silenceState(silence, now) };
}

export function registerSilenceRoutes(app: FastifyInstance, context: RouteContext): void {
  const store = new SilenceStore({
    redis: context.options.redis,
    prefix: context.options.config.redis.prefix,
  });

  app.get(
    '/api/silences',
    {
      config: {
        access: 'read',
        doc: {
          summary: 'Pending and active silences',
          description: '`all=true` adds the expired ones (kept 7 days).',
          tag: 'Silences',
          query: listQuery,
          responses: { 200: '`{items}`: silences with their `state`' },
        },
      },
    },
    async (request) => {
      const query = parse(listQuery, request.query, 'query');
      const now = Date.now();
      const silences = await store.list({ all: query.all === true, now });
      return { items: silences.map((silence) => withState(silence, now)) };
    },
  );

  app.post(
    '/api/silences',
    {
      config: {
        access: 'write',
        doc: {
          summary: 'Create a silence',
          tag: 'Silences',
          body: { schema: silenceInputSchema, required: true },
          responses: { 201: 'The silence, with its `state`' },
        },
      },
    },
    async (request, reply) => {
      // The CLI's schema first, so that problems name the body's fields; the store validates again.
      parse(silenceInputSchema, request.body, 'body');
      const now = Date.now();
      const added = await store.add(request.body, now);
      if (!added.ok) rejectRequest(added.problems.map((problem) => `body.${problem}`));
      audit(
        context.logger,
        request,
        { silence: added.silence.id, matchers: added.silence.matchers, createdBy: added.silence.createdBy },
        'silence created through the API',
      );
      return reply.code(201).send(withState(added.silence, now));
    },
  );

  app.delete(
    '/api/silences/:id',
    {
      config: {
        access: 'write',
        doc: {
          summary: 'Expire a silence now',
          description: 'It is kept, and listed with `all=true`.',
          tag: 'Silences',
          params: idParams,
          responses: { 200: 'The silence, with `alreadyExpired`', 404: 'No such silence' },
        },
      },
    },
    async (request) => {
      const { id } = parse(idParams, request.params, 'params');
      const now = Date.now();
      const expired = await store.expire(id, now);
      if (!expired.found)
        throw notFound(`no silence "${id}" (GET /api/silences?all=true lists every silence)`);
      if (!expired.alreadyExpired)
        audit(context.logger, request, { silence: id }, 'silence expired through the API');
      return { ...withState(expired.silence, now), alreadyExpired: expired.alreadyExpired };
    },
  );
}
