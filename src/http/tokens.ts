import { createHash, timingSafeEqual } from 'node:crypto';
import { API_TOKEN_ACTOR, type HttpConfig, type TokenRole } from '../config/schema.js';

/**
 * The API's tokens and what each may do: `http.api_token` (role `admin`, actor `api_token`) and
 * every `http.tokens` entry (its own name and role). Routes say what they need with
 * `config: { access }` (`read`, `write`, `admin`); a role grants these:
 *
 * | role      | `read` | `write` | `admin` (queue UI) |
 * |-----------|--------|---------|--------------------|
 * | `read`    | yes    | no      | no                 |
 * | `operate` | yes    | yes     | no                 |
 * | `admin`   | yes    | yes     | yes                |
 *
 * A token is compared with every configured one in constant time, without stopping at a match
 * (SHA-256 of both sides, then `timingSafeEqual`), so neither which token matched nor how much of
 * one matched leaks through timing. Tokens never leave this module; a session keeps a fingerprint
 * (`credential`) instead, so changing or removing a token ends the sessions opened with it.
 */

export type GuardedAccess = 'read' | 'write' | 'admin';

const GRANTS: Record<TokenRole, readonly GuardedAccess[]> = {
  read: ['read'],
  operate: ['read', 'write'],
  admin: ['read', 'write', 'admin'],
};

export function roleAllows(role: TokenRole, access: GuardedAccess): boolean {
  return GRANTS[role].includes(access);
}

/** The roles that may use a route of `access`, as a message says them: `operate or admin`. */
export function rolesFor(access: GuardedAccess): string {
  const roles = (Object.keys(GRANTS) as TokenRole[]).filter((role) => roleAllows(role, access));
  return roles.length === 1 ? roles[0]! : `${roles.slice(0, -1).join(', ')} or ${roles.at(-1)}`;
}

/** Who a token is: the name the audit trail gives (`actor`) and its role. */
export interface Principal {
  readonly actor: string;
  readonly role: TokenRole;
}

interface Entry extends Principal {
  readonly digest: Buffer;
  readonly credential: string;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Constant-time equality of two strings of any lengths. */
export function sameToken(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** What a session keeps instead of the token: enough to notice the token changed, never to recover it. */
function fingerprint(token: string): string {
  return createHash('sha256').update(`fleetwatch session credential\0${token}`, 'utf8').digest('base64url');
}

export class TokenTable {
  readonly #entries: readonly Entry[];

  constructor(http: Pick<HttpConfig, 'api_token' | 'tokens'>) {
    const entries: Array<Principal & { token: string }> = [];
    if (http.api_token !== undefined && http.api_token !== '') {
      entries.push({ actor: API_TOKEN_ACTOR, role: 'admin', token: http.api_token });
    }
    for (const entry of http.tokens)
      entries.push({ actor: entry.name, role: entry.role, token: entry.token });
    this.#entries = entries.map(({ token, ...principal }) => ({
      ...principal,
      digest: digest(token),
      credential: fingerprint(token),
    }));
  }

  /** Whether any token is configured (without one, reads are open and changes refused). */
  get configured(): boolean {
    return this.#entries.length > 0;
  }

  /** The token's principal, or undefined when it is none of the configured ones. */
  find(token: string): Principal | undefined {
    const given = digest(token);
    let found: Entry | undefined;
    for (const entry of this.#entries) {
      // No early exit: every entry is compared, whichever matches.
      if (timingSafeEqual(given, entry.digest) && found === undefined) found = entry;
    }
    return found === undefined ? undefined : { actor: found.actor, role: found.role };
  }

  /** The fingerprint of a principal's current token (undefined when it is no longer configured). */
  credentialOf(principal: Principal): string | undefined {
    const entry = this.#entries.find(
      (candidate) => candidate.actor === principal.actor && candidate.role === principal.role,
    );
    return entry?.credential;
  }
}
