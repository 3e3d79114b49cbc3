import { describe, expect, it } from 'vitest';
import { EVENT } from '../../src/events/catalogue.js';
import { robotHealthDetector } from '../../src/events/detectors/robot-health.js';
import { at, Script, typesOf } from './helpers.js';

const health = (failureThreshold = 3, successThreshold = 2) =>
  new Script(robotHealthDetector, { failureThreshold, successThreshold });
const healthy = { status: 'ok' };

describe('robot health', () => {
  it('is silent on a healthy baseline and on flaps under the thresholds', () => {
    const script = health(3, 2);
    script.ok(0, healthy);
    script.fail(10, 'timeout');
    script.fail(20, 'internal_server_error', 500);
    script.ok(30, healthy);
    script.fail(40, 'invalid_payload');
    script.fail(50, 'network');
    script.ok(60, {});
    expect(script.all).toEqual([]);
  });

  it('goes down exactly at N consecutive failures, once, and up after M good checks with the duration', () => {
    const script = health(3, 2);
    script.ok(0, healthy);
    script.fail(10, 'timeout');
    script.fail(20, 'timeout');
    expect(script.fail(30, 'bad_gateway', 502)).toEqual([
      {
        type: EVENT.robotHealthDown,
        data: {
          severity: 'critical',
          previous: 'up',
          current: 'down',
          since: at(10),
          consecutiveFailures: 3,
          lastError: { code: 'bad_gateway', status: 502 },
        },
      },
    ]);
    for (let s = 40; s < 100; s += 10) expect(script.fail(s, 'timeout')).toEqual([]);
    expect(script.ok(100, healthy)).toEqual([]);
    expect(script.fail(110, 'timeout')).toEqual([]);
    expect(script.ok(120, healthy)).toEqual([]);
    expect(script.ok(130, healthy)).toEqual([
      {
        type: EVENT.robotHealthUp,
        data: { severity: 'info', previous: 'down', current: 'up', since: at(10), durationMs: 110_000 },
      },
    ]);
    expect(script.count(EVENT.robotHealthDown)).toBe(1);
    expect(script.count(EVENT.robotHealthUp)).toBe(1);
  });

  it('reports a robot failing from the start, with previous null', () => {
    const script = health(2, 1);
    script.fail(0, 'timeout');
    const events = script.fail(10, 'timeout');
    expect(typesOf(events)).toEqual([EVENT.robotHealthDown]);
    expect(events[0]?.data.previous).toBeNull();
  });

  it('cycles: each outage is one down and one up', () => {
    const script = health(1, 1);
    script.ok(0, healthy);
    for (let i = 1; i <= 5; i += 1) {
      script.fail(i * 100, 'timeout');
      script.ok(i * 100 + 50, healthy);
    }
    expect(script.count(EVENT.robotHealthDown)).toBe(5);
    expect(script.count(EVENT.robotHealthUp)).toBe(5);
    expect(
      script.all.filter((event) => event.type === EVENT.robotHealthUp).map((e) => e.data.durationMs),
    ).toEqual([50_000, 50_000, 50_000, 50_000, 50_000]);
  });
});
