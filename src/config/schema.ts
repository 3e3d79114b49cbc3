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

const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** A Redis Cluster: the seed nodes (any of its masters or replicas; the rest are discovered). */
const redisClusterSchema = z
  .object({
    nodes: z
      .array(
        redisUrl.refine((value) => /^rediss?:\/\/[^/]*(\/0?)?$/.test(value), {
          error: 'a Redis Cluster has only database 0: give the node URL without a database number',
        }),
      )
      .min(1, { error: 'expected at least one node URL, like redis://10.0.0.1:6379' })
      .max(64, { error: 'expected at most 64 seed node URLs (the others are discovered)' }),
  })
  .strict();

export const redisSchema = z
  .object({
    /** One Redis server. Not together with `cluster`. */
    url: redisUrl.optional(),
    /** A Redis Cluster in place of `url`: every connection becomes a cluster client. */
    cluster: redisClusterSchema.optional(),
    prefix: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/, {
        error: 'must be letters, digits, _ or - (it becomes the {prefix} hash tag)',
      })
      .default('fw'),
    /**
     * How many slot groups the per-entity keys are spread over (store/keys.ts): 1 keeps every key
     * under `{prefix}`; a Redis Cluster spreads N > 1 over its masters (a multiple of their number).
     */
    shards: z
      .number({ error: 'expected a whole number of shards from 1 to 256' })
      .int({ error: 'expected a whole number of shards from 1 to 256' })
      .min(1, { error: 'expected a whole number of shards from 1 to 256' })
      .max(256, { error: 'expected at most 256 shards (each still spans 64 of the 16,384 slots)' })
      .default(1),
  })
  .strict()
  .superRefine((value, ctx) => {
    if (value.url !== undefined && value.cluster !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['cluster'],
        message: 'set either redis.url (one server) or redis.cluster (a Redis Cluster), not both',
      });
    }
  })
  // `url` keeps its default when no cluster is given (and names the first seed node when one is,
  // for messages that name "the" Redis).
  .transform(({ url, cluster, ...rest }) => ({
    ...rest,
    url: url ?? cluster?.nodes[0] ?? DEFAULT_REDIS_URL,
    ...(cluster ? { cluster } : {}),
  }));

/** The log levels of `log.level`, and of the CLI's `--log-level`. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

export const logSchema = z
  .object({
    level: z.enum(LOG_LEVELS).default('info'),
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
    /**
     * Runs the scheduler and the poll workers on a thread of their own, so a burst of poll work
     * does not hold up notifications under way (about 25 MB more memory; worth it from about
     * 10,000 entities). Read at start only.
     */
    poll_thread: z.boolean().default(false),
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
 * Who may call the API (`src/http/auth.ts`): `read` reads, `operate` also changes what operators
 * change (power, acknowledgements, silences, receiver resumes, dead letters), `admin` also opens
 * the queue UI. `http.api_token` is the simple case: one token of role `admin`.
 */
export const TOKEN_ROLES = ['read', 'operate', 'admin'] as const;
export type TokenRole = (typeof TOKEN_ROLES)[number];

/** The most named tokens and allowed CORS origins one config may list. */
export const HTTP_LIMITS = { tokens: 100, corsOrigins: 50 } as const;

/** The name `http.api_token` is known by in the audit trail; no named token may take it. */
export const API_TOKEN_ACTOR = 'api_token';

const GENERATE = 'generate one with: openssl rand -hex 32';

const tokenValue = z
  .string({ error: 'expected text, e.g. ${FLEETWATCH_OPS_TOKEN}' })
  .min(16, { error: `must be at least 16 characters (${GENERATE})` })
  .max(1_024, { error: 'must be at most 1024 characters' })
  // It travels in an Authorization header and a JSON body: printable ASCII, no spaces.
  .regex(/^[\x21-\x7e]+$/, { error: `must be printable ASCII without spaces (${GENERATE})` });

export const tokenEntrySchema = z
  .object({
    /** Who the token is in the audit trail (`actor`) and in `GET /api/session`. */
    name: z
      .string({ error: 'expected a name such as grafana or ops-console' })
      .regex(/^[A-Za-z0-9._@-]{1,64}$/, {
        error: 'must be 1 to 64 letters, digits, ".", "_", "@" or "-", such as grafana or ops-console',
      })
      .refine((name) => name !== API_TOKEN_ACTOR, {
        error: `"${API_TOKEN_ACTOR}" is the name of http.api_token; choose another`,
      }),
    token: tokenValue,
    role: z.enum(TOKEN_ROLES, { error: 'expected one of "read", "operate", "admin"' }),
  })
  .strict();

