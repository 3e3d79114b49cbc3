import { z } from 'zod';
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

export const configSchema = z
  .object({
    installation: z
      .string()
      .regex(/^[A-Za-z0-9._-]+$/, { error: 'must be letters, digits, ".", "_" or "-"' })
      .default('default'),
    upstream: upstreamSchema,
    redis: redisSchema.default(redisSchema.parse({})),
    log: logSchema.default(logSchema.parse({})),
  })
  .strict();

export type Config = z.output<typeof configSchema>;
export type UpstreamConfig = Config['upstream'];
export type HttpLimits = UpstreamConfig['http'];
export type RedisConfig = Config['redis'];
