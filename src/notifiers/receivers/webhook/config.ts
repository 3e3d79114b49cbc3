import { z } from 'zod';
import { durationField, sizeField } from '../../../lib/fields.js';
import { httpUrlSchema } from '../../../lib/http-url.js';
import { REDACTED } from '../../../log/secrets.js';
import { maxHoldSchema, receiverNameSchema } from '../../notifier.js';

/**
 * A signed-webhook receiver in the config file:
 *
 * ```yaml
 * - kind: webhook
 *   name: ops-bridge
 *   url: https://hooks.example.com/fleetwatch
 *   secrets: [${OPS_BRIDGE_SECRET}]          # whsec_<base64>; two while rotating (new and old)
 *   headers: { x-tenant: acme }              # optional; never webhook-*, content-type, framing
 *   timeout: 15s
 *   retry_schedule: [0s, 5s, 5m, 30m, 2h, 5h, 10h, 10h]
 *   max_hold: 5m                              # a longer Retry-After is cut to this (1s to 24h)
 *   max_body: 1MiB                            # a larger notification is sent in parts (64KiB to 64MiB)
 * ```
 */

const SECRET_PREFIX = 'whsec_';
export const MIN_SECRET_BYTES = 24;
export const MAX_SECRET_BYTES = 64;
const SECRET_MESSAGE = `must be a whsec_ secret with ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes of base64`;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The signing key of a `whsec_<base64>` secret, or undefined when it is not one we accept. */
export function secretKey(secret: string): Buffer | undefined {
  if (!secret.startsWith(SECRET_PREFIX)) return undefined;
  const encoded = secret.slice(SECRET_PREFIX.length);
  // Standard, padded base64 only: what the official verifiers decode the same way we do.
  if (!BASE64.test(encoded)) return undefined;
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES) return undefined;
  return key;
}

// The message never repeats the value: it is a secret, and a config error is printed.
const signingSecret = z
  .string({ error: SECRET_MESSAGE })
  .refine((value) => secretKey(value) !== undefined, { error: SECRET_MESSAGE });

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers fleetwatch sets itself (signature, body framing): a config may not replace them. */
const RESERVED_HEADERS = new Set([
  'content-type',
  'content-length',
  'transfer-encoding',
  'host',
  'connection',
]);

function isReservedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.startsWith('webhook-') || RESERVED_HEADERS.has(lower);
}

const headerValue = z
  .string({ error: 'must be a text value' })
  .refine((value) => !/[\r\n\0]/.test(value), { error: 'must not contain line breaks' });

const headers = z.record(z.string(), headerValue).superRefine((record, ctx) => {
  for (const name of Object.keys(record)) {
    if (!HEADER_NAME.test(name)) {
      ctx.addIssue({ code: 'custom', path: [name], message: 'is not a valid HTTP header name' });
    } else if (isReservedHeader(name)) {
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: 'is set by fleetwatch (webhook-*, content-type and framing headers cannot be overridden)',
      });
    }
  }
});

const MAX_TIMEOUT_MS = 5 * 60_000;
const MAX_SECRETS = 5;
const MAX_ATTEMPTS = 50;
const MAX_RETRY_DELAY_MS = 86_400_000;

export const DEFAULT_TIMEOUT_MS = 15_000;
/** nginx's default `client_max_body_size`: what a receiver behind it accepts unless told more. */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576;
export const MIN_MAX_BODY_BYTES = 65_536;
export const MAX_MAX_BODY_BYTES = 64 * 1_048_576;
/** The Standard Webhooks reference schedule: about 28 hours from the first try to the last. */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

