import { describe, expect, it } from 'vitest';
import { robotHealthDetector } from '../../src/events/detectors/robot-health.js';
import { vehiclePowerDetector } from '../../src/events/detectors/vehicle-power.js';
import { toObservationError } from '../../src/pollers/observe.js';
import {
  AuthenticationError,
  ForbiddenError,
  InvalidPayloadError,
  NetworkError,
  NotFoundError,
  ServiceUnavailableError,
  UnauthorizedError,
  UpstreamTimeoutError,
} from '../../src/upstream/errors.js';
import { Script } from '../events/helpers.js';

const token = { operation: 'oauth_token' };
const health = { operation: 'robot.health', target: 'rb-1' };

describe('the class of an observation error, decided once from the upstream error', () => {
  it.each([
    ['the issuer refusing the credentials', new AuthenticationError('client', 401)],
    ['the issuer answering 503', new ServiceUnavailableError(token)],
    ['the issuer not answering', new UpstreamTimeoutError(token, 5_000)],
    ['the issuer unreachable', new NetworkError(token, 'ECONNREFUSED')],
    ['an unreadable token answer', new InvalidPayloadError(token, 'not JSON', 200)],
    ['a 401 after re-authentication', new UnauthorizedError(health)],
    ['a 403', new ForbiddenError(health)],
  ])('%s is an access failure, not the entity failing', (_what, error) => {
    expect(toObservationError(error)).toMatchObject({ class: 'access', code: error.code });
  });

  it.each([
    ['a gateway 503', new ServiceUnavailableError(health)],
    ['a time-out', new UpstreamTimeoutError(health, 5_000)],
    ['a 404', new NotFoundError(health)],
    ['an unreadable answer', new InvalidPayloadError(health, 'not JSON', 200)],
  ])("%s of the robot's own call may be the entity's", (_what, error) => {
    expect(toObservationError(error)).not.toHaveProperty('class');
  });
});

describe('detectors and access failures', () => {
  const access = (script: Script<unknown, unknown, unknown>, seconds: number) =>
    script.step(
      {
        ok: false,
        at: new Date(Date.parse('2025-03-01T12:00:00.000Z') + seconds * 1000).toISOString(),
        error: toObservationError(new AuthenticationError('client', 401)),
      },
      seconds,
    );

  it('robot health: a hundred failed token requests in a row are not a robot down', () => {
    const script = new Script(robotHealthDetector, { failureThreshold: 3, successThreshold: 2 }) as Script<
      unknown,
      unknown,
      unknown
    >;
    script.ok(0, { status: 'ok' });
    const before = script.state;
    for (let s = 10; s <= 1_000; s += 10) access(script, s);
    expect(script.all).toEqual([]);
    expect(script.state).toEqual(before);
    // Real failures still count: three in a row, and the robot is down.
    script.fail(1_010, 'timeout');
    script.fail(1_020, 'timeout');
    expect(script.fail(1_030, 'timeout').map((event) => event.type)).toEqual(['robot.health.down']);
  });

  it('vehicle power: access failures are neither unreachable nor unsupported', () => {
    const script = new Script(vehiclePowerDetector, {
      failureThreshold: 3,
      successThreshold: 1,
      stuckAfterMs: 300_000,
      staleAfterMs: 900_000,
      unreachableCodes: ['timeout', 'service_unavailable'],
      unreachableStatuses: [502, 503, 504, 401],
    }) as Script<unknown, unknown, unknown>;
    script.ok(0, {
      state: 'on',
      pendingCommand: null,
      updatedAt: new Date(Date.parse('2025-03-01T12:00:00.000Z')).toISOString(),
    });
    const before = script.state;
    for (let s = 10; s <= 100; s += 10) access(script, s);
    expect(script.all).toEqual([]);
    expect(script.state).toEqual(before);
  });
});
