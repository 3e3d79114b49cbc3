import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { type FacetSnapshot, FleetReadModel } from '../../fleet/index.js';
import { linkedSignal } from '../../lib/linked-signal.js';
import { OPERATION_BODY_MAX_BYTES } from '../../operations/operation-body.js';
import type { FacetOf } from '../../pollers/registry.js';
import { UpstreamError } from '../../upstream/errors.js';
import type { GatewayOperation } from '../../upstream/operations/robot.js';
import { ROBOT_OPERATIONS } from '../../upstream/operations/robot.js';
import { hasBodyParams, type OperationParam, paramsOf } from '../../upstream/operations/types.js';
import { audit } from '../audit.js';
import type { RouteContext } from '../context.js';
import { ApiError, fromRobotUpstream, MAX_ROBOT_DETAIL_CHARS, unavailable } from '../errors.js';
import type { ResponseDoc, RouteDoc } from '../route-doc.js';
import { parse, pathId, queryFlag, rejectRequest } from '../validate.js';

/**
 * Every operation of the robot gateway as a route of this API, registered from the operation table
 * (`ROBOT_OPERATIONS`, the rows with `api: 'gateway'`) by one registrar: the upstream path below
 * `/v2` under `/api/robots/{deviceId}` (`GET /v2/sites/{name}` → `GET
 * /api/robots/{deviceId}/sites/{name}`), the same method, the row's query parameters and body.
 *
 * - Reads (GET, `read` access) ask the robot now, retried like every upstream read, and answer
 *   `{ deviceId, operation, live, snapshot }`: `live` is the robot's whole answer, `snapshot` what
 *   fleetwatch last stored of the facet a poller keeps from that read (`SNAPSHOT_FACETS`: times,
 *   last error and the facet's fields as in `/api/robots/{id}`), null for reads no poller keeps.
 * - Writes (`write` access) are sent once, never retried. The body is checked before anything is
 *   sent (the row's request schema, else a JSON object; no body where the row takes none): a 400
 *   names the field. They answer `{ deviceId, operation, live }`, and each one sent is an audit
 *   line (operation, device, `{name}`, destructive, the answer's status and the robot's).
 * - The robot's refusals map as `fromRobotUpstream` says: 404, 403 `upstream_forbidden`, 400 / 409 /
 *   422 with the robot's words; 502 / 504 for the gateway's own trouble.
 *
 * The robot listing (`GET /api/robots` upstream) is not among them: `/api/robots` is the fleet as
 * fleetwatch observed it.
 */

type RobotFacet = FacetOf<'robot'>;

/** The facet a poller stores from each read; a read not named here has no snapshot. */
export const SNAPSHOT_FACETS: { readonly [Name in GatewayOperation['name']]?: RobotFacet } = {
  health: 'health',
  platformFeedback: 'feedback',
  teleopStatus: 'lease',
  activeSite: 'config',
  loadedRoute: 'config',
  loadedZoneSet: 'config',
  commandQueue: 'command_queue',
};

export const GATEWAY_OPERATIONS: readonly GatewayOperation[] = ROBOT_OPERATIONS.filter(
  (row): row is GatewayOperation => row.api === 'gateway',
);

/** The route of a row: `/v2/sites/{name}` → `/api/robots/:deviceId/sites/:name`. */
export function robotRoutePath(row: GatewayOperation): string {
  return `/api/robots/:deviceId${row.path.replace(/^\/v2/, '').replace(/\{(\w+)\}/g, ':$1')}`;
}

const FREE_OBJECT = z.record(z.string(), z.unknown(), { error: 'must be a JSON object' });

/** A query value: a flag, or a bounded string. */
function queryField(param: OperationParam): z.ZodType {
  const field =
    param.type === 'boolean' ? queryFlag : z.string().max(200, { error: 'must be at most 200 characters' });
  return (param.required ? field : field.optional()).describe(param.description);
}

/** The schemas a row's route parses its request with (and documents). */
export interface RobotRouteSchemas {
  params: z.ZodObject;
  query: z.ZodObject | undefined;
  /** Absent: the row takes no body. */
  body: z.ZodType | undefined;
}

