import { describe, expect, it } from 'vitest';
import {
  classifyAnswer,
  EXCERPT_LENGTH,
  excerptOf,
  parseRetryAfter,
} from '../../../../src/notifiers/receivers/webhook/response.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const answer = (status: number, retryAfter?: string, excerpt = '') =>
  classifyAnswer({ status, retryAfter, excerpt, now: NOW });

describe('classifyAnswer', () => {
  it('maps every status class to its outcome', () => {
    expect(answer(200)).toEqual({ kind: 'delivered', status: 200 });
    expect(answer(204)).toEqual({ kind: 'delivered', status: 204 });
    expect(answer(301)).toMatchObject({
      kind: 'retry',
      status: 301,
      reason: expect.stringMatching(/redirect/),
    });
    expect(answer(308)).toMatchObject({ kind: 'retry', status: 308 });
    expect(answer(410, undefined, 'endpoint deleted')).toEqual({
      kind: 'gone',
      status: 410,
      reason: 'HTTP 410: endpoint deleted',
    });
    expect(answer(400, undefined, 'bad')).toEqual({ kind: 'rejected', status: 400, reason: 'HTTP 400: bad' });
    expect(answer(401)).toEqual({ kind: 'rejected', status: 401, reason: 'HTTP 401' });
    expect(answer(413)).toMatchObject({ kind: 'rejected', status: 413 });
    expect(answer(500)).toEqual({ kind: 'retry', status: 500, reason: 'HTTP 500' });
    expect(answer(599)).toMatchObject({ kind: 'retry', status: 599 });
  });

  it('throttles 429, 502, 503 and 504 when Retry-After is given, and retries them otherwise', () => {
    for (const status of [429, 502, 503, 504]) {
      expect(answer(status, '30')).toEqual({
        kind: 'throttled',
        status,
        retryAfterMs: 30_000,
        reason: `HTTP ${status}: retry after 30s`,
      });
      expect(answer(status)).toMatchObject({ kind: 'retry', status });
      expect(answer(status, 'soon')).toMatchObject({ kind: 'retry', status });
    }
  });

  it('passes a Retry-After on another 5xx on as a hint', () => {
    expect(answer(500, '5')).toEqual({ kind: 'retry', status: 500, reason: 'HTTP 500', retryAfterMs: 5_000 });
  });
});

describe('parseRetryAfter', () => {
  it('reads delay-seconds and HTTP dates', () => {
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter(' 120 ', NOW)).toBe(120_000);
    expect(parseRetryAfter('Sun, 01 Mar 2026 12:01:30 GMT', NOW)).toBe(90_000);
    expect(parseRetryAfter('Sun, 01 Mar 2026 11:00:00 GMT', NOW)).toBe(0);
  });

  it('ignores what it cannot read and keeps a long wait as asked (max_hold bounds it later)', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
    expect(parseRetryAfter('', NOW)).toBeUndefined();
    expect(parseRetryAfter('-5', NOW)).toBeUndefined();
    expect(parseRetryAfter('1.5', NOW)).toBeUndefined();
    expect(parseRetryAfter('2026', NOW)).toBe(2_026_000);
    expect(parseRetryAfter('later', NOW)).toBeUndefined();
    expect(parseRetryAfter('99999999', NOW)).toBe(99_999_999_000);
  });
});

describe('excerptOf', () => {
  it('makes one line of at most 200 characters', () => {
    expect(excerptOf('  {"error":\n\t"bad"}\r\n')).toBe('{"error": "bad"}');
    expect(excerptOf('a\u0000b\u001bc')).toBe('a b c');
    const long = excerptOf('x'.repeat(5_000));
    expect(long).toHaveLength(EXCERPT_LENGTH);
    expect(long.endsWith('…')).toBe(true);
  });
});
