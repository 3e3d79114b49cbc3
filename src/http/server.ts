import { setMaxListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { EventLog } from '../store/event-log.js';
import { createGuard } from './auth.js';
import type { HttpServerOptions, HttpTuning, RouteContext } from './context.js';
import { isPreflightRoute, registerCors } from './cors.js';
import {
  ANSWER_HEADERS,
  clientErrorHandler,
  errorBody,
  errorHandler,
  frameworkErrorHandler,
  MAX_BODY_BYTES,
  MAX_PATH_SEGMENT,
} from './errors.js';
import { RouteTable } from './route-table.js';
import { registerConsoleRoutes } from './routes/console.js';
import { registerDeadLetterRoutes } from './routes/dead-letters.js';
import { collectRouteDocs, registerDocRoutes } from './routes/docs.js';
import { registerEventStreamRoute } from './routes/event-stream.js';
import { registerEventRoutes } from './routes/events.js';
import { registerFleetRoutes } from './routes/fleet.js';
import { registerIncidentRoutes } from './routes/incidents.js';
import { registerMaintenanceRoutes } from './routes/maintenance.js';
import { registerPowerRoutes } from './routes/power.js';
import { registerProbeRoutes } from './routes/probes.js';
import { registerQueueBoard } from './routes/queues.js';
import { registerReceiverRoutes } from './routes/receivers.js';
import { registerReloadRoute } from './routes/reload.js';
import { registerRobotRoutes } from './routes/robots.js';
import { registerSessionRoutes } from './routes/session.js';
import { registerSilenceRoutes } from './routes/silences.js';
import { isLoopbackAddress } from './sessions.js';
import { refuseBody } from './validate.js';

export type { HttpServerOptions, HttpTuning, MetricsSource } from './context.js';

/**
 * fleetwatch's one HTTP server (fastify), on `http.host:http.port`: Prometheus `/metrics`, the
 * `/healthz` and `/readyz` probes, the JSON API under `/api` and the Bull Board queue UI under
 * `/admin/queues`. Auth is in auth.ts (tokens.ts, sessions.ts, csrf.ts), CORS in cors.ts, errors
 * in errors.ts, each area's routes in routes/.
 *
 * Closing: long-lived requests (SSE streams, `?wait=true` power requests) are ended first (the
 * `closing` signal), then fastify stops accepting and waits for the rest.
 */

const DEFAULT_TUNING: Required<HttpTuning> = {
  heartbeatMs: 15_000,
  readyCacheMs: 1_000,
  readyTimeoutMs: 500,
  powerPollMs: 2_000,
  streamConnectTimeoutMs: 5_000,
};

/** Builds the app with every route (not listening: `inject` works on it). */
export async function buildHttpApp(options: HttpServerOptions): Promise<FastifyInstance> {
  const logger = options.logger.child({ component: 'http' });
  const closing = new AbortController();
  // Every request under way that may wait follows it (linkedSignal): more than EventTarget's 10.
  setMaxListeners(0, closing.signal);
  const app: FastifyInstance = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // Requests are logged at debug by the onResponse hook below (probes and scrapes are frequent).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: MAX_BODY_BYTES,
    // `/api/vehicles/` answers like `/api/vehicles`; a dead-letter id is longer than the default 100.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PATH_SEGMENT },
    // What fastify and node refuse before a route runs is answered in the API's error shape too.
    frameworkErrors: frameworkErrorHandler(logger),
    clientErrorHandler: clientErrorHandler(logger),
  });
  const routes = new RouteTable();
  // The CORS preflight route (cors.ts) is no path of the API: a request it does not answer gets 405/404.
  app.addHook('onRoute', (route) => {
    if (!isPreflightRoute(route.method, route.url)) routes.add(route.method, route.url);
  });
  const docs = collectRouteDocs(app);

  const context: RouteContext = {
    options,
    live: options.live ?? (() => options.config),
    logger,
    guard: createGuard({
      http: options.config.http,
      redis: options.redis,
      prefix: options.config.redis.prefix,
    }),
    eventLog: new EventLog({
      redis: options.redis,
      prefix: options.config.redis.prefix,
      shards: options.config.redis.shards,
      logger,
    }),
    closing: closing.signal,
    tuning: { ...DEFAULT_TUNING, ...options.tuning },
  };

  // An empty body with a JSON content type (`curl -X POST -H 'content-type: application/json'`) is no body.
  const json = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    return json(request, text, done);
  });

  // Only JSON bodies: anything else is a 415 naming the type to send, not a 400 about the body.
  app.removeContentTypeParser('text/plain');

  // One rule for every documented route: a body where the route takes none is a 400, not ignored.
  app.addHook('preValidation', async (request) => {
    const doc = request.routeOptions.config.doc;
    if (doc && !doc.body && request.body !== undefined)
      refuseBody(request.method, request.routeOptions.url ?? '');
  });

  app.setErrorHandler(errorHandler(logger));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = routes.allowed(path);
    if (allowed.length > 0) {
      return reply
        .code(405)
        .header('allow', allowed.join(', '))
        .send(
          errorBody(
            'method_not_allowed',
            `${request.method} is not allowed on ${path}; it takes ${allowed.join(', ')}`,
          ),
        );
    }
    return reply.code(404).send(errorBody('not_found', `no such endpoint: ${request.method} ${path}`));
  });
  await registerCors(app, options.config.http.cors.origins);
  app.addHook('onRequest', context.guard.hook);
  app.addHook('onSend', async (_request, reply, payload) => {
    // A route that chose its own caching (the console's files) keeps it.
    for (const [name, value] of Object.entries(ANSWER_HEADERS)) {
      if (!reply.hasHeader(name)) reply.header(name, value);
    }
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    logger.debug(
      {
        method: request.method,
        route: request.routeOptions.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'http request',
    );
  });
  app.addHook('preClose', async () => {
    closing.abort(new Error('fleetwatch is shutting down'));
  });

  registerProbeRoutes(app, context);
  registerFleetRoutes(app, context);
  registerPowerRoutes(app, context);
  registerEventRoutes(app, context);
  registerEventStreamRoute(app, context);
  registerSilenceRoutes(app, context);
  registerMaintenanceRoutes(app, context);
  registerIncidentRoutes(app, context);
  registerDeadLetterRoutes(app, context);
  registerReceiverRoutes(app, context);
  registerReloadRoute(app, context);
  registerSessionRoutes(app, context);
  registerConsoleRoutes(app, context);
  registerRobotRoutes(app, context);
  registerDocRoutes(app, context, docs);
  await registerQueueBoard(app, context);
  await app.ready();
  return app;
}

