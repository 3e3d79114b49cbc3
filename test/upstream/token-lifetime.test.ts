import { describe, expect, it } from 'vitest';
import {
  AssumedLifetime,
  jwtLifetime,
  MAX_JWT_LIFETIME_MS,
  MIN_ASSUMED_LIFETIME_MS,
  renewAfter,
} from '../../src/upstream/token-lifetime.js';

const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const jwt = (claims: unknown) => `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}.c2lnbmF0dXJl`;

const NOW = Date.parse('2026-11-21T08:00:00.000Z');
const sec = NOW / 1000;

describe('jwtLifetime', () => {
  it('counts exp from when the token was asked for', () => {
    expect(jwtLifetime(jwt({ exp: sec + 4 }), NOW)).toBe(4_000);
    expect(jwtLifetime(jwt({ sub: 'x', exp: sec + 3_600 }), NOW + 500)).toBe(3_599_500);
  });

  it('takes exp − iat when that is shorter (a local clock behind the issuer would stretch it)', () => {
    // The issuer's clock is 10 minutes ahead: exp looks 10 minutes further away than it is.
    expect(jwtLifetime(jwt({ iat: sec + 600, exp: sec + 604 }), NOW)).toBe(4_000);
    // iat after exp is unreadable as a duration: exp alone counts.
    expect(jwtLifetime(jwt({ iat: sec + 60, exp: sec + 30 }), NOW)).toBe(30_000);
  });

  it('ignores an exp that is missing, unreadable, in the past or absurdly far', () => {
    for (const claims of [
      {},
      { exp: 'tomorrow' },
      { exp: null },
      { exp: sec - 1 },
      { exp: sec },
      { exp: sec + MAX_JWT_LIFETIME_MS / 1000 + 1 },
      // Milliseconds instead of seconds.
      { exp: NOW + 4_000 },
    ]) {
      expect(jwtLifetime(jwt(claims), NOW), JSON.stringify(claims)).toBeUndefined();
    }
    expect(jwtLifetime(jwt({ exp: sec + MAX_JWT_LIFETIME_MS / 1000 }), NOW)).toBe(MAX_JWT_LIFETIME_MS);
  });

  it('treats anything but three base64url parts with a JSON object in the middle as no JWT', () => {
    for (const token of [
      'opaque-token-abcdef',
      `${part({ exp: sec + 4 })}.${part({ exp: sec + 4 })}`,
      `a.${part({ exp: sec + 4 })}.b.c`,
      `a.${part([sec + 4])}.b`,
      `a.${part(sec + 4)}.b`,
      `a.${Buffer.from('{"exp":').toString('base64url')}.b`,
      `a.${part({ exp: sec + 4 })}=.b`,
      `a.${'A'.repeat(20_000)}.b`,
    ]) {
      expect(jwtLifetime(token, NOW), token.slice(0, 40)).toBeUndefined();
    }
  });
});

describe('AssumedLifetime', () => {
  it('starts at the default and shortens to the age of a token refused below its assumed lifetime', () => {
    const lifetime = new AssumedLifetime(3_600_000);
    expect(lifetime.ms).toBe(3_600_000);
    expect(lifetime.refusedAt(4_250.7, 3_600_000)).toBe(4_250);
    expect(lifetime.ms).toBe(4_250);
  });

  it('never grows back, and a token that outlived its assumed lifetime teaches nothing', () => {
    const lifetime = new AssumedLifetime(60_000);
    expect(lifetime.refusedAt(5_000, 60_000)).toBe(5_000);
    // A token issued under the old assumption, refused later than the new one: no change.
    expect(lifetime.refusedAt(8_000, 60_000)).toBeUndefined();
    // Refused at or after the lifetime assumed for it: it had simply expired.
    expect(lifetime.refusedAt(5_000, 5_000)).toBeUndefined();
    expect(lifetime.refusedAt(Number.NaN, 5_000)).toBeUndefined();
    expect(lifetime.ms).toBe(5_000);
    expect(lifetime.refusedAt(3_000, 5_000)).toBe(3_000);
  });

  it(`never assumes less than ${MIN_ASSUMED_LIFETIME_MS} ms`, () => {
    const lifetime = new AssumedLifetime(3_600_000);
    expect(lifetime.refusedAt(12, 3_600_000)).toBe(MIN_ASSUMED_LIFETIME_MS);
    expect(lifetime.refusedAt(0, MIN_ASSUMED_LIFETIME_MS)).toBeUndefined();
    expect(new AssumedLifetime(10).ms).toBe(MIN_ASSUMED_LIFETIME_MS);
  });
});

describe('renewAfter', () => {
  it('renews refresh_before ahead, but at most half the lifetime early', () => {
    expect(renewAfter(3_600_000, 60_000)).toBe(3_540_000);
    expect(renewAfter(4_000, 60_000)).toBe(2_000);
    expect(renewAfter(4_000, 0)).toBe(4_000);
  });
});
