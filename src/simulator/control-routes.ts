import { SimControlError } from './control.js';
import { type Ctx, decodeSegment, parseJson, readBody, sendJson } from './http.js';
import type { SimulatorControl } from './types.js';

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

/**
 * HTTP control API under `/_sim` (plain JSON, no envelope, errors `{ error }`). It has no
 * authentication, so it answers loopback callers only, even when the simulator binds elsewhere.
 *
 *   GET /_sim/state · GET|PUT|DELETE /_sim/faults · GET|PUT /_sim/behaviours
 *   POST /_sim/vehicles · GET|PATCH|DELETE /_sim/vehicles/{id}
 *   POST /_sim/robots · GET|PATCH|DELETE /_sim/robots/{deviceId}
 *   POST /_sim/tokens/expire · GET|DELETE /_sim/stats · POST /_sim/reset
 */
export function createControlHandler(control: SimulatorControl): (ctx: Ctx) => Promise<void> {
  return async (ctx) => {
    ctx.operation = 'control';
    if (!LOOPBACK.test(ctx.req.socket.remoteAddress ?? '')) {
      return sendJson(ctx, 403, { error: 'the control API answers loopback callers only' });
    }
    const body = ctx.method === 'GET' || ctx.method === 'DELETE' ? undefined : await readBody(ctx.req);
    let payload: unknown;
    if (body && body.bytes > 0) {
      const parsed = body.tooLarge ? { ok: false as const } : parseJson(body.text);
      if (!parsed.ok) return sendJson(ctx, 400, { error: 'body must be valid JSON (at most 1 MiB)' });
      payload = parsed.value;
    }
    const segments = ctx.path.split('/').slice(2);
    const route = `${ctx.method} ${segments.length > 1 && (segments[0] === 'vehicles' || segments[0] === 'robots') ? `${segments[0]}/:id` : segments.join('/')}`;
    const id = segments.length === 2 ? decodeSegment(segments[1]!) : undefined;
    const found = (value: unknown, what: string) =>
      value ? sendJson(ctx, 200, value) : sendJson(ctx, 404, { error: `no ${what} '${id ?? ''}'` });

    try {
      switch (route) {
        case 'GET state':
          return sendJson(ctx, 200, control.state());
        case 'GET faults':
          return sendJson(ctx, 200, control.getFaults());
        case 'PUT faults':
          return sendJson(ctx, 200, control.setFaults(payload as never));
        case 'DELETE faults':
          control.clearFaults();
          return sendJson(ctx, 200, control.getFaults());
        case 'GET behaviours':
          return sendJson(ctx, 200, { behaviours: control.state().behaviours });
        case 'PUT behaviours':
          return sendJson(ctx, 200, { behaviours: control.setBehaviours(payload as never) });
        case 'POST vehicles':
          return sendJson(ctx, 201, control.addVehicle(payload as never));
        case 'GET vehicles/:id':
          return found(id && control.getVehicle(id), 'vehicle');
        case 'PATCH vehicles/:id':
          return sendJson(ctx, 200, control.updateVehicle(id ?? '', payload as never));
        case 'DELETE vehicles/:id':
          return found(id && control.removeVehicle(id) ? { removed: id } : undefined, 'vehicle');
        case 'POST robots':
          return sendJson(ctx, 201, control.addRobot(payload as never));
        case 'GET robots/:id':
          return found(id && control.getRobot(id), 'robot');
        case 'PATCH robots/:id':
          return sendJson(ctx, 200, control.updateRobot(id ?? '', payload as never));
        case 'DELETE robots/:id':
          return found(id && control.removeRobot(id) ? { removed: id } : undefined, 'robot');
        case 'POST tokens/expire':
          return sendJson(ctx, 200, { expired: control.expireTokens() });
        case 'GET stats':
          return sendJson(ctx, 200, control.stats());
        case 'DELETE stats':
          control.resetStats();
          return sendJson(ctx, 200, control.stats());
        case 'POST reset':
          control.reset();
          return sendJson(ctx, 200, { reset: true });
        default:
          return sendJson(ctx, 404, { error: `no control route ${ctx.method} ${ctx.path}` });
      }
    } catch (error) {
      if (error instanceof SimControlError) return sendJson(ctx, error.status, { error: error.message });
      throw error;
    }
  };
}
