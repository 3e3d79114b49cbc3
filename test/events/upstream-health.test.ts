import { describe, expect, it } from 'vitest';
import { EVENT } from '../../src/events/catalogue.js';
import { DEFAULT_DETECTOR_OPTIONS, type UpstreamHealthOptions } from '../../src/events/detector-options.js';
import { upstreamHealthDetector } from '../../src/events/detectors/upstream-health.js';
import { at, Script, typesOf } from './helpers.js';

const upstream = (options: Partial<UpstreamHealthOptions> = {}) =>
  new Script(upstreamHealthDetector, {
    ...DEFAULT_DETECTOR_OPTIONS.upstreamHealth,
    failureThreshold: 2,
    successThreshold: 2,
    errorRatio: 0.5,
    minRequests: 10,
    authFailures: 5,
    ...options,
  });
const fine = { requests: 100, authFailures: 0, serverErrors: 1, timeouts: 1 };
const failing = { requests: 100, authFailures: 0, serverErrors: 40, timeouts: 20 };

describe('upstream health', () => {
  it('is silent while healthy and on a single bad window', () => {
    const script = upstream();
    script.ok(0, fine);
    script.ok(60, failing);
    script.ok(120, fine);
    script.ok(180, { requests: 100, authFailures: 4, serverErrors: 49, timeouts: 0 });
    script.ok(240, fine);
    expect(script.all).toEqual([]);
  });

  it('degrades after K bad windows by error ratio, and recovers with the duration', () => {
    const script = upstream();
    script.ok(0, fine);
    script.ok(60, failing);
    expect(script.ok(120, failing)).toEqual([
      {
        type: EVENT.upstreamDegraded,
        data: {
          severity: 'critical',
          previous: 'healthy',
          current: 'degraded',
          since: at(60),
          consecutiveWindows: 2,
          reasons: ['error_ratio'],
          window: { ...failing, unreadable: 0 },
          errorRatio: 0.6,
        },
      },
    ]);
    script.ok(180, failing);
    script.ok(240, fine);
    expect(script.ok(300, fine)).toEqual([
      {
        type: EVENT.upstreamRecovered,
        data: {
          severity: 'info',
          previous: 'degraded',
          current: 'healthy',
          since: at(60),
          durationMs: 180_000,
        },
      },
    ]);
  });

  it('counts answers not as the spec says among the errors of the ratio', () => {
    const script = upstream();
    const garbled = { requests: 100, authFailures: 0, serverErrors: 0, timeouts: 0, unreadable: 60 };
    script.ok(0, fine);
    script.ok(60, garbled);
    expect(script.ok(120, garbled)).toMatchObject([
      { type: EVENT.upstreamDegraded, data: { reasons: ['error_ratio'], window: garbled, errorRatio: 0.6 } },
    ]);
  });

  it('degrades on a 401/403 storm whatever the ratio', () => {
    const script = upstream({ failureThreshold: 1 });
    script.ok(0, fine);
    const events = script.ok(60, { requests: 1000, authFailures: 5, serverErrors: 0, timeouts: 0 });
    expect(typesOf(events)).toEqual([EVENT.upstreamDegraded]);
    expect(events[0]?.data.reasons).toEqual(['auth_failures']);
  });

  it('skips windows that say nothing: no requests, or errors on fewer than min_requests', () => {
    const script = upstream({ failureThreshold: 2, successThreshold: 1 });
    script.ok(0, fine);
    script.ok(60, failing);
    script.ok(120, { requests: 0, authFailures: 0, serverErrors: 0, timeouts: 0 });
    script.ok(180, { requests: 3, authFailures: 0, serverErrors: 3, timeouts: 0 });
    expect(typesOf(script.ok(240, failing))).toEqual([EVENT.upstreamDegraded]);
    expect(typesOf(script.ok(300, { requests: 3, authFailures: 0, serverErrors: 0, timeouts: 0 }))).toEqual([
      EVENT.upstreamRecovered,
    ]);
  });

  it('ignores failed observations and unusable windows', () => {
    const script = upstream({ failureThreshold: 1 });
    script.ok(0, fine);
    script.fail(60, 'timeout');
    script.ok(120, { requests: 'many' } as never);
    script.ok(180, null as never);
    expect(script.all).toEqual([]);
  });
});
