import type { Logger } from 'pino';
import { parseRetryAfter } from '../lib/retry-after.js';
import { secrets as processSecrets, type SecretRegistry } from '../log/secrets.js';
import type { UpstreamConfig } from './config.js';
import { AuthenticationError, errorForStatus, InvalidPayloadError, summarizeIssues } from './errors.js';
import type { CallOptions, HttpClient } from './http.js';
import { apiBases, requestFor, succeeded } from './operation-request.js';
import { TOKEN_OPERATION } from './operations/fleet.js';
import { retryLog, retryPolicyOf, withRetry } from './retry.js';
import type { TokenRequest } from './schemas/token.js';
import { AssumedLifetime, jwtLifetime, type LifetimeSource, renewAfter } from './token-lifetime.js';

/** Hands out bearer tokens for the fleet service (OAuth 2.0 client-credentials grant). */
export interface TokenProvider {
  /** A valid access token: the cached one, or a fresh one (one request for all concurrent callers). */
  getToken(opts?: CallOptions): Promise<string>;
  /**
   * The API refused `token` (401): forgets it if it is the cached one, so the next `getToken`
   * authenticates again.
   */
  invalidate(token: string): void;
  /**
   * The API accepted a fresh token right after refusing `token`: `token` had expired. A provider
   * that guessed its lifetime learns from it.
   */
  expired(token: string): void;
}

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
  /** When it was asked for: its lifetime counts from here. */
  issuedAt: number;
  expiresAt: number;
  refreshAt: number;
  source: LifetimeSource;
  /** The lifetime it was given. */
  lifetimeMs: number;
}

/** A token recently handed out, kept to learn from a refusal of it. */
interface IssuedToken {
  issuedAt: number;
  source: LifetimeSource;
  lifetimeMs: number;
  /** When the API first refused it (401). */
  refusedAt?: number;
}

const OPERATION = TOKEN_OPERATION.id;
/** After a failed refresh, a still-valid token is served for this long before trying again. */
const REFRESH_COOLDOWN_MS = 1_000;
/** Tokens remembered for learning from their refusal: the current one and a few before it. */
const REMEMBERED_TOKENS = 8;

/** `4.1s` below ten seconds, `73s` above: the precision a person needs in a log line. */
function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`;
}

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
 * - Lifetime: `expires_in` (seconds) when the issuer sends it; else the JWT `exp` claim when the
 *   token is a JWT; else the assumed lifetime, `token.default_ttl` until the API shows it is
 *   shorter (see token-lifetime.ts; `ApiTransport` reports a token refused and then replaced).
 *   The token is refreshed `token.refresh_before` before it expires, at most half its lifetime
 *   early, so very short lifetimes still get used.
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
  readonly #assumed: AssumedLifetime;
  readonly #issued = new Map<string, IssuedToken>();
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
    this.#assumed = new AssumedLifetime(options.config.token.default_ttl);
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
    const issued = this.#issued.get(token);
    if (issued && issued.refusedAt === undefined) issued.refusedAt = this.#now();
    if (this.#cached?.token === token) {
      this.#cached = undefined;
      this.#logger?.debug({ operation: OPERATION }, 'access token invalidated');
    }
  }

  expired(token: string): void {
    const issued = this.#issued.get(token);
    if (!issued || issued.refusedAt === undefined) return;
    // Once per token: the many calls that were refused along with it teach nothing more.
    this.#issued.delete(token);
    if (issued.source !== 'assumed') return;
    const learnt = this.#assumed.refusedAt(issued.refusedAt - issued.issuedAt, issued.lifetimeMs);
    if (learnt === undefined) return;
    const renewAfterMs = renewAfter(learnt, this.#config.token.refresh_before);
    this.#logger?.info(
      { operation: OPERATION, lifetimeMs: learnt, renewAfterMs },
      `the token issuer's tokens seem to last about ${seconds(learnt)}; fleetwatch now renews them after ${seconds(renewAfterMs)}`,
    );
    // The token fetched to replace the refused one was given the old assumption.
    const cached = this.#cached;
    if (cached?.source === 'assumed' && cached.lifetimeMs > learnt) {
      this.#cached = this.#withLifetime(cached.token, cached.issuedAt, 'assumed', learnt);
    }
  }

  #withLifetime(token: string, issuedAt: number, source: LifetimeSource, lifetimeMs: number): CachedToken {
    const expiresAt = issuedAt + lifetimeMs;
    const refreshAt = issuedAt + renewAfter(lifetimeMs, this.#config.token.refresh_before);
    return { token, issuedAt, expiresAt, refreshAt, source, lifetimeMs };
  }

  #remember(cached: CachedToken): void {
    this.#issued.set(cached.token, {
      issuedAt: cached.issuedAt,
      source: cached.source,
      lifetimeMs: cached.lifetimeMs,
    });
    for (const oldest of this.#issued.keys()) {
      if (this.#issued.size <= REMEMBERED_TOKENS) break;
      this.#issued.delete(oldest);
    }
  }

  async #fetchToken(): Promise<CachedToken> {
    const config = this.#config;
    const grant: TokenRequest = {
      client_id: config.client_id,
      client_secret: config.client_secret,
      audience: `${config.base_url.replace(/\/+$/, '')}/`,
      grant_type: 'client_credentials',
    };
    const { ctx, url, json: fields } = requestFor(TOKEN_OPERATION, apiBases(config), [grant]);
    const body = JSON.stringify(fields);
    const issuedAt = this.#now();
    const response = await withRetry(
      async (attempt) => {
        const res = await this.#http.send({
          ...ctx,
          method: TOKEN_OPERATION.method,
          url,
          headers: { 'content-type': 'application/json' },
          body,
          ...(attempt > 1 ? { retry: true } : {}),
        });
        if (succeeded(TOKEN_OPERATION, res.status)) return res;
        if (res.status === 400 || res.status === 401 || res.status === 403) {
          throw new AuthenticationError(
            config.client_id,
            res.status,
            oauthErrorCode(res.body),
            grant.audience,
          );
        }
        throw errorForStatus(ctx, res.status, { retryAfterMs: parseRetryAfter(res.headers['retry-after']) });
      },
      {
        policy: retryPolicyOf(config.http),
        onRetry: retryLog(this.#logger, ctx, 'retrying token request'),
      },
    );

    let json: unknown;
    try {
      json = JSON.parse(response.body);
    } catch {
      this.#http.unreadable(ctx);
      throw new InvalidPayloadError(ctx, 'token response is not valid JSON', response.status);
    }
    const parsed = TOKEN_OPERATION.response.safeParse(json);
    if (!parsed.success) {
      this.#http.unreadable(ctx);
      throw new InvalidPayloadError(ctx, summarizeIssues(parsed.error.issues), response.status);
    }
    const token = parsed.data.access_token;
    this.#secrets.add(token);

    const { expires_in: expiresIn } = parsed.data;
    const fromJwt = expiresIn === undefined ? jwtLifetime(token, issuedAt) : undefined;
    const [source, lifetimeMs]: [LifetimeSource, number] =
      expiresIn !== undefined
        ? ['expires_in', Math.round(expiresIn * 1000)]
        : fromJwt !== undefined
          ? ['jwt_exp', fromJwt]
          : ['assumed', this.#assumed.ms];
    const cached = this.#withLifetime(token, issuedAt, source, lifetimeMs);
    this.#remember(cached);
    this.#logger?.debug(
      { operation: OPERATION, expiresInMs: lifetimeMs, lifetimeFrom: source },
      'access token obtained',
    );
    return cached;
  }
}
