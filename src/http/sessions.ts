import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { TOKEN_ROLES } from '../config/schema.js';
import type { RedisClient } from '../lib/redis-connection.js';
import { storeKeys } from '../store/keys.js';
import type { Principal, TokenTable } from './tokens.js';

/**
 * Browser sessions: `POST /api/session` trades a token for a random session id in an `HttpOnly`
 * cookie, so a browser (whose `EventSource` and page loads cannot send a bearer header) can use the
 * API, the event stream and the queue UI.
 *
 * - The id is 32 random bytes (256 bits), base64url. Redis keeps the session under the SHA-256 of
 *   the id (`{p}:session:<hex>`, PX = `http.session_ttl`), so the store never holds a usable id.
 * - A session is the principal (actor, role), its CSRF token (32 random bytes, base64url), when it
 *   expires and the fingerprint of the token it was opened with. It lasts `http.session_ttl` from
 *   login, not extended by use; it ends earlier by logout, or when its token is changed or removed
 *   from the config (every replica checks the fingerprint against its own config on each request).
 * - Shared by every replica through Redis: log in on one, use the cookie on any.
 * - At most `MAX_SESSIONS_PER_TOKEN` live sessions per token: each token's sessions are indexed in
 *   `{p}:sessions:<name>` (a sorted set by expiry), and a login beyond that ends the oldest.
 */

export const SESSION_COOKIE = 'fleetwatch_session';

/** Live sessions one token may have; a login beyond that ends the oldest. */
export const MAX_SESSIONS_PER_TOKEN = 100;

/** A session id as issued: 43 base64url characters. Anything else is not looked up. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export interface Session extends Principal {
  readonly csrfToken: string;
  /** Epoch ms. */
  readonly createdAt: number;
  /** Epoch ms. */
  readonly expiresAt: number;
}

const storedSession = z.object({
  actor: z.string(),
  role: z.enum(TOKEN_ROLES),
  csrfToken: z.string(),
  createdAt: z.number(),
  expiresAt: z.number(),
  credential: z.string(),
});

function randomId(): string {
  return randomBytes(32).toString('base64url');
}

export interface SessionStoreOptions {
  redis: RedisClient;
  prefix: string;
  ttlMs: number;
  tokens: TokenTable;
  now?: () => number;
  /** `MAX_SESSIONS_PER_TOKEN` unless given (tests). */
  maxPerToken?: number;
}

function sha256(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}

export class SessionStore {
  readonly #redis: RedisClient;
  readonly #keys: ReturnType<typeof storeKeys>;
  readonly #tokens: TokenTable;
  readonly #now: () => number;
  readonly #maxPerToken: number;
  readonly ttlMs: number;

  constructor(options: SessionStoreOptions) {
    this.#redis = options.redis;
    this.#keys = storeKeys(options.prefix);
    this.#tokens = options.tokens;
    this.#now = options.now ?? Date.now;
    this.#maxPerToken = options.maxPerToken ?? MAX_SESSIONS_PER_TOKEN;
    this.ttlMs = options.ttlMs;
  }

  /** The Redis key of a session id (tests look at it). */
  keyOf(id: string): string {
    return this.#keys.session(sha256(id));
  }

