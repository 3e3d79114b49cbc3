import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { DEFAULT_RANGE_LIMIT, MAX_RANGE_LIMIT } from '../../store/event-log.js';
import { isStreamId } from '../../store/stream-entries.js';
import type { RouteContext } from '../context.js';
import { parse, queryInt } from '../validate.js';

/**
 * `GET /api/events?since=&type=&subject=&limit=`: the event log (a capped Redis stream), oldest
 * first. Without `since`: the newest `limit` matching events. With `since` (a stream id, exclusive,
 * or an ISO 8601 time, inclusive, compared with when fleetwatch logged the event): the first
 * `limit` matching events after it — page forward by passing `lastStreamId` back as `since`.
 * `type` is a glob (`vehicle.vpn.*`), `subject` exact (`vehicle/veh-0001`). `limit`: default 100,
 * at most 10,000.
 */

export const eventFilterFields = {
  type: z
    .string()
    .min(1, { error: 'must not be empty' })
    .max(200)
    .regex(/^[A-Za-z0-9.*?_-]+$/, { error: 'must be an event type or a glob such as vehicle.vpn.*' })
    .optional(),
  subject: z.string().min(1, { error: 'must not be empty' }).max(300).optional(),
};

const isoTime = (value: string): boolean =>
  /^\d{4}-\d{2}-\d{2}([T ]|$)/.test(value) && Number.isFinite(Date.parse(value));

const since = z.string().refine((value) => isStreamId(value) || isoTime(value), {
  error: 'must be a stream id (1767225600000-0, see lastStreamId) or an ISO 8601 time',
});

const rangeQuery = z.strictObject({
  ...eventFilterFields,
  since: since.optional(),
  limit: queryInt(1, MAX_RANGE_LIMIT).optional(),
});

export function registerEventRoutes(app: FastifyInstance, context: RouteContext): void {
  app.get('/api/events', { config: { access: 'read' } }, async (request) => {
    const query = parse(rangeQuery, request.query, 'query');
    const items = await context.eventLog.range({
      ...(query.since === undefined ? {} : { since: query.since }),
      ...(query.type === undefined ? {} : { type: query.type }),
      ...(query.subject === undefined ? {} : { subject: query.subject }),
      limit: query.limit ?? DEFAULT_RANGE_LIMIT,
    });
    return { items, lastStreamId: items.at(-1)?.streamId ?? null };
  });
}
