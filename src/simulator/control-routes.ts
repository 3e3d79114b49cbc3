import { SimControlError } from './control.js';
import type { ControlAccess } from './control-access.js';
import { type Ctx, decodeSegment, parseJson, readBody, sendJson } from './http.js';
import type { SimulatorControl } from './types.js';

/** What `/_sim/vehicles` and `/_sim/robots` do, per kind: add, read, change, remove one. */
interface EntityRoutes {
  noun: string;
  add(payload: never): unknown;
  get(id: string): unknown;
  update(id: string, payload: never): unknown;
  remove(id: string): boolean;
}

function entityRoutes(control: SimulatorControl, noun: 'vehicle' | 'robot'): EntityRoutes {
  const kind = noun === 'vehicle' ? 'Vehicle' : 'Robot';
  return {
    noun,
    add: (payload) => control[`add${kind}`](payload),
    get: (id) => control[`get${kind}`](id),
    update: (id, payload) => control[`update${kind}`](id, payload),
    remove: (id) => control[`remove${kind}`](id),
  };
}

/**
 * HTTP control API under `/_sim` (plain JSON, no envelope, errors `{ error }`). It has no
 * authentication, so it answers only callers `access` allows (loopback unless `--control-from`
 * says otherwise), even when the simulator binds elsewhere.
 *
 *   GET /_sim/state · GET|PUT|DELETE /_sim/faults · GET|PUT /_sim/behaviours · GET|PATCH /_sim/issuer
 *   POST /_sim/vehicles · GET|PATCH|DELETE /_sim/vehicles/{id}
 *   POST /_sim/robots · GET|PATCH|DELETE /_sim/robots/{deviceId}
 *   POST /_sim/tokens/expire · GET|DELETE /_sim/stats · POST /_sim/reset
 */
export function createControlHandler(
  control: SimulatorControl,
  access: ControlAccess,
): (ctx: Ctx) => Promise<void> {
  const entities = { vehicles: entityRoutes(control, 'vehicle'), robots: entityRoutes(control, 'robot') };
  return async (ctx) => {
    ctx.operation = 'control';
    const caller = ctx.req.socket.remoteAddress;
    if (!access.allows(caller)) {
      return sendJson(ctx, 403, {
        error:
          `the control API answers callers from ${access.networks.join(', ')} only, not ${caller ?? 'an unknown address'}` +
          ' (fleetwatch simulate --control-from <cidr> allows more)',
      });
    }
    const body = ctx.method === 'GET' || ctx.method === 'DELETE' ? undefined : await readBody(ctx.req);
    let payload: unknown;
    if (body && body.bytes > 0) {
      const parsed = body.tooLarge ? { ok: false as const } : parseJson(body.text);
      if (!parsed.ok) return sendJson(ctx, 400, { error: 'body must be valid JSON (at most 1 MiB)' });
      payload = parsed.value;
    }
    const segments = ctx.path.split('/').slice(2);
    const route = `${ctx.method} ${segments.join('/')}`;
    const id = segments.length === 2 ? decodeSegment(segments[1]!) : undefined;
    const found = (value: unknown, what: string) =>
      value ? sendJson(ctx, 200, value) : sendJson(ctx, 404, { error: `no ${what} '${id ?? ''}'` });
    const noRoute = () => sendJson(ctx, 404, { error: `no control route ${ctx.method} ${ctx.path}` });
    /** `POST /_sim/{kind}`, `GET|PATCH|DELETE /_sim/{kind}/{id}`. */
    const entityRoute = (entity: EntityRoutes) => {
      switch (`${ctx.method} ${segments.length > 1 ? 'one' : 'all'}`) {
        case 'POST all':
          return sendJson(ctx, 201, entity.add(payload as never));
        case 'GET one':
          return found(id && entity.get(id), entity.noun);
        case 'PATCH one':
          return sendJson(ctx, 200, entity.update(id ?? '', payload as never));
        case 'DELETE one':
          return found(id && entity.remove(id) ? { removed: id } : undefined, entity.noun);
        default:
          return noRoute();
      }
    };

    try {
      if (segments[0] === 'vehicles' || segments[0] === 'robots') return entityRoute(entities[segments[0]]);
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
        case 'GET issuer':
          return sendJson(ctx, 200, control.getIssuer());
        case 'PATCH issuer':
          return sendJson(ctx, 200, control.updateIssuer(payload as never));
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
          return noRoute();
      }
    } catch (error) {
      if (error instanceof SimControlError) return sendJson(ctx, error.status, { error: error.message });
      throw error;
    }
  };
}