export type TokenEntry = z.output<typeof tokenEntrySchema>;

/** `https://ops.example.com`, `http://localhost:3000`: what a browser sends as `Origin`, exactly. */
const corsOrigin = z.string().refine(
  (value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
    } catch {
      return false;
    }
  },
  {
    error:
      'must be an origin as a browser sends it: scheme, host and port only, such as https://ops.example.com (no path, no trailing slash, lower case)',
  },
);

export const corsSchema = z
  .object({
    /** Origins whose pages may call the API from a browser (credentials included); none by default. */
    origins: z
      .array(corsOrigin)
      .max(HTTP_LIMITS.corsOrigins, { error: `expected at most ${HTTP_LIMITS.corsOrigins} origins` })
      .default([]),
  })
  .strict();

/**
 * The HTTP server (`src/http/`): /metrics, /healthz, /readyz, the JSON API and the queue UI, on one
 * port. Loopback by default: in a container set `host: 0.0.0.0` so Prometheus and probes reach it.
 * `api_token` and `tokens` guard everything that changes state (and, once one is set, every /api
 * read and the queue UI); without any, those changes are refused with 403.
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
    /** Bearer token for the API (role `admin`); usually `${FLEETWATCH_API_TOKEN}`. Empty means not set. */
    api_token: z
      .string({ error: 'expected text, e.g. ${FLEETWATCH_API_TOKEN}' })
      .optional()
      .transform((value) => (value === undefined || value.trim() === '' ? undefined : value))
      .refine((value) => value === undefined || value.length >= 16, {
        error: `must be at least 16 characters (${GENERATE})`,
      }),
    /** Named tokens, each with a role; names and tokens unique. */
    tokens: z
      .array(tokenEntrySchema)
      .max(HTTP_LIMITS.tokens, { error: `expected at most ${HTTP_LIMITS.tokens} tokens` })
      .default([]),
    /** How long a browser session (`POST /api/session`) lasts; it is not extended by use. */
    session_ttl: durationField(300_000, 7 * 86_400_000).default(12 * 3_600_000),
    cors: corsSchema.prefault({}),
  })
  .strict()
  .superRefine((http, ctx) => {
    // Names and tokens are each unique: a name is who did something, a token says who you are.
    const names = new Map<string, number>();
    const tokens = new Map<string, string>();
    if (http.api_token !== undefined) tokens.set(http.api_token, 'http.api_token');
    http.tokens.forEach((entry, index) => {
      const first = names.get(entry.name);
      if (first === undefined) names.set(entry.name, index);
      else {
        ctx.addIssue({
          code: 'custom',
          path: ['tokens', index, 'name'],
          message: `"${entry.name}" is already the name of http.tokens[${first}]; names must be unique`,
        });
      }
      const same = tokens.get(entry.token);
      if (same === undefined) tokens.set(entry.token, `http.tokens[${index}] (${entry.name})`);
      else {
        ctx.addIssue({
          code: 'custom',
          path: ['tokens', index, 'token'],
          message: `is the same token as ${same}; every token must be different`,
        });
      }
    });
  });

/**
 * `console.url`: where people reach the console from outside (`https://fleetwatch.example.com`, a
 * path allowed behind a proxy). Set, Slack messages link to its pages; absent, they carry no link.
 * Kept without a trailing slash, so `<url>/#/incidents` is always one slash.
 */
export const consoleUrl = z
  .string({ error: 'expected an absolute http(s) URL such as https://fleetwatch.example.com' })
  .trim()
  .refine(
    (value) => {
      try {
        const url = new URL(value);
        return (
          (url.protocol === 'http:' || url.protocol === 'https:') &&
          url.username === '' &&
          url.password === '' &&
          url.search === '' &&
          url.hash === ''
        );
      } catch {
        return false;
      }
    },
    {
      error:
        'must be an absolute http(s) URL such as https://fleetwatch.example.com (no user, query or #fragment: the console adds its own)',
    },
  )
  .transform((value) => value.replace(/\/+$/, ''));

export const consoleSchema = z
  .object({
    url: consoleUrl.optional(),
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
    console: consoleSchema.prefault({}),
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
