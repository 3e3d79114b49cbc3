import { z } from 'zod';
import { formatDuration } from '../lib/duration.js';
import { countField, durationField, sizeField } from '../lib/fields.js';
import { httpUrlSchema } from '../lib/http-url.js';

/** The `upstream:` section of the config file: where the fleet service is and how to talk to it. */

/** Trailing slashes dropped, so paths can be appended as they are. */
const httpUrl = httpUrlSchema.transform((value) => value.replace(/\/+$/, ''));

/**
 * The service root, without the interface's own prefix: fleetwatch appends `/v1/vehicles…` to
 * `base_url` (whose root plus `/` is also the token audience) and `/api/robots`, `/api/platform/…`
 * to `robot_base_url`. A URL that already ends in one of those parts would be asked for the wrong
 * paths (every robot "not found") or the wrong audience (the issuer answers 403), so it is refused
 * with what was expected.
 */
const serviceRoot = (prefixes: readonly string[], appended: string) =>
  httpUrl.superRefine((value, ctx) => {
    const path = new URL(value).pathname.replace(/\/+$/, '').toLowerCase();
    const extra = prefixes.find((prefix) => path.endsWith(prefix));
    if (extra === undefined) return;
    const root = value.toLowerCase().endsWith(extra) ? `, such as ${value.slice(0, -extra.length)}` : '';
    ctx.addIssue({
      code: 'custom',
      message: `expected the service root, without ${extra} (fleetwatch adds ${appended})${root}; got ${value}`,
    });
  });

/** A credential: text with something in it (a blank one would only fail later, at the token issuer). */
const credential = (what: string) =>
  z
    .string({ error: `expected ${what}` })
    .refine((value) => value.trim() !== '', { error: `must not be empty (expected ${what})` });

/** Answers above this are refused by default: far above any fleet list, far below the memory of a replica. */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1_048_576;

export const httpLimitsSchema = z
  .object({
    connect_timeout: durationField(100, 60_000).default(5_000),
    request_timeout: durationField(100, 300_000).default(10_000),
    max_connections: countField(1, 1_024).default(32),
    max_in_flight: countField(1, 10_000).default(64),
    retries: countField(0, 10).default(3),
    retry_base_delay: durationField(1, 60_000).default(200),
    retry_max_delay: durationField(1, 600_000).default(10_000),
    /** A longer answer (body) is refused as `invalid_payload`; it is read into memory whole. */
    max_response_size: sizeField(1_024, 256 * 1_048_576).default(DEFAULT_MAX_RESPONSE_BYTES),
  })
  .strict()
  .superRefine((limits, ctx) => {
    if (limits.retry_max_delay < limits.retry_base_delay) {
      ctx.addIssue({
        code: 'custom',
        path: ['retry_max_delay'],
        message: `expected at least retry_base_delay (${formatDuration(limits.retry_base_delay)}); got ${formatDuration(limits.retry_max_delay)}`,
      });
    }
  });

export const tokenSchema = z
  .object({
    default_ttl: durationField(60_000, 86_400_000).default(3_600_000),
    refresh_before: durationField(0, 3_600_000).default(60_000),
  })
  .strict();

export const upstreamSchema = z
  .object({
    base_url: serviceRoot(['/v1/vehicles', '/v1'], '/v1/vehicles…'),
    robot_base_url: serviceRoot(
      ['/api/robots', '/api/platform', '/api', '/v2'],
      '/api/robots and /api/platform/{deviceId}/v2/…',
    ),
    auth_url: httpUrl,
    client_id: credential('the client id issued by the fleet operator'),
    client_secret: credential('the client secret issued by the fleet operator'),
    token: tokenSchema.default(tokenSchema.parse({})),
    http: httpLimitsSchema.default(httpLimitsSchema.parse({})),
  })
  .strict();

export type UpstreamConfig = z.output<typeof upstreamSchema>;
export type HttpLimits = UpstreamConfig['http'];
