import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import type { Config } from '../../src/config/schema.js';
import type { HttpServerOptions, HttpTuning, MetricsSource } from '../../src/http/server.js';
import { buildHttpApp } from '../../src/http/server.js';
import { createHarness, type Harness, type HarnessOptions } from '../pollers/harness.js';

/** A token long enough for the config schema. */
export const TOKEN = 'test-api-token-0123456789abcdef';

export const bearer = (token = TOKEN) => ({ authorization: `Bearer ${token}` });

/** Log lines the server wrote (JSON), to check that no secret reaches them. */
export function captureLogs() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(line);
      done();
    },
  });
  return { lines, logger: pino({ level: 'debug' }, stream) };
}

export interface AppOptions {
  /** `http.api_token`; none by default. */
  token?: string;
  /** `http.tokens`; none by default. */
  tokens?: Config['http']['tokens'];
  /** `http.cors.origins`; none by default. */
  corsOrigins?: string[];
  /** `http.session_ttl` in ms; 12 h by default. */
  sessionTtlMs?: number;
  metrics?: MetricsSource;
  tuning?: HttpTuning;
  /** Changes to the harness config (receivers, prefix...). */
  config?: (config: Config) => Config;
  logger?: HttpServerOptions['logger'];
}

/** The options `buildHttpApp` takes, from a pollers harness (simulator, Redis prefix, store, upstream). */
export function serverOptions(h: Harness, options: AppOptions = {}): HttpServerOptions {
  const base: Config = {
    ...h.config,
    http: {
      enabled: true,
      host: '127.0.0.1',
      port: 0,
      api_token: options.token,
      tokens: options.tokens ?? [],
      session_ttl: options.sessionTtlMs ?? 12 * 3_600_000,
      cors: { origins: options.corsOrigins ?? [] },
    },
  };
  return {
    config: options.config ? options.config(base) : base,
    logger: options.logger ?? pino({ enabled: false }),
    redis: h.redis,
    store: h.store,
    upstream: h.upstream,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    tuning: { heartbeatMs: 60_000, readyCacheMs: 0, ...options.tuning },
  };
}

export interface AppHarness {
  h: Harness;
  app: FastifyInstance;
  close(): Promise<void>;
}

/** A pollers harness plus the API built on it (not listening: use `app.inject`). */
export async function appHarness(
  options: AppOptions & { harness?: HarnessOptions } = {},
): Promise<AppHarness> {
  const h = await createHarness(options.harness);
  const app = await buildHttpApp(serverOptions(h, options));
  return {
    h,
    app,
    async close() {
      await app.close();
      await h.close();
    },
  };
}
