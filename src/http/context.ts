import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
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
  /** The whole config: `http`, `redis.prefix`, `receivers`. */
  config: Config;
  logger: Logger;
  /**
   * A producer-style connection (`createProducerConnection`): snapshot reads, silences, dead
   * letters, the event log (each SSE stream duplicates it for its blocking reads), PING. Not closed
   * by the server.
   */
  redis: Redis;
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
  readonly logger: Logger;
  readonly guard: Guard;
  readonly eventLog: EventLog;
  /** Aborted when the server starts closing: long requests (SSE, power waits) end. */
  readonly closing: AbortSignal;
  readonly tuning: Required<HttpTuning>;
}
