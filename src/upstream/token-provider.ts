import type { Logger } from 'pino';
import { z } from 'zod';
import type { UpstreamConfig } from '../config/schema.js';
import { secrets as processSecrets, type SecretRegistry } from '../log/secrets.js';
import { AuthenticationError, errorForStatus, InvalidPayloadError, summarizeIssues } from './errors.js';
import type { CallOptions, HttpClient } from './http.js';
import { parseRetryAfter, withRetry } from './retry.js';

/** Hands out bearer tokens for the fleet service (OAuth 2.0 client-credentials grant). */
export interface TokenProvider {
  /** A valid access token: the cached one, or a fresh one (one request for all concurrent callers). */
  getToken(opts?: CallOptions): Promise<string>;
  /** Forgets `token` if it is the cached one, so the next `getToken` authenticates again. */
  invalidate(token: string): void;
}

export const tokenResponseSchema = z.looseObject({
  access_token: z.string().min(1),
  expires_in: z
    .union([
      z.number().nonnegative(),
      z
        .string()
        .regex(/^\d+(\.\d+)?$/)
        .transform(Number),
    ])
    .optional(),
  token_type: z.string().optional(),
});
export type TokenResponse = z.output<typeof tokenResponseSchema>;

export interface TokenProviderOptions {
  config: UpstreamConfig;
  http: HttpClient;
  logger?: Logger;
  /** Clock in milliseconds; `Date.now` by default (tests inject their own). */
  now?: () => number;
  secrets?: SecretRegistry;
}

interface CachedToken {
  token: string;
  expiresAt: number;
  refreshAt: number;
}

const OPERATION = 'oauth_token';
/** After a failed refresh, a still-valid token is served for this long before trying again. */
const REFRESH_COOLDOWN_MS = 1_000;

function oauthErrorCode(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    const code = parsed?.error;
    // Only a short OAuth error code (RFC 6749 §5.2), never free text from the issuer.
    return typeof code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(code) ? code : undefined;
  } catch {
    return undefined;
  }
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Client-credentials token provider.
 *
 * - `POST {auth_url}/oauth/token` with a JSON body `{client_id, client_secret, audience, grant_type}`
 *   where `audience` is `{base_url}/`.
 * - Lifetime from `expires_in` (seconds), else `token.default_ttl`; the token is refreshed
 *   `token.refresh_before` before it expires (at most half its lifetime early, so very short
 *   lifetimes still get used).
 * - Single-flight: concurrent callers share one token request. A caller's abort signal stops its
 *   own wait, never the shared request.
 * - If a refresh fails while the cached token has not expired yet, the cached token is served
 *   (and the refresh tried again after a short pause): an issuer blip inside the refresh window
 *   costs nothing.
 * - 400/401/403 from the issuer → `AuthenticationError`; 502/503/504, time-outs and network errors
 *   are retried with the HTTP retry policy; other statuses → the status's typed error.
 * - The client secret and every token obtained are registered with the secret registry.
 */
export class ClientCredentialsTokenProvider implements TokenProvider {
  readonly #config: UpstreamConfig;
  readonly #http: HttpClient;
  readonly #logger: Logger | undefined;
  readonly #now: () => number;
  readonly #secrets: SecretRegistry;
  #cached: CachedToken | undefined;
  #inflight: Promise<CachedToken> | undefined;
  #refreshFailedAt: number | undefined;

  constructor(options: TokenProviderOptions) {
    this.#config = options.config;
    this.#http = options.http;
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
    this.#secrets = options.secrets ?? processSecrets;
    this.#secrets.add(options.config.client_secret);
  }

  async getToken(opts: CallOptions = {}): Promise<string> {
    const now = this.#now();
    const cached = this.#cached;
    if (cached && now < cached.refreshAt) return cached.token;
    const usable = cached && now < cached.expiresAt ? cached : undefined;
    if (usable && this.#refreshFailedAt !== undefined && now - this.#refreshFailedAt < REFRESH_COOLDOWN_MS) {
      return usable.token;
    }
    if (!this.#inflight) {
      const refresh = this.#fetchToken().then(
        (fresh) => {
          this.#cached = fresh;
          this.#refreshFailedAt = undefined;
          return fresh;
        },
        (error: unknown) => {
          this.#refreshFailedAt = this.#now();
          throw error;
        },
      );
      this.#inflight = refresh;
      const clear = () => {
        if (this.#inflight === refresh) this.#inflight = undefined;
      };
      refresh.then(clear, clear);
    }
    try {
      return (await raceAbort(this.#inflight, opts.signal)).token;
    } catch (error) {
      if (opts.signal?.aborted) throw error;
      if (usable && this.#cached === usable && this.#now() < usable.expiresAt) {
        this.#logger?.warn(
          { err: error, operation: OPERATION },
          'token refresh failed; using the current token until it expires',
        );
        return usable.token;
      }
      throw error;
    }
  }

  invalidate(token: string): void {
    if (this.#cached?.token === token) {
      this.#cached = undefined;
      this.#logger?.debug({ operation: OPERATION }, 'access token invalidated');
    }
  }

  async #fetchToken(): Promise<CachedToken> {
    const config = this.#config;
    const body = JSON.stringify({
      client_id: config.client_id,
      client_secret: config.client_secret,
      audience: `${config.base_url.replace(/\/+$/, '')}/`,
      grant_type: 'client_credentials',
    });
    const ctx = { operation: OPERATION, subject: 'the token issuer' };
    const issuedAt = this.#now();
    const response = await withRetry(
      async () => {
        const res = await this.#http.send({
          ...ctx,
          method: 'POST',
          url: `${config.auth_url}/oauth/token`,
          headers: { 'content-type': 'application/json' },
          body,
        });
        if (res.status >= 200 && res.status < 300) return res;
        if (res.status === 400 || res.status === 401 || res.status === 403) {
          throw new AuthenticationError(config.client_id, res.status, oauthErrorCode(res.body));
        }
        throw errorForStatus(ctx, res.status, { retryAfterMs: parseRetryAfter(res.headers['retry-after']) });
      },
      {
        policy: {
          retries: config.http.retries,
          baseDelayMs: config.http.retry_base_delay,
          maxDelayMs: config.http.retry_max_delay,
        },
        onRetry: ({ error, attempt, delayMs }) =>
          this.#logger?.debug(
            { err: error, operation: OPERATION, attempt, delayMs },
            'retrying token request',
          ),
      },
    );

    let json: unknown;
    try {
      json = JSON.parse(response.body);
    } catch {
      throw new InvalidPayloadError(ctx, 'token response is not valid JSON', response.status);
    }
    const parsed = tokenResponseSchema.safeParse(json);
    if (!parsed.success) {
      throw new InvalidPayloadError(ctx, summarizeIssues(parsed.error.issues), response.status);
    }
    const token = parsed.data.access_token;
    this.#secrets.add(token);

    const ttl =
      parsed.data.expires_in === undefined
        ? config.token.default_ttl
        : Math.round(parsed.data.expires_in * 1000);
    const expiresAt = issuedAt + ttl;
    const refreshAt = expiresAt - Math.min(config.token.refresh_before, ttl / 2);
    this.#logger?.debug({ operation: OPERATION, expiresInMs: ttl }, 'access token obtained');
    return { token, expiresAt, refreshAt };
  }
}
