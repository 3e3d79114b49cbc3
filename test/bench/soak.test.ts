import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { type SoakSample, soakDuration, trendOf } from '../../bench/soak.js';

const MB = 2 ** 20;
const MINUTE = 60_000;

/** One sample a minute for `minutes`, `base(t)` MB plus a garbage sawtooth of 0–30 MB. */
function samples(minutes: number, base: (minute: number) => number): SoakSample[] {
  return Array.from({ length: minutes + 1 }, (_, m) => ({
    atMs: m * MINUTE,
    bytes: (base(m) + ((m * 7) % 4) * 10) * MB,
  }));
}

describe('the soak', () => {
  it('takes a duration with a unit, from 5 minutes to 4 hours', () => {
    expect(soakDuration('30m')).toBe(30 * MINUTE);
    expect(soakDuration('2h')).toBe(120 * MINUTE);
    expect(soakDuration('300s')).toBe(5 * MINUTE);
    expect(() => soakDuration('30')).toThrow(InvalidArgumentError);
    expect(() => soakDuration('30')).toThrow('expected a duration such as 30m, 90m or 2h; got "30"');
    expect(() => soakDuration('4m')).toThrow('expected a duration from 5m to 4h; got 4m');
    expect(() => soakDuration('5h')).toThrow('expected a duration from 5m to 4h; got 5h');
  });

  it('sees no growth in a flat line under a sawtooth, whatever the warm-up did', () => {
    const trend = trendOf(
      samples(60, (m) => (m < 10 ? 100 + 10 * m : 200)),
      10 * MINUTE,
      60 * MINUTE,
    );
    expect(Math.abs(trend.slopePerHour)).toBeLessThan(1 * MB);
    expect(trend.start).toBe(100 * MB);
    expect(trend.max).toBe(230 * MB);
  });

  it('measures what stays: 12 MB an hour under the sawtooth', () => {
    const trend = trendOf(
      samples(60, (m) => 200 + m / 5),
      10 * MINUTE,
      60 * MINUTE,
    );
    expect(trend.slopePerHour / MB).toBeGreaterThan(10);
    expect(trend.slopePerHour / MB).toBeLessThan(14);
  });
});