export const webhookReceiverSchema = z
  .object({
    kind: z.literal('webhook'),
    name: receiverNameSchema,
    max_hold: maxHoldSchema,
    url: httpUrlSchema,
    /**
     * Every request is signed with each of these (a space-separated `webhook-signature`), so a
     * receiver that knows any one of them verifies it: list the new secret beside the old one
     * while receivers switch, then drop the old one.
     */
    secrets: z
      .array(signingSecret, { error: 'must be a list of whsec_ secrets' })
      // Counted here rather than with min()/max(), which zod also applies to a string's length.
      .superRefine((list, ctx) => {
        if (list.length === 0)
          ctx.addIssue({ code: 'custom', message: 'must list at least one whsec_ secret' });
        if (list.length > MAX_SECRETS) {
          ctx.addIssue({
            code: 'custom',
            message: `must list at most ${MAX_SECRETS} secrets (the new and the old ones during a rotation)`,
          });
        }
        list.forEach((secret, index) => {
          if (list.indexOf(secret) !== index) {
            ctx.addIssue({ code: 'custom', path: [index], message: 'repeats an earlier secret' });
          }
        });
      }),
    /** Extra request headers (for example a gateway's API key). Their values are treated as secrets. */
    headers: headers.optional(),
    /** The whole request: connect, send, response headers and body. */
    timeout: durationField(100, MAX_TIMEOUT_MS).default(DEFAULT_TIMEOUT_MS),
    /** The largest request body; a notification whose events make more is sent in parts (payload.ts). */
    max_body: sizeField(MIN_MAX_BODY_BYTES, MAX_MAX_BODY_BYTES).default(DEFAULT_MAX_BODY_BYTES),
    /**
     * Delay before each attempt (the first is usually 0s), each at most a day; its length is the
     * number of attempts.
     */
    retry_schedule: z
      .array(durationField(0, MAX_RETRY_DELAY_MS), {
        error: 'expected a list of durations such as [0s, 5s, 5m]',
      })
      .superRefine((list, ctx) => {
        if (list.length === 0) ctx.addIssue({ code: 'custom', message: 'must list at least one attempt' });
        if (list.length > MAX_ATTEMPTS) {
          ctx.addIssue({ code: 'custom', message: `must list at most ${MAX_ATTEMPTS} attempts` });
        }
      })
      .default([...DEFAULT_RETRY_SCHEDULE_MS]),
  })
  .strict();

export type WebhookReceiverConfig = z.output<typeof webhookReceiverSchema>;

/** A URL is a credential when it carries userinfo or a query (tokens travel there). */
function urlSecrets(url: string): string[] {
  try {
    const parsed = new URL(url);
    const found: string[] = [];
    if (parsed.username || parsed.password || parsed.search) found.push(url);
    for (const part of [parsed.username, parsed.password]) {
      if (part) found.push(part, safeDecode(part));
    }
    for (const value of parsed.searchParams.values()) found.push(value);
    for (const part of parsed.search.slice(1).split('&')) {
      const raw = part.slice(part.indexOf('=') + 1);
      if (raw) found.push(raw);
    }
    return found;
  } catch {
    return [url];
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Every secret of the receiver: signing secrets (with and without `whsec_`), URL credentials, header values. */
export function webhookSecrets(config: WebhookReceiverConfig): string[] {
  return [
    ...config.secrets.flatMap((secret) => [secret, secret.slice(SECRET_PREFIX.length)]),
    ...urlSecrets(config.url),
    ...Object.values(config.headers ?? {}),
  ];
}

/** The URL without its credentials: userinfo and query values replaced. */
export function maskUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username) parsed.username = REDACTED;
    if (parsed.password) parsed.password = REDACTED;
    const keys = [...new Set(parsed.searchParams.keys())];
    if (parsed.search) parsed.search = keys.map((key) => `${encodeURIComponent(key)}=${REDACTED}`).join('&');
    return parsed.toString();
  } catch {
    return REDACTED;
  }
}

/** Scheme, host and port: how logs name the receiver's address (paths can hold tokens too). */
export function urlOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return REDACTED;
  }
}

/** The config as `config check` prints it: secrets, header values and URL credentials replaced. */
export function maskWebhookConfig(config: WebhookReceiverConfig): WebhookReceiverConfig {
  return {
    ...config,
    url: maskUrl(config.url),
    secrets: config.secrets.map(() => REDACTED),
    ...(config.headers === undefined
      ? {}
      : { headers: Object.fromEntries(Object.keys(config.headers).map((name) => [name, REDACTED])) }),
  };
}
