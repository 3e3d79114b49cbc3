import { z } from 'zod';
import { detectorOptionsSchema } from '../events/detector-options.js';
import { receiversSchema } from '../notifiers/registry.js';
import { checkReceiverNames, notificationsConfigSchema } from '../notifiers/routing/config.js';
import { duration } from './duration.js';

const httpUrl = z
  .string({ error: 'must be an http(s) URL' })
  .refine(
    (value) => {
      try {
        const url = new URL(value);
        return url.protocol === 'http:' || url.protocol === 'https:';
      } catch {
        return false;
      }
    },
    { error: 'must be an http(s) URL' },
  )
  .transform((value) => value.replace(/\/+$/, ''));

const redisUrl = z.string().refine((value) => /^rediss?:\/\//.test(value), {
  error: 'must be a redis:// or rediss:// URL',
});

const nonEmpty = (what: string) =>
  z.string({ error: `must be ${what}` }).min(1, { error: `must not be empty` });

export const httpLimitsSchema = z
  .object({
    connect_timeout: duration.default(5_000),
    request_timeout: duration.default(10_000),
    max_connections: z.number().int().min(1).max(1024).default(32),
    max_in_flight: z.number().int().min(1).max(10_000).default(64),
    retries: z.number().int().min(0).max(10).default(3),
    retry_base_delay: duration.default(200),
    retry_max_delay: duration.default(10_000),
  })
  .strict();

export const tokenSchema = z
  .object({
    default_ttl: duration.default(3_600_000),
    refresh_before: duration.default(60_000),
  })
  .strict();

export const upstreamSchema = z
  .object({
    base_url: httpUrl,
    robot_base_url: httpUrl,
    auth_url: httpUrl,
    client_id: nonEmpty('the client id issued by the fleet operator'),
    client_secret: nonEmpty('the client secret issued by the fleet operator'),
    token: tokenSchema.default(tokenSchema.parse({})),
    http: httpLimitsSchema.default(httpLimitsSchema.parse({})),
  })
  .strict();

export const redisSchema = z
  .object({
    url: redisUrl.default('redis://127.0.0.1:6379'),
    prefix: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, {
        error: 'must be letters, digits, _ or - (it becomes the {prefix} hash tag)',
      })
      .default('fw'),
  })
  .strict();

export const logSchema = z
  .object({
    level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
    format: z.enum(['auto', 'json', 'pretty']).default('auto'),
  })
  .strict();

const pollerSchema = (interval: number, batchSize?: number) =>
  z
    .object({
      enabled: z.boolean().default(true),
      /** How often; ticks are aligned to the clock so every replica agrees on the tick number. */
      interval: duration.default(interval).refine((ms) => ms >= 1_000, { error: 'must be at least 1s' }),
      ...(batchSize === undefined
        ? {}
        : { batch_size: z.number().int().min(1).max(10_000).default(batchSize) }),
    })
    .strict();

export const pollersSchema = z
  .object({
    /** GET /v1/vehicles: membership, VPN and IP of every vehicle, one request. */
    vehicles: pollerSchema(30_000).prefault({}),
    /** GET /v1/vehicles/{id}/power/status, in batches of `batch_size` vehicles per job. */
    power: pollerSchema(30_000, 100)
      .extend({
        /** A vehicle that answered 404 (not power-capable) is asked again only this often. */
        unsupported_interval: duration.default(3_600_000),
      })
      .prefault({}),
    /** GET /api/robots: robot membership. */
    robots: pollerSchema(60_000).prefault({}),
    /** GET /v2/health per robot. */
    robot_health: pollerSchema(30_000, 50).prefault({}),
    /** GET /v2/platform-feedback per robot: autonomy, navigation, vehicle state. */
    robot_feedback: pollerSchema(30_000, 50).prefault({}),
    /** GET /v2/teleop-control/status per robot. */
    robot_lease: pollerSchema(60_000, 50).prefault({}),
    /** GET active_site, loaded_route and loaded_zone_set per robot. */
    robot_config: pollerSchema(300_000, 50).prefault({}),
    /**
     * The monitor's own upstream health: request outcomes (all replicas together) are counted in
     * fixed windows of `interval`, and each closed window is judged by `detectors.upstream`.
     */
    upstream: pollerSchema(60_000).prefault({}),
  })
  .strict();