/** The server as the daemon runs it: `start()` listens, `close()` ends everything. */
export class HttpServer {
  readonly #options: HttpServerOptions;
  #app: FastifyInstance | undefined;
  #address: string | undefined;
  #starting: Promise<string> | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: HttpServerOptions) {
    this.#options = options;
  }

  /** `http://<host>:<port>` once listening; undefined before (or when listening failed). */
  get address(): string | undefined {
    return this.#address;
  }

  /** Resolves with the address once listening, or with undefined when listening failed. */
  get listening(): Promise<string | undefined> {
    return this.start().catch(() => undefined);
  }

  /** The fastify app once started (tests). */
  get app(): FastifyInstance | undefined {
    return this.#app;
  }

  /** Listens on `http.host:http.port`; resolves with the address. Rejects when it cannot listen. */
  start(): Promise<string> {
    this.#starting ??= this.#start();
    return this.#starting;
  }

  async #start(): Promise<string> {
    const { host, port, api_token: token, tokens } = this.#options.config.http;
    const app = await buildHttpApp(this.#options);
    this.#app = app;
    if (this.#closing) throw new Error('the HTTP server was closed before it started');
    try {
      await app.listen({
        host,
        port,
        listenTextResolver: (address) =>
          `HTTP server listening on ${address} (/metrics, /healthz, /readyz, /api, /admin/queues)`,
      });
    } catch (error) {
      await app.close().catch(() => {});
      throw error;
    }
    const bound = app.server.address() as AddressInfo;
    const shownHost = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
    this.#address = `http://${shownHost}:${bound.port}`;
    if (token === undefined && tokens.length === 0 && !isLoopbackAddress(bound.address)) {
      this.#options.logger.warn(
        { address: this.#address },
        'neither http.api_token nor http.tokens is set: /api reads are open to anyone who can reach this address (changes stay refused)',
      );
    }
    return this.#address;
  }

  /** Ends SSE streams and power waits, stops listening, closes the queue UI's queues. Safe to call twice. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#starting?.catch(() => {});
      await this.#app?.close();
      this.#address = undefined;
    })();
    return this.#closing;
  }
}