export function robotRouteSchemas(row: GatewayOperation): RobotRouteSchemas {
  const params = paramsOf(row);
  const path = Object.fromEntries(
    params
      .filter((param) => param.in === 'path')
      .map((param) => [param.name, pathId.describe(param.description)]),
  );
  const query = params.filter((param) => param.in === 'query');
  const bodyFields = params.filter((param) => param.in === 'body');
  const request = 'request' in row ? row.request : undefined;
  let body: z.ZodType | undefined;
  if (row.body !== 'none') {
    body =
      request ??
      (bodyFields.length > 0
        ? z.looseObject(
            Object.fromEntries(
              bodyFields.map((param) => [param.name, param.required ? z.string() : z.string().optional()]),
            ),
          )
        : FREE_OBJECT);
  }
  return {
    params: z.object(path),
    query:
      query.length > 0
        ? z.strictObject(Object.fromEntries(query.map((param) => [param.name, queryField(param)])))
        : undefined,
    body,
  };
}

/** The fields of a read's `snapshot`: see `FleetReadModel.facet`. */
const snapshotSchema = z
  .looseObject({
    facet: z.string(),
    observedAt: z.string().nullable(),
    lastSeenAt: z.string().nullable(),
    lastPolledAt: z.string().nullable(),
    lastError: z
      .object({ signal: z.string(), code: z.string(), status: z.number().optional(), message: z.string() })
      .nullable(),
  })
  .describe(
    'The facet as fleetwatch last stored it, with its fields as in /api/robots/{id}; null before the first poll',
  );

function answerSchema(row: GatewayOperation): z.ZodType {
  const base = {
    deviceId: z.string(),
    operation: z.literal(row.id),
    live: row.response,
  };
  if (row.method !== 'GET') return z.object(base);
  const facet = SNAPSHOT_FACETS[row.name];
  return z.object({
    ...base,
    snapshot: facet
      ? snapshotSchema.nullable()
      : z.null().describe('fleetwatch keeps no snapshot of this read'),
  });
}

function robotRouteDoc(row: GatewayOperation, schemas: RobotRouteSchemas): RouteDoc {
  const write = row.method !== 'GET';
  const facet = SNAPSHOT_FACETS[row.name];
  const responses: Record<number, ResponseDoc | string> = {
    200: {
      description: write ? 'Done: the robot accepted it' : 'The robot answered',
      schema: answerSchema(row),
    },
    400: 'The request is not valid (the message names the field); nothing was sent, or the robot said so (`upstream_bad_request`)',
    403: 'The robot refused this client (`upstream_forbidden`: a lease held by another user, a device not granted)',
    404: 'No such robot, or no such document on it, or not available to this client',
    502: 'The gateway or the robot failed, or answered something unreadable',
    504: 'The robot did not answer in time',
  };
  if (write) {
    responses[409] = `The robot's state does not allow it (\`upstream_conflict\`; its words in \`details.upstreamMessage\`, at most ${MAX_ROBOT_DETAIL_CHARS} characters)`;
    responses[422] =
      'The robot found the body invalid (`upstream_unprocessable`; its words in `details.upstreamMessage`)';
  }
  const lines = [
    `\`${row.method} /v2${row.path.slice('/v2'.length)}\` on the robot, through the device gateway, ${write ? 'sent once (never retried)' : 'asked now (retried on gateway trouble)'}.`,
  ];
  if (facet) lines.push(`\`snapshot\`: the \`${facet}\` facet fleetwatch last stored.`);
  if (row.destructive) lines.push('**Destructive**: it deletes or stops something on the robot.');
  return {
    summary: row.summary,
    description: lines.join('\n\n'),
    tag: `Robot: ${row.group}`,
    operationId: row.id,
    params: schemas.params,
    ...(schemas.query ? { query: schemas.query } : {}),
    ...(schemas.body
      ? { body: { schema: schemas.body, required: row.body === 'required' || hasBodyParams(row) } }
      : {}),
    responses,
    extensions: { 'x-destructive': row.destructive, 'x-upstream-operation': row.id },
  };
}

/** The row's method arguments: its parameters in order (device id first), then the body, as the client takes them. */
function argumentsOf(
  row: GatewayOperation,
  values: Readonly<Record<string, unknown>>,
  body: unknown,
): unknown[] {
  const args = paramsOf(row).map((param) => values[param.name]);
  if (!hasBodyParams(row) && row.body !== 'none') args.push(body);
  return args;
}

/**
 * Checks the body as the row takes it, refusing it with a 400 before anything is sent; returns the
 * values of the row's body parameters (`to` of a lease transfer), if it has any.
 */
