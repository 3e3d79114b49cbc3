import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IssuerOptions, SimClient } from './types.js';

export interface ClientGrant {
  id: string;
  vehicles: 'all' | Set<string>;
  robots: 'all' | Set<string>;
  /** Declared order of a restricted grant, for listing. */
  vehicleList: string[] | null;
  robotList: string[] | null;
  forbidden: boolean;
  secretHash: Buffer;
}

export const DEFAULT_CLIENTS: SimClient[] = [{ id: 'fleetwatch-demo', secret: 'demo-secret' }];

const hash = (s: string) => createHash('sha256').update(s).digest();
const SWEEP_EVERY = 1024;
const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** What the token endpoint answers with a token. */
export interface IssuedToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in?: number;
}

/**
 * Issues bearer tokens for the configured clients and resolves them back to a grant. How it
 * issues them (`IssuerOptions`) can change while it runs; tokens already issued keep their expiry.
 * The spec says nothing of the lifetime, so both an issuer that sends `expires_in` and one that
 * does not, with opaque tokens or with JWTs carrying `iat` and `exp`, follow it.
 */
export class TokenIssuer {
  private readonly clients = new Map<string, ClientGrant>();
  private readonly tokens = new Map<string, { client: ClientGrant; expiresAt: number }>();
  private issuedSinceSweep = 0;
  /** Signs the JWTs (nobody verifies them but the simulator, which looks tokens up instead). */
  private readonly signingKey = randomBytes(32);
  options: Required<IssuerOptions>;

  constructor(clients: SimClient[], options: IssuerOptions = {}) {
    this.options = { tokenTtlSeconds: 3600, sendExpiresIn: true, jwt: false, ...options };
    for (const c of clients) {
      this.clients.set(c.id, {
        id: c.id,
        vehicles: !c.vehicles || c.vehicles === 'all' ? 'all' : new Set(c.vehicles),
        robots: !c.robots || c.robots === 'all' ? 'all' : new Set(c.robots),
        vehicleList: Array.isArray(c.vehicles) ? [...c.vehicles] : null,
        robotList: Array.isArray(c.robots) ? [...c.robots] : null,
        forbidden: c.forbidden === true,
        secretHash: hash(c.secret),
      });
    }
  }

  /** Constant-time secret check (hashes have equal length). */
  authenticate(clientId: string, secret: string): ClientGrant | undefined {
    const client = this.clients.get(clientId);
    const ok = timingSafeEqual(client?.secretHash ?? hash(`\0${secret}`), hash(secret));
    return client && ok ? client : undefined;
  }

  /** Changes how tokens are issued from now on; returns the whole set. */
  configure(options: IssuerOptions): Required<IssuerOptions> {
    this.options = { ...this.options, ...options };
    return { ...this.options };
  }

  issue(client: ClientGrant, now: number): IssuedToken {
    if (++this.issuedSinceSweep >= SWEEP_EVERY) this.sweep(now);
    const { tokenTtlSeconds, sendExpiresIn, jwt } = this.options;
    let token: string;
    let expiresAt = now + Math.round(tokenTtlSeconds * 1000);
    if (jwt) {
      // Whole seconds, as issuers write NumericDates: the token expires at `exp` exactly.
      const iat = Math.floor(now / 1000);
      const exp = Math.floor(expiresAt / 1000);
      expiresAt = exp * 1000;
      const unsigned = `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url({
        sub: client.id,
        iat,
        exp,
        jti: randomBytes(12).toString('base64url'),
      })}`;
      token = `${unsigned}.${createHmac('sha256', this.signingKey).update(unsigned).digest('base64url')}`;
    } else {
      token = randomBytes(24).toString('base64url');
    }
    this.tokens.set(token, { client, expiresAt });
    return {
      access_token: token,
      token_type: 'Bearer',
      ...(sendExpiresIn ? { expires_in: tokenTtlSeconds } : {}),
    };
  }

  /** The grant behind a live token, or undefined (unknown, revoked or expired). */
  verify(token: string, now: number): ClientGrant | undefined {
    const entry = this.tokens.get(token);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.tokens.delete(token);
      return undefined;
    }
    return entry.client;
  }

  expireAll(): number {
    const n = this.tokens.size;
    this.tokens.clear();
    return n;
  }

  activeTokens(now: number): number {
    this.sweep(now);
    return this.tokens.size;
  }

  describeClients() {
    return [...this.clients.values()].map((c) => ({
      id: c.id,
      vehicles: c.vehicleList ?? ('all' as const),
      robots: c.robotList ?? ('all' as const),
      forbidden: c.forbidden,
    }));
  }

  private sweep(now: number): void {
    this.issuedSinceSweep = 0;
    for (const [token, entry] of this.tokens) if (entry.expiresAt <= now) this.tokens.delete(token);
  }
}

export function canSeeVehicle(client: ClientGrant, id: string): boolean {
  return client.vehicles === 'all' || client.vehicles.has(id);
}

export function canSeeRobot(client: ClientGrant, deviceId: string): boolean {
  return client.robots === 'all' || client.robots.has(deviceId);
}
