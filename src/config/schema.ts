import { z } from 'zod';
import { detectorOptionsSchema } from '../events/detector-options.js';
import { countField, durationField, numberField } from '../lib/fields.js';
import { notificationsConfigSchema } from '../notifiers/config.js';
import { receiversSchema } from '../notifiers/receivers/kinds.js';
import { checkReceiverNames } from '../notifiers/routing/config.js';
import { pollersSchema } from '../pollers/config.js';
import { upstreamSchema } from '../upstream/config.js';

const redisUrl = z.string().refine((value) => /^rediss?:\/\//.test(value), {
  error: 'must be a redis:// or rediss:// URL',
});

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

export const workerSchema = z
  .object({
    /** Poll jobs one replica runs at once (upstream requests are capped by upstream.http.max_in_flight). */
    concurrency: countField(1, 256).default(8),
    /** On SIGTERM, how long in-flight jobs may take to finish before the process exits anyway. */
    shutdown_grace: durationField(0, 600_000).default(20_000),
    /**
     * Fraction of each interval over which a tick's shards start (0: all at once). Spreading keeps
     * requests, Redis writes and deliveries steady instead of one burst per tick.
     */
    spread: numberField({ min: 0, max: 0.9 }).default(0.5),
    /**
     * When a replica dies without stopping (SIGKILL, a lost node), the poll, event and delivery
     * jobs it held, and the outbox entries it was relaying, are taken over after this long
     * (BullMQ's job lock and stalled-job check). Shorter moves work sooner and renews locks more
     * often (every half of it). At most 1h: it is also BullMQ's stalled-job timer.
     */
    takeover_after: durationField(2_000, 3_600_000).default(30_000),
  })
  .strict();

export const eventsSchema = z
  .object({
    /** The event log keeps about this many events (XADD MAXLEN ~). */
    log_max_length: countField(100, 10_000_000).default(100_000),
  })
  .strict();

export const metricsSchema = z
  .object({
    /**
     * Per-vehicle and per-robot series (`fleetwatch_vehicle_*`, `fleetwatch_robot_*`): one series
     * per entity and facet. Turn off for very large fleets; the fleet totals stay.
     */
    per_entity: z.boolean().default(true),
    /** Scrapes reuse one reading of the fleet snapshots (and of the queue counts) for this long. */
    fleet_cache: durationField(0, 600_000).default(5_000),
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
    port: countField(0, 65_535).default(9464),
    /** Bearer token for the API; usually `${FLEETWATCH_API_TOKEN}`. Empty means not set. */
    api_token: z
      .string({ error: 'expected text, e.g. ${FLEETWATCH_API_TOKEN}' })
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
export type { HttpLimits, UpstreamConfig } from '../upstream/config.js';
export type RedisConfig = Config['redis'];
export type HttpConfig = Config['http'];
export type { PollerName, PollersConfig } from '../pollers/config.js';

/** Checks that span sections, run once every section is valid on its own. One line per problem. */
export function crossSectionProblems(config: Config): string[] {
  return checkReceiverNames(
    config.notifications.route,
    config.receivers.map((receiver) => receiver.name),
  ).map((problem) => `notifications.${problem}`);
}
