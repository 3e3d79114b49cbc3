import { setMaxListeners } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { pino } from 'pino';
import { DEFAULT_CLIENTS, TokenIssuer } from './auth.js';
import { Behaviours } from './behaviours.js';
import { createControl } from './control.js';
import { ControlAccess } from './control-access.js';
import { createControlHandler } from './control-routes.js';
import { FaultInjector } from './faults.js';
import { FleetState } from './fleet-state.js';
import { type Ctx, type SimDeps, sendJson } from './http.js';
import { deriveSeed } from './prng.js';
import { createRobotHandler } from './robot-routes.js';
import { seedFleet } from './seed.js';
import { Stats } from './stats.js';
import { handleToken } from './token-route.js';
import type { Simulator, SimulatorOptions } from './types.js';
import { createV1Handler } from './v1-routes.js';

/** A held (never answered) request is dropped after this long so a long run does not pile sockets up. */
const HOLD_LIMIT_MS = 10 * 60_000;

/**
 * Starts the upstream simulator: token issuer, `/v1`, `/api/robots`, the robot gateway and the
 * `/_sim` control API on one HTTP server (loopback by default). The control API has no
 * authentication and answers only callers from `opts.controlFrom` (loopback by default), wherever
 * the server binds. Throws before listening when `controlFrom` names no valid network.
 */
export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const host = opts.host ?? '127.0.0.1';
  const access = new ControlAccess(opts.controlFrom);
  const seed = opts.seed ?? 1;
  const vehicles = opts.vehicles ?? 20;
  const robots = opts.robots ?? 5;
  const logger = opts.logger ?? pino({ enabled: false });
  const closing = new AbortController();
  // Every delayed answer listens to it: hundreds at once under latency faults, not the default 10.
  setMaxListeners(0, closing.signal);
  const held = new Set<ServerResponse>();

  const fleet = new FleetState(opts.powerDelayMs ?? 3000);
  seedFleet(fleet, seed, vehicles, robots, Date.now());
  const tokens = new TokenIssuer(opts.clients ?? DEFAULT_CLIENTS, {
    ...(opts.tokenTtlSeconds === undefined ? {} : { tokenTtlSeconds: opts.tokenTtlSeconds }),
    ...opts.issuer,
  });
  const faults = new FaultInjector(deriveSeed(seed, 1));
  const initialFaults = faults.set(opts.faults ?? {});
  const stats = new Stats();
  const behaviours = new Behaviours(fleet, deriveSeed(seed, 2), logger);

  let url = '';
  const deps: SimDeps = {
    get url() {
      return url;
    },
    fleet,
    tokens,
    faults,
    stats,
    behaviours,
    logger,
    hold(ctx) {
      stats.request(ctx.operation, 'timeout');
      const { res } = ctx;
      held.add(res);
      const drop = setTimeout(() => res.destroy(), HOLD_LIMIT_MS).unref();
      res.once('close', () => {
        clearTimeout(drop);
        held.delete(res);
      });
    },
    sleep: (ms) => delay(ms, true, { signal: closing.signal, ref: false }).catch(() => false),
  };
  const control = createControl({
    url: () => url,
    seed,
    vehicles,
    robots,
    initialFaults,
    fleet,
    tokens,
    faults,
    stats,
    behaviours,
  });
  const v1 = createV1Handler(deps);
  const robotApi = createRobotHandler(deps);
  const controlApi = createControlHandler(control, access);

  const server = createServer((req, res) => {
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    const ctx: Ctx = {
      req,
      res,
      method: req.method ?? 'GET',
      path: q < 0 ? raw : raw.slice(0, q),
      query: q < 0 ? '' : raw.slice(q + 1),
      now: Date.now(),
      operation: 'unknown',
    };
    res.once('finish', () => {
      if (ctx.operation !== 'control') stats.request(ctx.operation, res.statusCode);
    });
    const p = ctx.path;
    const route = p.startsWith('/v1/')
      ? v1
      : p === '/api/robots' || p.startsWith('/api/platform/')
        ? robotApi
        : p === '/oauth/token'
          ? (c: Ctx) => handleToken(c, deps)
          : p.startsWith('/_sim/')
            ? controlApi
            : async (c: Ctx) => sendJson(c, 404, { status: 'error', message: 'not found' });
    route(ctx).catch((error: unknown) => {
      logger.error({ err: error, operation: ctx.operation }, 'simulator request failed');
      // 500 is in the spec's list for every /v1 operation.
      sendJson(ctx, 500, { status: 'error', message: 'internal server error' });
    });
  });
  server.keepAliveTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // A deep backlog so a burst of new connections (a poller fanning out) is not dropped and retried.
    server.listen({ port: opts.port ?? 0, host, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost =
    host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  url = `http://${shownHost}:${port}`;
  if (opts.behaviours) behaviours.configure(opts.behaviours);
  logger.info({ url, seed, vehicles, robots }, 'simulator listening');

  let closed: Promise<void> | undefined;
  return {
    url,
    control,
    close() {
      closed ??= new Promise<void>((resolve) => {
        behaviours.stop();
        closing.abort();
        for (const res of held) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
        logger.info({ url }, 'simulator closed');
      });
      return closed;
    },
  };
}