function checkedBody(
  row: GatewayOperation,
  schema: z.ZodType | undefined,
  body: unknown,
): Record<string, unknown> {
  // A row without a body schema documents none: the server refused a body before (`refuseBody`).
  if (schema === undefined) return {};
  if (body === undefined) {
    if (row.body === 'required' || hasBodyParams(row)) rejectRequest(['body: is required (a JSON object)']);
    return {};
  }
  const parsed = parse(schema, body, 'body') as Record<string, unknown>;
  const fields = row.params.filter((param) => param.in === 'body');
  return Object.fromEntries(fields.map((param) => [param.name, parsed[param.name]]));
}

export function registerRobotRoutes(app: FastifyInstance, context: RouteContext): void {
  const robots = context.options.upstream.robots;
  const model = new FleetReadModel(context.options.store);
  // `answer` is typed per row; the registrar holds rows of every shape, and `argumentsOf` builds the
  // arguments from the row itself, as `requestFor` reads them.
  const call = robots.answer.bind(robots) as unknown as (
    name: string,
    ...args: unknown[]
  ) => Promise<unknown>;

  for (const row of GATEWAY_OPERATIONS) {
    const schemas = robotRouteSchemas(row);
    const write = row.method !== 'GET';
    const facet = SNAPSHOT_FACETS[row.name];
    const path = robotRoutePath(row);

    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const params = parse(schemas.params, request.params, 'params') as Record<string, string>;
      const query = schemas.query
        ? (parse(schemas.query, request.query, 'query') as Record<string, unknown>)
        : {};
      if (!schemas.query && Object.keys((request.query ?? {}) as object).length > 0) {
        rejectRequest([`query: ${row.method} ${path} takes no query parameters`]);
      }
      const body = checkedBody(row, schemas.body, request.body);
      const deviceId = params['deviceId']!;
      const args = argumentsOf(row, { ...params, ...query, ...body }, request.body);
      // A read ends when its client goes; a write, once sent, is waited for (and audited).
      const gone = write ? undefined : linkedSignal([context.closing]);
      const onClose = () => {
        if (!reply.sent) gone?.abort();
      };
      if (gone) reply.raw.once('close', onClose);
      const signal = gone?.signal ?? context.closing;
      try {
        if (!write) {
          const [live, snapshot] = await Promise.all([
            call(row.name, ...args, { signal }),
            facet ? model.facet('robot', deviceId, facet) : undefined,
          ]);
          return { deviceId, operation: row.id, live, snapshot: snapshot ? flatten(snapshot) : null };
        }
        const what = {
          operation: row.id,
          deviceId,
          ...(typeof params['name'] === 'string' ? { name: params['name'] } : {}),
          destructive: row.destructive,
        };
        let live: unknown;
        try {
          live = await call(row.name, ...args, { signal });
        } catch (error) {
          if (!(error instanceof UpstreamError)) throw error;
          const answer = fromRobotUpstream(error);
          audit(
            context.logger,
            request,
            { ...what, status: answer.statusCode, upstreamStatus: error.status ?? null, error: answer.code },
            'robot operation refused through the API',
          );
          throw answer;
        }
        audit(context.logger, request, { ...what, status: 200 }, 'robot operation done through the API');
        return { deviceId, operation: row.id, live };
      } catch (error) {
        if (error instanceof UpstreamError) throw fromRobotUpstream(error);
        if (signal.aborted && !(error instanceof ApiError)) {
          reply.header('connection', 'close');
          throw unavailable(`${row.id} for robot "${deviceId}" was interrupted: fleetwatch is shutting down`);
        }
        throw error;
      } finally {
        reply.raw.off('close', onClose);
        gone?.release();
      }
    };

    app.route({
      method: row.method,
      url: path,
      // A site or route with many poses is larger than the API's usual limit: the CLI's limit.
      ...(write ? { bodyLimit: OPERATION_BODY_MAX_BYTES } : {}),
      config: { access: write ? 'write' : 'read', doc: robotRouteDoc(row, schemas) },
      handler,
    });
  }
}

/** `{ facet, times, fields: { config: … } }` → `{ facet, times, config: … }`. */
function flatten(snapshot: FacetSnapshot): Record<string, unknown> {
  const { fields, ...rest } = snapshot;
  return { ...rest, ...fields };
}
