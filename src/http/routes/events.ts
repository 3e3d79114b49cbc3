import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { MuteMarks } from '../../notifiers/muting/mute-marks.js';
import { DEFAULT_RANGE_LIMIT, MAX_RANGE_LIMIT } from '../../store/event-log.js';
import { eventSince, eventSubject, eventTypeGlob } from '../../store/event-query.js';
import type { RouteContext } from '../context.js';
import { parse, queryInt } from '../validate.js';

/**
 * `GET /api/events?since=&type=&subject=&limit=`: the event log (a capped Redis stream), oldest
 * first. Without `since`: the newest `limit` matching events. With `since` (a stream id, exclusive,
 * or an ISO 8601 time, inclusive, compared with when fleetwatch logged the event): the first
 * `limit` matching events after it — page forward by passing `lastStreamId` back as `since`.
 * `type` is a glob (`vehicle.vpn.*`), `subject` exact (`vehicle/veh-0001`). `limit`: default 100,
 * at most 10,000. An event kept out of notifications carries `muted`: why (`silenced`,
 * `maintenance`, `inhibited`), by what (the silence id, the window, the inhibition rule), the
 * inhibiting incident (`source: {type, subject}`) and when (`at`, epoch ms); see `MuteMarks`.
 */

/** The filters `/api/events` and its stream share (the CLI checks its options with the same rules). */
export const eventFilterFields = {
  type: eventTypeGlob.optional(),
  subject: eventSubject.optional(),
};

const rangeQuery = z.strictObject({
  ...eventFilterFields,
  since: eventSince.optional(),
  limit: queryInt(1, MAX_RANGE_LIMIT).optional(),
});

export function registerEventRoutes(app: FastifyInstance, context: RouteContext): void {
  const marks = new MuteMarks({ redis: context.options.redis, prefix: context.options.config.redis.prefix });
  app.get(
    '/api/events',
    {
      config: {
        access: 'read',
        doc: {
          summary: 'The event log, oldest first',
          description:
            'Without `since`: the newest `limit` matching events. With `since` (a stream id, exclusive, or an ISO 8601 time, inclusive): the first `limit` after it; page forward with `lastStreamId`. An event kept out of notifications carries `muted`.',
          tag: 'Events',
          query: rangeQuery,
          responses: { 200: '`{items: [{streamId, event, muted?}], lastStreamId}`' },
        },
      },
    },
    async (request) => {
      const query = parse(rangeQuery, request.query, 'query');
      const entries = await context.eventLog.range({
        ...(query.since === undefined ? {} : { since: query.since }),
        ...(query.type === undefined ? {} : { type: query.type }),
        ...(query.subject === undefined ? {} : { subject: query.subject }),
        limit: query.limit ?? DEFAULT_RANGE_LIMIT,
      });
      const muted = await marks.read(entries.map((entry) => entry.event.id));
      const items = entries.map((entry) => {
        const mark = muted.get(entry.event.id);
        return mark ? { ...entry, muted: mark } : entry;
      });
      return { items, lastStreamId: items.at(-1)?.streamId ?? null };
    },
  );
}
