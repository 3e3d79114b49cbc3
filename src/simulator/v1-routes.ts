import { type ClientGrant, canSeeVehicle } from './auth.js';
import type { VehicleRecord } from './fleet-state.js';
import {
  authorise,
  type Ctx,
  decodeSegment,
  preflight,
  readBody,
  type SimDeps,
  sendJson,
  sendRaw,
} from './http.js';

const VEHICLE_ERRORS = [401, 403, 404, 500, 502, 503, 504];

/** The spec's statuses per operation; the simulator answers a /v1 operation with nothing else. */
export const V1_STATUSES: Record<string, ReadonlySet<number>> = {
  list_vehicles: new Set([200, 401, 403, 500]),
  get_vehicle_power_status: new Set([200, ...VEHICLE_ERRORS]),
  request_vehicle_power_on: new Set([202, ...VEHICLE_ERRORS]),
  request_vehicle_power_off: new Set([202, ...VEHICLE_ERRORS]),
};

const MESSAGES: Record<number, string> = {
  401: 'bearer token missing or invalid',
  403: 'token does not grant access to this operation',
  404: 'vehicle not found',
  500: 'internal server error',
  502: 'bad gateway',
  503: 'service unavailable',
  504: 'gateway timeout',
};

export const v1Error = (status: number) => ({ status: 'error', message: MESSAGES[status] ?? 'error' });

function vehicleListJson(vehicles: Iterable<VehicleRecord>): string {
  const parts: string[] = [];
  for (const v of vehicles) {
    if (v.listFields) {
      const element: Record<string, unknown> = { id: v.id };
      if (v.ipAddress !== null) element.ipAddress = v.ipAddress;
      element.vpnConnected = v.vpnConnected;
      parts.push(JSON.stringify({ ...element, ...v.listFields }));
      continue;
    }
    parts.push(
      v.ipAddress === null
        ? `{"id":${JSON.stringify(v.id)},"vpnConnected":${v.vpnConnected}}`
        : `{"id":${JSON.stringify(v.id)},"ipAddress":${JSON.stringify(v.ipAddress)},"vpnConnected":${v.vpnConnected}}`,
    );
  }
  return `{"status":"success","data":[${parts.join(',')}]}`;
}

/** `/v1/...`: the four operations of the spec, and 404 for anything else. */
export function createV1Handler(deps: SimDeps): (ctx: Ctx) => Promise<void> {
  // Serialised list per client, rebuilt only when the list changed.
  const listCache = new Map<string, { version: number; json: string }>();

  function* visible(client: ClientGrant): Iterable<VehicleRecord> {
    if (client.vehicleList === null) {
      yield* deps.fleet.vehicles.values();
      return;
    }
    for (const id of client.vehicleList) {
      const v = deps.fleet.vehicles.get(id);
      if (v) yield v;
    }
  }

  function send(ctx: Ctx, status: number, body: unknown, malformed = false): void {
    if (!V1_STATUSES[ctx.operation]?.has(status)) {
      deps.stats.violation(ctx.operation, 'server', `answered ${status}, which the spec does not list`);
    }
    if (typeof body === 'string') sendRaw(ctx, status, body, malformed);
    else sendJson(ctx, status, body, malformed);
  }

  return async (ctx) => {
    const parts = ctx.path.split('/');
    let vehicleId: string | undefined;
    if (ctx.path === '/v1/vehicles' && ctx.method === 'GET') {
      ctx.operation = 'list_vehicles';
    } else if (parts.length === 6 && parts[2] === 'vehicles' && parts[4] === 'power' && parts[3] !== '') {
      vehicleId = decodeSegment(parts[3]!);
      const action = `${ctx.method} ${parts[5]}`;
      if (action === 'GET status') ctx.operation = 'get_vehicle_power_status';
      else if (action === 'POST on') ctx.operation = 'request_vehicle_power_on';
      else if (action === 'POST off') ctx.operation = 'request_vehicle_power_off';
    }
    const allowed = V1_STATUSES[ctx.operation];
    if (!allowed || (ctx.operation !== 'list_vehicles' && vehicleId === undefined)) {
      ctx.operation = 'v1:unknown';
      sendJson(ctx, 404, { status: 'error', message: 'not found' });
      return;
    }

    if (ctx.query !== '')
      deps.stats.violation(ctx.operation, 'client', 'query parameters sent; the spec has none');
    if (ctx.method === 'POST') {
      // The spec forbids a body but lists no 400, so record the violation and carry on.
      const body = await readBody(ctx.req, 64 * 1024);
      if (body.bytes > 0)
        deps.stats.violation(ctx.operation, 'client', 'request body sent; no body must be sent');
    }

    const decision = await preflight(ctx, deps, 'v1', vehicleId, allowed, v1Error);
    if (!decision) return;
    const client = authorise(ctx, deps);
    if (typeof client === 'number') return send(ctx, client, v1Error(client));

    if (ctx.operation === 'list_vehicles') {
      const version = deps.fleet.vehicleListVersion;
      let cached = listCache.get(client.id);
      if (!cached || cached.version !== version) {
        cached = { version, json: vehicleListJson(visible(client)) };
        listCache.set(client.id, cached);
      }
      return send(ctx, 200, cached.json, decision.malformed);
    }

    const vehicle = deps.fleet.vehicles.get(vehicleId!);
    if (!vehicle?.powerCapable || !canSeeVehicle(client, vehicle.id)) {
      return send(ctx, 404, v1Error(404));
    }
    if (ctx.operation === 'get_vehicle_power_status') {
      deps.fleet.settle(vehicle, ctx.now);
      const data = {
        state: vehicle.state,
        pendingCommand: vehicle.pending ? { state: vehicle.pending.state } : null,
        updatedAt: vehicle.updatedAt === null ? null : new Date(vehicle.updatedAt).toISOString(),
      };
      return send(ctx, 200, { status: 'success', data }, decision.malformed);
    }
    const target = ctx.operation === 'request_vehicle_power_on' ? 'on' : 'off';
    deps.fleet.requestPower(vehicle, target, ctx.now, deps.behaviours.decideStuck());
    send(ctx, 202, { status: 'success' }, decision.malformed);
  };
}
