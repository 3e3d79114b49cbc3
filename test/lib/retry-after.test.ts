import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../src/lib/retry-after.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');

describe('parseRetryAfter', () => {
  it.each([
    ['0', 0],
    [' 120 ', 120_000],
    [['7', '9'], 7_000],
    ['Sun, 01 Mar 2026 12:01:30 GMT', 90_000],
    ['Sun, 01 Mar 2026 11:00:00 GMT', 0],
    ['9'.repeat(400), Number.POSITIVE_INFINITY],
  ] as const)('%j is %d ms', (value, ms) => {
    expect(parseRetryAfter(value, NOW)).toBe(ms);
  });

  it.each([[undefined], [null], [''], ['  '], ['soon'], ['-5'], ['1e3'], ['1.5'], [[]]] as const)(
    '%j is unreadable',
    (value) => {
      expect(parseRetryAfter(value, NOW)).toBeUndefined();
    },
  );

  it('reads fractional seconds only when asked to', () => {
    expect(parseRetryAfter('1.5', NOW, { fractions: true })).toBe(1_500);
    expect(parseRetryAfter('0.0004', NOW, { fractions: true })).toBe(0);
    expect(parseRetryAfter('1.', NOW, { fractions: true })).toBeUndefined();
  });
});