export const workerSchema = z
  .object({
    /** Poll jobs one replica runs at once (upstream requests are capped by upstream.http.max_in_flight). */
    concurrency: z.number().int().min(1).max(256).default(8),
    /** On SIGTERM, how long in-flight jobs may take to finish before the process exits anyway. */
    shutdown_grace: duration.default(20_000),
    /**
     * Fraction of each interval over which a tick's shards start (0: all at once). Spreading keeps
     * requests, Redis writes and deliveries steady instead of one burst per tick.
     */
    spread: z.number().min(0).max(0.9).default(0.5),
    /**
     * When a replica dies without stopping (SIGKILL, a lost node), the poll, event and delivery
     * jobs it held, and the outbox entries it was relaying, are taken over after this long
     * (BullMQ's job lock and stalled-job check). Shorter moves work sooner and renews locks more
     * often (every half of it).
     */
    takeover_after: duration.refine((ms) => ms >= 2_000, { error: 'must be at least 2s' }).default(30_000),
  })
  .strict();

export const eventsSchema = z
  .object({
    /** The event log keeps about this many events (XADD MAXLEN ~). */
    log_max_length: z.number().int().min(100).max(10_000_000).default(100_000),
  })
  .strict();

export const metricsSchema = z
  .object({
    /**
     * Per-vehicle and per-robot series (`fleetwatch_vehicle_*`, `fleetwatch_robot_*`): one series
     * per entity and signal. Turn off for very large fleets; the fleet totals stay.
     */
    per_entity: z.boolean().default(true),
    /** Scrapes reuse one reading of the fleet snapshots (and of the queue counts) for this long. */
    fleet_cache: duration.default(5_000),
  })
  .strict();

/**
 * The HTTP server (`src/http/`): /metrics, /healthz, /readyz, the JSON API and the queue UI, on one
 * port. Loopback by default: in a container set `host: 0.0.0.0` so Prometheus and probes reach it.
 * `api_token` guards everything that changes state (and, once set, every /api read and the queue
 * UI); without it those changes are refused with 403.
 */
export const httpSchema = z
  .object({
    enabled: z.boolean().default(true),
    host: z
      .string()
      .trim()
      .min(1, { error: 'must be an address to listen on, e.g. 127.0.0.1 or 0.0.0.0' })
      .default('127.0.0.1'),
    /** 0 picks a free port (tests). */
    port: z.number().int().min(0).max(65_535).default(9464),
    /** Bearer token for the API; usually `${FLEETWATCH_API_TOKEN}`. Empty means not set. */
    api_token: z
      .string({ error: 'must be a string, e.g. ${FLEETWATCH_API_TOKEN}' })
      .optional()
      .transform((value) => (value === undefined || value.trim() === '' ? undefined : value))
      .refine((value) => value === undefined || value.length >= 16, {
        error: 'must be at least 16 characters (generate one with: openssl rand -hex 32)',
      }),
  })
  .strict();

export const configSchema = z
  .object({
    installation: z
      .string()
      .regex(/^[A-Za-z0-9._-]+$/, { error: 'must be letters, digits, ".", "_" or "-"' })
      .default('default'),
    upstream: upstreamSchema,
    redis: redisSchema.default(redisSchema.parse({})),
    log: logSchema.default(logSchema.parse({})),
    pollers: pollersSchema.prefault({}),
    worker: workerSchema.prefault({}),
    events: eventsSchema.prefault({}),
    metrics: metricsSchema.prefault({}),
    detectors: detectorOptionsSchema.prefault({}),
    receivers: receiversSchema,
    notifications: notificationsConfigSchema.prefault({}),
    http: httpSchema.prefault({}),
  })
  .strict();

export type Config = z.output<typeof configSchema>;
export type UpstreamConfig = Config['upstream'];
export type HttpLimits = UpstreamConfig['http'];
export type RedisConfig = Config['redis'];
export type HttpConfig = Config['http'];
export type PollersConfig = Config['pollers'];
export type PollerName = keyof PollersConfig;

/** Checks that span sections, run once every section is valid on its own. One line per problem. */
export function crossSectionProblems(config: Config): string[] {
  return checkReceiverNames(
    config.notifications.route,
    config.receivers.map((receiver) => receiver.name),
  ).map((problem) => `notifications.${problem}`);
}