  /** Opens a session for a principal the token table just accepted; returns its id (the cookie value). */
  async open(principal: Principal): Promise<{ id: string; session: Session }> {
    const credential = this.#tokens.credentialOf(principal);
    if (credential === undefined) throw new Error(`no token is configured for ${principal.actor}`);
    const createdAt = this.#now();
    const session: Session = {
      actor: principal.actor,
      role: principal.role,
      csrfToken: randomId(),
      createdAt,
      expiresAt: createdAt + this.ttlMs,
    };
    const id = randomId();
    const digest = sha256(id);
    const index = this.#keys.sessionsOf(principal.actor);
    const replies = await this.#redis
      .multi()
      .set(this.#keys.session(digest), JSON.stringify({ ...session, credential }), 'PX', this.ttlMs)
      .zremrangebyscore(index, '-inf', createdAt)
      .zadd(index, session.expiresAt, digest)
      .pexpire(index, this.ttlMs)
      .zcard(index)
      .exec();
    const failed = replies?.find(([error]) => error !== null)?.[0];
    if (!replies || failed) throw failed ?? new Error('the session was not stored');
    const live = Number(replies[4]?.[1]);
    if (live > this.#maxPerToken) {
      // The oldest first: they expire first.
      const popped = await this.#redis.zpopmin(index, live - this.#maxPerToken);
      const ended = popped.filter((_, at) => at % 2 === 0).map((member) => this.#keys.session(member));
      if (ended.length > 0) await this.#redis.del(...ended);
    }
    return { id, session };
  }

  /**
   * The live session of an id, or undefined: unknown, expired, unreadable, or its token changed or
   * removed since (then the record is deleted too).
   */
  async read(id: string): Promise<Session | undefined> {
    if (!SESSION_ID.test(id)) return undefined;
    const key = this.keyOf(id);
    const text = await this.#redis.get(key);
    if (text === null) return undefined;
    let stored: z.output<typeof storedSession>;
    try {
      stored = storedSession.parse(JSON.parse(text));
    } catch {
      return undefined;
    }
    const { credential, ...session } = stored;
    if (session.expiresAt <= this.#now()) return undefined;
    if (this.#tokens.credentialOf(session) !== credential) {
      await this.#end(id, session.actor);
      return undefined;
    }
    return session;
  }

  /** Ends a session (logout). */
  async close(id: string, session: Principal): Promise<void> {
    if (SESSION_ID.test(id)) await this.#end(id, session.actor);
  }

  async #end(id: string, actor: string): Promise<void> {
    const digest = sha256(id);
    await this.#redis
      .multi()
      .del(this.#keys.session(digest))
      .zrem(this.#keys.sessionsOf(actor), digest)
      .exec();
  }
}

/** The session id the request's `Cookie` header carries, if any. */
export function sessionIdOf(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    if (part.slice(0, at).trim() === SESSION_COOKIE) return part.slice(at + 1).trim();
  }
  return undefined;
}

/**
 * The `Set-Cookie` value: `HttpOnly` (no script reads it), `SameSite=Strict` (no other site's page
 * makes the browser send it), `Path=/` (the API, the stream and the queue UI), and `Secure` unless
 * `secure` is false (see `cookieMayBeInsecure`). `maxAgeMs` 0 clears it.
 */
export function sessionCookie(id: string, maxAgeMs: number, secure: boolean): string {
  const attributes = [
    `${SESSION_COOKIE}=${id}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${Math.floor(maxAgeMs / 1000)}`,
  ];
  if (secure) attributes.push('Secure');
  return attributes.join('; ');
}

export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  const name = host
    .replace(/:\d+$/, '')
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  return name === 'localhost' || isLoopbackAddress(name);
}

/**
 * Whether the cookie may go without `Secure`: only when the request came over plain http, to a
 * loopback address, naming a loopback host, and not through a proxy that says the browser used
 * https. A browser drops a `Secure` cookie set over plain http on some origins and clients (curl's
 * cookie jar among them), and nothing on loopback crosses a network; anywhere else the cookie must
 * never travel unencrypted.
 */
export function cookieMayBeInsecure(request: {
  protocol: string;
  host: string;
  headers: Record<string, string | string[] | undefined>;
  socket: { localAddress?: string | undefined };
}): boolean {
  const forwarded = request.headers['x-forwarded-proto'];
  if (typeof forwarded === 'string' && forwarded.toLowerCase().includes('https')) return false;
  return (
    request.protocol === 'http' &&
    isLoopbackAddress(request.socket.localAddress) &&
    isLoopbackHost(request.host)
  );
}
