import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ackInputSchema, acknowledgeIncident } from '../../incidents/acknowledge.js';
import {
  decodeCursor,
  filterProblems,
  INCIDENT_STATES,
  IncidentReader,
  type IncidentStateFilter,
  isIncidentState,
  toView,
} from '../../incidents/view.js';
import { createMutes } from '../../notifiers/dispatch/notification-step.js';
import { IncidentStore } from '../../store/incidents.js';
import { audit } from '../audit.js';
import { derived, type RouteContext } from '../context.js';
import { conflict, notFound } from '../errors.js';
import { parse, pathId, queryInt, rejectRequest } from '../validate.js';

/**
 * Incidents (src/incidents: the records the commit keeps, with whether each is muted right now
 * and who acknowledged it):
 * - `GET /api/incidents`: the open ones, oldest first. `?type=` and `?subject=` globs (comma-
 *   separated for several), `?severity=` a minimum, `?state=` any of open (default), active,
 *   acknowledged, silenced, inhibited, maintenance, closed, all (comma-separated); paged like
 *   `/api/vehicles` (`?limit=` default 100, at most 1000; `?cursor=`).
 * - `GET /api/incidents/{id}`: one, open or closed (closed ones are kept 7 days); 404 otherwise.
 * - `POST /api/incidents/{id}/ack` (token): `{ comment, author, for? }` (`for`: default 4h, 1s to
 *   7d). 200 with the incident; 404 unknown id; 409 `incident_closed` when it is not open. Logged
 *   as an audit trail (incident, author, caller address).
 */

const list = (value: string) =>
  value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');

const listQuery = z.strictObject({
  type: z.string().optional(),
  subject: z.string().optional(),
  severity: z
    .enum(['info', 'warning', 'critical'], { error: 'must be info, warning or critical' })
    .optional(),
  state: z
    .string()
    .optional()
    .transform((value, ctx) => {
      const states = list(value ?? '');
      const unknown = states.filter((state) => !isIncidentState(state));
      if (unknown.length > 0) {
        ctx.addIssue({
          code: 'custom',
          message: `must be any of ${INCIDENT_STATES.join(', ')} (got ${unknown.map((s) => `"${s}"`).join(', ')})`,
        });
        return z.NEVER;
      }
      return states as IncidentStateFilter[];
    }),
  limit: queryInt(1, 1_000).optional(),
  cursor: z.string().optional(),
});

const idParams = z.object({ id: pathId });

export function registerIncidentRoutes(app: FastifyInstance, context: RouteContext): void {
  const { config, redis } = context.options;
  const incidents = new IncidentStore({ redis, prefix: config.redis.prefix, shards: config.redis.shards });
  // Muted by what the config in force says (maintenance windows, inhibition rules follow a reload).
  const current = derived(
    () => context.live().notifications,
    (notifications) =>
      new IncidentReader({
        incidents,
        mutes: createMutes({ notifications, redis, prefix: config.redis.prefix, logger: context.logger }),
      }),
  );

  app.get(
    '/api/incidents',
    {
      config: {
        access: 'read',
        doc: {
          summary: 'Incidents, open ones by default',
          description:
            '`type` and `subject` are globs (comma-separated for several), `severity` a minimum, `state` any of open, active, acknowledged, silenced, inhibited, maintenance, closed, all. Paged like the fleet.',
          tag: 'Incidents',
          query: listQuery,
          responses: { 200: '`{items, nextCursor, ...}`' },
        },
      },
    },
    async (request) => {
      const query = parse(listQuery, request.query, 'query');
      const filter = {
        type: list(query.type ?? ''),
        subject: list(query.subject ?? ''),
        ...(query.severity ? { severity: query.severity } : {}),
        states: query.state,
      };
      const problems = filterProblems(filter);
      if (problems.length > 0) rejectRequest(problems.map((problem) => `query.${problem}`));
      if (query.cursor !== undefined && decodeCursor(query.cursor) === undefined) {
        rejectRequest([
          'query.cursor: is not a cursor this API returned (use nextCursor of the previous page)',
        ]);
      }
      return current().list(filter, {
        limit: query.limit ?? 100,
        ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
      });
    },
  );

  app.get(
    '/api/incidents/:id',
    {
      config: {
        access: 'read',
        doc: {
          summary: 'One incident, open or closed (closed ones are kept 7 days)',
          tag: 'Incidents',
          params: idParams,
          responses: { 200: 'The incident', 404: 'No such incident' },
        },
      },
    },
    async (request) => {
      const { id } = parse(idParams, request.params, 'params');
      const view = await current().one(id);
      if (!view)
        throw notFound(`no incident "${id}" (GET /api/incidents?state=all lists the open and recent ones)`);
      return view;
    },
  );

  app.post(
    '/api/incidents/:id/ack',
    {
      config: {
        access: 'write',
        doc: {
          summary: 'Acknowledge an open incident',
          description:
            'Its reminders stop until it resolves or the acknowledgement ends (`for`, default 4h).',
          tag: 'Incidents',
          params: idParams,
          body: { schema: ackInputSchema, required: true },
          responses: {
            200: 'The incident, acknowledged',
            404: 'No such incident',
            409: 'The incident is not open (`incident_closed`)',
          },
        },
      },
    },
    async (request) => {
      const { id } = parse(idParams, request.params, 'params');
      const outcome = await acknowledgeIncident(
        { incidents, store: context.options.store },
        id,
        request.body ?? {},
      );
      switch (outcome.kind) {
        case 'invalid':
          return rejectRequest(outcome.problems.map((problem) => `body.${problem}`));
        case 'not-found':
          throw notFound(`no incident "${id}" (GET /api/incidents lists the open ones)`);
        case 'closed':
          throw conflict(
            'incident_closed',
            `incident ${id} is not open${outcome.record.closedAt ? ` (closed at ${outcome.record.closedAt})` : ''}: there is nothing to acknowledge`,
          );
        case 'acknowledged':
          audit(
            context.logger,
            request,
            {
              incident: id,
              author: outcome.record.ack?.by,
              until: outcome.record.ack?.until,
              event: outcome.event.id,
            },
            'incident acknowledged through the API',
          );
          return (await current().one(id)) ?? toView(outcome.record, undefined, Date.now());
      }
    },
  );
}
