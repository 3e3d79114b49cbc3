import type { Logger } from 'pino';
import type { ReloadResult } from '../config/reload.js';
import type { Config } from '../config/schema.js';
import type { RedisClient } from '../lib/redis-connection.js';
import type { RedisHealth } from '../lib/redis-health.js';
import type { EventLog } from '../store/event-log.js';
import type { SnapshotStore } from '../store/snapshot-store.js';
import type { Upstream } from '../upstream/index.js';
import type { Guard } from './auth.js';

/** Prometheus exposition: what `/metrics` serves (the daemon's prom-client registry). */
export interface MetricsSource {
  readonly contentType: string;
  text(): Promise<string>;
}

/** Timings tests shorten. */
export interface HttpTuning {
  /** SSE heartbeat comment interval; default 15 s. */
  heartbeatMs?: number;
  /** How long a readiness check's result is reused; default 1 s. */
  readyCacheMs?: number;
  /** How long `/readyz` waits for each check before it says `slow`; default 500 ms. */
  readyTimeoutMs?: number;
  /** How often `?wait=true` power requests poll the power status; default 2 s. */
  powerPollMs?: number;
  /** How long the SSE stream waits for its Redis connection before answering 503; default 5 s. */
  streamConnectTimeoutMs?: number;
}

/** What the HTTP server is built from. */
export interface HttpServerOptions {
  /** The whole config as started: `http`, `redis.prefix`, and the live sections until a reload. */
  config: Config;
  /**
   * The config in force after reloads (the daemon's reloader); routes read the sections a reload
   * changes (`receivers`, `notifications`) through it. `config` when absent.
   */
  live?: () => Config;
  /** Re-reads and applies the config file (`POST /-/reload`); absent: this process cannot reload. */
  reload?: () => Promise<ReloadResult>;
  logger: Logger;
  /**
   * A producer-style connection (`createProducerConnection`): snapshot reads, silences, dead
   * letters, the event log (each SSE stream duplicates it for its blocking reads), PING. Not closed
   * by the server.
   */
  redis: RedisClient;
  store: SnapshotStore;
  /**
   * The Redis health check `/readyz` asks (the daemon's, which also logs outages). Without it the
   * server makes one of its own on a copy of `redis`, checked only when asked, closed with it.
   */
  redisHealth?: RedisHealth;
  upstream: Pick<Upstream, 'fleet' | 'robots' | 'tokens'>;
  /** Without it `/metrics` answers 404. */
  metrics?: MetricsSource;
  tuning?: HttpTuning;
}

/** What every route module gets. */
export interface RouteContext {
  readonly options: HttpServerOptions;
  /** The config in force now (see `HttpServerOptions.live`). */
  readonly live: () => Config;
  readonly logger: Logger;
  readonly guard: Guard;
  readonly eventLog: EventLog;
  /** Aborted when the server starts closing: long requests (SSE, power waits) end. */
  readonly closing: AbortSignal;
  readonly tuning: Required<HttpTuning>;
}

/**
 * `build(value)` for what `select` returns now, built again only when that is another object: a
 * route's view of a live config section (receivers, maintenance windows) follows a reload, which
 * replaces only the sections that changed. `onReplace` gets the view a rebuild made stale.
 */
export function derived<T, R>(
  select: () => T,
  build: (value: T) => R,
  onReplace?: (stale: R) => void,
): () => R {
  let cached: { from: T; view: R } | undefined;
  return () => {
    const from = select();
    if (cached?.from === from) return cached.view;
    if (cached) onReplace?.(cached.view);
    cached = { from, view: build(from) };
    return cached.view;
  };
}
