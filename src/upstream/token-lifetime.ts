/**
 * How long an access token lives, when the issuer does not say so with `expires_in` (the spec
 * leaves the lifetime open):
 *
 * 1. the token's JWT `exp` claim, when the token is a JWT (`jwtLifetime`); fleetwatch only reads
 *    the claim, it is not the audience that verifies the signature;
 * 2. else an assumed lifetime (`AssumedLifetime`): `upstream.token.default_ttl` at first, and
 *    shortened when the API refuses a token younger than that.
 */

/** Where a token's lifetime came from. */
export type LifetimeSource = 'expires_in' | 'jwt_exp' | 'assumed';

/** The shortest lifetime fleetwatch ever assumes: a token is renewed at most twice a second. */
export const MIN_ASSUMED_LIFETIME_MS = 1_000;

/**
 * An `exp` further ahead than this is not believed (an `exp` written in milliseconds instead of
 * seconds, say): such a token is treated as one that says nothing about its lifetime.
 */
export const MAX_JWT_LIFETIME_MS = 24 * 3_600_000;

/** A JWT payload this long is not read (the token response itself is bounded, this is cheaper). */
const MAX_PAYLOAD_CHARS = 16_384;

const BASE64URL = /^[A-Za-z0-9_-]+$/;

function numericDate(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/**
 * The lifetime a JWT access token claims, counted from `issuedAt` (when fleetwatch asked for
 * it): `exp` minus that time, or `exp − iat` when the token has an `iat` and that is shorter (a
 * clock running behind the issuer's would otherwise stretch the lifetime). Undefined when the
 * token is not a JWT (three base64url parts, the middle one a JSON object) or its `exp` is
 * missing, unreadable, in the past or more than `MAX_JWT_LIFETIME_MS` ahead.
 */
export function jwtLifetime(token: string, issuedAt: number): number | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const payload = parts[1]!;
  if (payload.length > MAX_PAYLOAD_CHARS || !BASE64URL.test(payload)) return undefined;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return undefined;
  const { exp: rawExp, iat: rawIat } = claims as { exp?: unknown; iat?: unknown };
  const exp = numericDate(rawExp);
  if (exp === undefined) return undefined;
  let lifetime = exp * 1000 - issuedAt;
  const iat = numericDate(rawIat);
  if (iat !== undefined && iat <= exp) lifetime = Math.min(lifetime, (exp - iat) * 1000);
  lifetime = Math.floor(lifetime);
  return lifetime > 0 && lifetime <= MAX_JWT_LIFETIME_MS ? lifetime : undefined;
}

/**
 * The lifetime assumed for tokens that carry none (no `expires_in`, no usable JWT `exp`). It
 * starts at `default_ttl`. When the API refuses such a token (401) at an age below the lifetime
 * assumed for it, and accepts a fresh token right after, the token had expired: its lifetime is at
 * most that age, which becomes the assumed lifetime of the tokens that follow (never below
 * `MIN_ASSUMED_LIFETIME_MS`). It only ever shortens: a token that states its own lifetime
 * (`expires_in`, `exp`) is used as it says, and a restart starts again from `default_ttl`.
 */
export class AssumedLifetime {
  #ms: number;

  constructor(defaultMs: number) {
    this.#ms = Math.max(MIN_ASSUMED_LIFETIME_MS, defaultMs);
  }

  get ms(): number {
    return this.#ms;
  }

  /**
   * A token assumed to live `assumedMs` was refused at `ageMs`. Returns the new assumed lifetime
   * when this shortens it, else undefined (the token had outlived its assumed lifetime, or an
   * earlier refusal already taught as much).
   */
  refusedAt(ageMs: number, assumedMs: number): number | undefined {
    if (!Number.isFinite(ageMs) || ageMs >= assumedMs) return undefined;
    const next = Math.max(MIN_ASSUMED_LIFETIME_MS, Math.floor(ageMs));
    if (next >= this.#ms) return undefined;
    this.#ms = next;
    return next;
  }
}

/**
 * When to renew a token of `lifetimeMs`: `refreshBeforeMs` ahead of its expiry, but never more
 * than half its lifetime early, so a 4-second token is used for 2 seconds rather than not at all.
 */
export function renewAfter(lifetimeMs: number, refreshBeforeMs: number): number {
  return lifetimeMs - Math.min(refreshBeforeMs, lifetimeMs / 2);
}
