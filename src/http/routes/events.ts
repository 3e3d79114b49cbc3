import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { describeEvent } from '../../events/describe.js';
import { MuteMarks } from '../../notifiers/muting/mute-marks.js';
import { DEFAULT_RANGE_LIMIT, MAX_RANGE_LIMIT } from '../../store/event-log.js';
import { eventSince, eventStreamId, eventSubject, eventTypeGlob } from '../../store/event-query.js';
import type { RouteContext } from '../context.js';
import { parse, queryInt, rejectRequest } from '../validate.js';

/**
 * `GET /api/events?since=&type=&subject=&limit=`: the event log (a capped Redis stream), oldest
 * first. Without `since`: the newest `limit` matching events. With `since` (a stream id, exclusive,
 * or an ISO 8601 time, inclusive, compared with when fleetwatch logged the event): the first
 * `limit` matching events after it — page forward by passing `lastStreamId` back as `since`. With
 * `before` (a stream id, exclusive; not with `since`): the newest `limit` matching events before it
 * — page back from the newest by passing the first item's `streamId` (an entity's timeline).
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
  before: eventStreamId.optional(),
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
            "Without `since`: the newest `limit` matching events. With `since` (a stream id, exclusive, or an ISO 8601 time, inclusive): the first `limit` after it; page forward with `lastStreamId`. With `before` (a stream id, exclusive; not with `since`): the newest `limit` before it; page back with the first item's `streamId`. Each item carries `summary`, the sentence fleetwatch says the event in (as the CLI and the notifications word it); an event kept out of notifications carries `muted`.",
          tag: 'Events',
          query: rangeQuery,
          responses: { 200: '`{items: [{streamId, event, summary, muted?}], lastStreamId}`' },
        },
      },
    },
    async (request) => {
      const query = parse(rangeQuery, request.query, 'query');
      if (query.since !== undefined && query.before !== undefined) {
        rejectRequest([
          'query.before: pages back from the newest events and cannot be combined with since (use one of them)',
        ]);
      }
      const entries = await context.eventLog.range({
        ...(query.since === undefined ? {} : { since: query.since }),
        ...(query.before === undefined ? {} : { before: query.before }),
        ...(query.type === undefined ? {} : { type: query.type }),
        ...(query.subject === undefined ? {} : { subject: query.subject }),
        limit: query.limit ?? DEFAULT_RANGE_LIMIT,
      });
      const muted = await marks.read(entries.map((entry) => entry.event.id));
      const items = entries.map((entry) => {
        const mark = muted.get(entry.event.id);
        const item = { ...entry, summary: describeEvent(entry.event) };
        return mark ? { ...item, muted: mark } : item;
      });
      return { items, lastStreamId: items.at(-1)?.streamId ?? null };
    },
  );
}
