import { STATUS_CODES } from 'node:http';
import type { z } from 'zod';
import { ROBOT_OPERATIONS } from '../upstream/operations/robot.js';
import { canSeeRobot } from './auth.js';
import {
  authorise,
  type Ctx,
  decodeSegment,
  parseJson,
  preflight,
  readBody,
  type SimDeps,
  sendJson,
} from './http.js';
import {
  fail,
  type Handler,
  ok,
  type Reply,
  ROBOT_HANDLERS,
  unprocessable,
  validate,
} from './robot-handlers.js';

/**
 * The simulator's robot API: `GET /api/robots` and the gateway `/api/platform/{deviceId}/v2/...`,
 * one route per gateway row of the operation table, each served by the handler of its name.
 */

export const gatewayError = (status: number) => ({
  status: 'error',
  message: STATUS_CODES[status] ?? 'error',
  error: { details: `upstream answered ${status}` },
});

interface Route {
  /** The operation's method name. */
  operation: string;
  method: string;
  /** The path below the device, e.g. `/v2/sites/{name}`. */
  pattern: string;
  segments: string[];
  /** The row's request schema: a body that does not match is answered 422 before the handler runs. */
  request: z.ZodType | undefined;
  handler: Handler;
}

const ROUTES: Route[] = ROBOT_OPERATIONS.flatMap((operation) =>
  operation.api === 'gateway'
    ? [
        {
          operation: operation.name,
          method: operation.method,
          pattern: operation.path,
          segments: operation.path.split('/').slice(1),
          request: 'request' in operation ? operation.request : undefined,
          handler: ROBOT_HANDLERS[operation.name],
        },
      ]
    : [],
);

/** Every route the gateway serves: operation name, method and path below the device. */
export const ROBOT_ROUTES: ReadonlyArray<{ operation: string; method: string; path: string }> = ROUTES.map(
  (route) => ({ operation: route.operation, method: route.method, path: route.pattern }),
);

function match(
  method: string,
  sub: string,
): { route: Route; params: Record<string, string> } | 405 | undefined {
  const segments = sub.split('/').slice(1);
  let pathMatched = false;
  for (const route of ROUTES) {
    if (route.segments.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let hit = true;
    for (let i = 0; i < segments.length; i++) {
      const want = route.segments[i]!;
      const got = segments[i]!;
      if (want.startsWith('{')) {
        const value = decodeSegment(got);
        if (!value) {
          hit = false;
          break;
        }
        params[want.slice(1, -1)] = value;
      } else if (want !== got) {
        hit = false;
        break;
      }
    }
    if (!hit) continue;
    if (route.method === method) return { route, params };
    pathMatched = true;
  }
  return pathMatched ? 405 : undefined;
}

/** `GET /api/robots` and the gateway `/api/platform/{deviceId}/v2/...`. */
export function createRobotHandler(deps: SimDeps): (ctx: Ctx) => Promise<void> {
  const reply = (ctx: Ctx, r: Reply, malformed = false) => sendJson(ctx, r.status, r.body, malformed);
  const authFail = (status: 401 | 403) =>
    fail(
      status,
      status === 401 ? 'unauthorized' : 'forbidden',
      status === 401 ? 'bearer token missing or invalid' : 'token does not grant access',
    );

  async function listRobots(ctx: Ctx): Promise<void> {
    ctx.operation = 'list_robots';
    const decision = await preflight(ctx, deps, 'robots', undefined, null, gatewayError);
    if (!decision) return;
    const client = authorise(ctx, deps);
    if (typeof client === 'number') return reply(ctx, authFail(client));
    const data: Array<Record<string, unknown>> = [];
    const ids = client.robotList ?? deps.fleet.robots.keys();
    for (const id of ids) {
      const robot = deps.fleet.robots.get(id);
      if (robot) data.push({ device_id: robot.deviceId, name: robot.name, ...robot.listFields });
    }
    reply(ctx, ok(data), decision.malformed);
  }

  async function gateway(ctx: Ctx): Promise<void> {
    const rest = ctx.path.slice('/api/platform/'.length);
    const slash = rest.indexOf('/');
    const deviceId = decodeSegment(slash < 0 ? rest : rest.slice(0, slash));
    const found = deviceId ? match(ctx.method, slash < 0 ? '' : rest.slice(slash)) : undefined;
    if (found === undefined || found === 405) {
      ctx.operation = 'robot:unknown';
      return reply(ctx, found === 405 ? fail(405, 'method not allowed') : fail(404, 'not found', ctx.path));
    }
    const { route, params } = found;
    ctx.operation = `robot:${route.method} ${route.pattern}`;
    const raw = route.method === 'GET' ? undefined : await readBody(ctx.req);
    const decision = await preflight(ctx, deps, 'robots', deviceId, null, gatewayError);
    if (!decision) return;
    const client = authorise(ctx, deps);
    if (typeof client === 'number') return reply(ctx, authFail(client));
    const robot = deps.fleet.robots.get(deviceId!);
    if (!robot || !canSeeRobot(client, robot.deviceId))
      return reply(ctx, fail(404, 'device not found', deviceId));
    if (!robot.healthy) {
      if (robot.unhealthyMode === 'timeout') return deps.hold(ctx);
      return reply(ctx, fail(503, 'robot unavailable', 'the robot did not answer'));
    }
    let body: unknown;
    if (raw && raw.bytes > 0) {
      if (raw.tooLarge) return reply(ctx, fail(413, 'body too large'));
      const parsed = parseJson(raw.text);
      if (!parsed.ok) return reply(ctx, unprocessable(['body'], 'JSON decode error', 'json_invalid'));
      body = parsed.value;
    }
    if (route.request) {
      const checked = validate(route.request, body);
      if ('reply' in checked) return reply(ctx, checked.reply);
      body = checked.value;
    }
    const query = new URLSearchParams(ctx.query);
    const result = route.handler({ ctx, robot, client, params, body, query, now: ctx.now });
    reply(ctx, result, decision.malformed && result.status < 300);
  }

  return async (ctx) => {
    if (ctx.path !== '/api/robots') return gateway(ctx);
    if (ctx.method === 'GET') return listRobots(ctx);
    ctx.operation = 'robot:unknown';
    reply(ctx, fail(405, 'method not allowed'));
  };
}
