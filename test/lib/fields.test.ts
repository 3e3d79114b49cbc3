import { describe, expect, it } from 'vitest';
import { TIMER_LIMIT_MS } from '../../src/lib/duration.js';
import { COUNT, checkValue, DURATION, durationField, NUMBER, SIZE, sizeField } from '../../src/lib/fields.js';
import { formatSize, parseSize } from '../../src/lib/size.js';

describe('bounded fields', () => {
  it('refuse, when defined, a duration that arms a timer beyond what Node can wait', () => {
    expect(() => durationField(0, TIMER_LIMIT_MS)).not.toThrow();
    expect(() => durationField(0, TIMER_LIMIT_MS + 1)).toThrow(/cannot exceed/);
    expect(() => durationField(0, 365 * 86_400_000, { armsTimer: false })).not.toThrow();
  });

  it('say the range, an example within it and what was given', () => {
    const interval = { min: 1_000, max: 86_400_000 };
    expect(checkValue(DURATION, interval, '999999999d')).toEqual({
      ok: false,
      problem: 'expected a duration between 1s and 1d, like 30s; got 999999999d',
    });
    expect(checkValue(DURATION, interval, undefined)).toEqual({
      ok: false,
      problem: 'is required (a duration between 1s and 1d, like 30s)',
    });
    expect(checkValue(DURATION, { min: 60_000, max: 86_400_000 }, 'a while')).toEqual({
      ok: false,
      problem: 'expected a duration between 1m and 1d, like 5m; got "a while"',
    });
    expect(checkValue(NUMBER, { min: 0, max: 1, aboveMin: true }, 0)).toEqual({
      ok: false,
      problem: 'expected a number above 0 and at most 1; got 0',
    });
    expect(checkValue(COUNT, { min: 1, max: 10 }, 'x'.repeat(100))).toEqual({
      ok: false,
      problem: `expected a whole number between 1 and 10; got ${'x'.repeat(40)}…`,
    });
  });

  it('ask, when a bare number of milliseconds is out of range but as many seconds are not, whether seconds were meant', () => {
    const interval = { min: 1_000, max: 86_400_000 };
    for (const input of [30, '30']) {
      expect(checkValue(DURATION, interval, input)).toEqual({
        ok: false,
        problem:
          'expected a duration between 1s and 1d, like 30s; got 30 (a bare number is milliseconds; did you mean 30s?)',
      });
    }
    // No hint where seconds would not fit either, nor for a unit or another quantity.
    expect(checkValue(DURATION, interval, 0)).toEqual({
      ok: false,
      problem: 'expected a duration between 1s and 1d, like 30s; got 0',
    });
    expect(checkValue(DURATION, interval, '30ms')).toEqual({
      ok: false,
      problem: 'expected a duration between 1s and 1d, like 30s; got 30ms',
    });
    expect(checkValue(COUNT, { min: 100, max: 200 }, 30)).toEqual({
      ok: false,
      problem: 'expected a whole number between 100 and 200; got 30',
    });
  });

  it('read what people write: units, milliseconds, and numbers that arrive as text', () => {
    expect(checkValue(DURATION, { min: 0, max: 86_400_000 }, '1.5h')).toEqual({ ok: true, value: 5_400_000 });
    expect(checkValue(DURATION, { min: 0, max: 86_400_000 }, 2_500)).toEqual({ ok: true, value: 2_500 });
    expect(checkValue(DURATION, { min: 0, max: 86_400_000 }, '2500')).toEqual({ ok: true, value: 2_500 });
    // `${CONCURRENCY}` interpolates to text.
    expect(checkValue(COUNT, { min: 1, max: 256 }, '8')).toEqual({ ok: true, value: 8 });
    expect(checkValue(COUNT, { min: 1, max: 256 }, 1.5).ok).toBe(false);
    expect(checkValue(DURATION, { min: 0, max: 86_400_000 }, Number.POSITIVE_INFINITY).ok).toBe(false);
    expect(checkValue(SIZE, { min: 1_024, max: 1_073_741_824 }, '16MiB')).toEqual({
      ok: true,
      value: 16_777_216,
    });
  });

  it('read and write sizes in bytes, binary and decimal units', () => {
    expect(parseSize('16MiB')).toBe(16_777_216);
    expect(parseSize('1.5 KiB')).toBe(1_536);
    expect(parseSize('1MB')).toBe(1_000_000);
    expect(parseSize('2048')).toBe(2_048);
    expect(parseSize('10 megs')).toBeUndefined();
    expect(formatSize(16_777_216)).toBe('16MiB');
    expect(formatSize(1_000_000)).toBe('1000000B');
    expect(sizeField(1_024, 1_048_576).safeParse('2MiB').success).toBe(false);
  });
});
