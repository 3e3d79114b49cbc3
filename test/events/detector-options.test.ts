import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DETECTOR_OPTIONS,
  detectorOptionsSchema,
  readOptions,
  toDetectorOptions,
} from '../../src/events/detector-options.js';

describe('detector options', () => {
  it('has defaults for every section', () => {
    const section = detectorOptionsSchema.parse({});
    expect(section).toEqual({
      membership: { remove_after: 2 },
      vpn: { failure_threshold: 2, success_threshold: 1 },
      reachability: {
        failure_threshold: 3,
        success_threshold: 1,
        codes: ['timeout', 'network', 'bad_gateway', 'service_unavailable', 'gateway_timeout'],
        statuses: [502, 503, 504],
      },
      health: { failure_threshold: 3, success_threshold: 2 },
      power: { stuck_after: 300_000, stale_after: 900_000 },
      command_queue: { backlog_threshold: 10 },
      upstream: {
        failure_threshold: 2,
        success_threshold: 2,
        error_ratio: 0.5,
        min_requests: 10,
        auth_failures: 5,
      },
      list: { failure_threshold: 2, success_threshold: 2 },
      pace: { failure_threshold: 3, success_threshold: 3 },
    });
    expect(toDetectorOptions(section)).toEqual(DEFAULT_DETECTOR_OPTIONS);
  });

  it('fills a partial section and reads durations written as text', () => {
    const section = detectorOptionsSchema.parse({
      vpn: { failure_threshold: 4 },
      power: { stuck_after: '2m' },
    });
    expect(section.vpn).toEqual({ failure_threshold: 4, success_threshold: 1 });
    expect(section.power).toEqual({ stuck_after: 120_000, stale_after: 900_000 });
    const options = toDetectorOptions(section);
    expect(options.vehicleLink).toEqual({ failureThreshold: 4, successThreshold: 1 });
    expect(options.vehiclePower.stuckAfterMs).toBe(120_000);
  });

  it('takes only error codes an observation can carry, with a did-you-mean', () => {
    const problems = (codes: unknown[]) =>
      detectorOptionsSchema
        .safeParse({ reachability: { codes } })
        .error?.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    expect(problems(['timeout', 'not_found', 'internal'])).toBeUndefined();
    expect(problems(['timeout', 'timout'])).toEqual([
      'reachability.codes.1: unknown error code "timout"; did you mean "timeout"?',
    ]);
    expect(problems(['http_503'])).toEqual([
      'reachability.codes.0: unknown error code "http_503"; an HTTP status goes in statuses (503)',
    ]);
    expect(problems(['bogus'])?.[0]).toMatch(
      /^reachability\.codes\.0: unknown error code "bogus" \(expected one of unauthorized, .*, internal\)$/,
    );
  });

  it('rejects unknown keys, zero thresholds and bad durations, naming the field', () => {
    for (const [input, path] of [
      [{ vpn: { failure_treshold: 2 } }, 'vpn'],
      [{ health: { failure_threshold: 0 } }, 'health.failure_threshold'],
      [{ power: { stale_after: 'soon' } }, 'power.stale_after'],
      [{ upstream: { error_ratio: 2 } }, 'upstream.error_ratio'],
    ] as const) {
      const result = detectorOptionsSchema.safeParse(input);
      expect(result.success).toBe(false);
      expect(result.error?.issues.map((issue) => issue.path.join('.'))).toContain(path);
    }
  });

  it('reads options at run time leniently', () => {
    const defaults = DEFAULT_DETECTOR_OPTIONS.vehiclePower;
    expect(readOptions(undefined, defaults)).toEqual(defaults);
    expect(readOptions(42, defaults)).toEqual(defaults);
    expect(readOptions({ stuckAfterMs: -1, staleAfterMs: 'x', failureThreshold: 5 }, defaults)).toEqual({
      ...defaults,
      failureThreshold: 5,
    });
    expect(readOptions({ unreachableCodes: ['timeout', 7] }, defaults).unreachableCodes).toEqual(['timeout']);
  });
});
