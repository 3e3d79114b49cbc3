import { describe, expect, it } from 'vitest';
import { CATALOGUE, FLEET_EVENT_TYPES } from '../../src/events/catalogue.js';
import { describeCount, describeDuration, describeEvent } from '../../src/events/describe.js';

describe('describeEvent', () => {
  it('says who, what, and the change', () => {
    expect(
      describeEvent({
        type: 'vehicle.power.changed',
        subject: 'vehicle/veh-0003',
        data: { severity: 'info', previous: 'off', current: 'on' },
      }),
    ).toBe('veh-0003 reports a new power state: off → on');
  });

  it('adds the incident duration on resolving events', () => {
    expect(
      describeEvent({
        type: 'vehicle.vpn.connected',
        subject: 'vehicle/veh-0003',
        data: { severity: 'info', previous: 'disconnected', current: 'connected', durationMs: 185_000 },
      }),
    ).toBe('veh-0003 is back on the VPN: disconnected → connected after 3m 05s');
  });

  it('reads an acknowledgement as the incident it is about, with who and why', () => {
    expect(
      describeEvent({
        type: 'incident.acknowledged',
        subject: 'incident/health-rb-1-0a0b0c0d',
        data: {
          severity: 'info',
          incident: 'health-rb-1-0a0b0c0d',
          entity: 'robot/rb-1',
          key: 'health',
          firing: 'robot.health.down',
          by: 'dana',
          comment: 'on it',
          until: '2026-03-01T14:00:00.000Z',
        },
      }),
    ).toBe('rb-1 fails its health check: acknowledged by dana: on it');
  });

  it('renders status pairs by their text and hides config hashes', () => {
    expect(
      describeEvent({
        type: 'robot.navigation.changed',
        subject: 'robot/rb-1',
        data: {
          severity: 'warning',
          previous: { status: 2, text: 'executing' },
          current: { status: 6, text: 'aborted' },
        },
      }),
    ).toBe('rb-1 changed navigation status: executing → aborted');
    expect(
      describeEvent({
        type: 'robot.config.changed',
        subject: 'robot/rb-1',
        data: { severity: 'info', part: 'loadedRoute', previous: 'ab12', current: 'cd34' },
      }),
    ).toBe('rb-1 changed its loaded configuration (loadedRoute)');
  });

  it('says plainly that fleetwatch cannot authenticate when the token issuer fails, whatever it answers', () => {
    const degraded = (name: string, reasons: string[], window: Record<string, number>) =>
      describeEvent({
        type: 'monitor.upstream.degraded',
        subject: `upstream/${name}`,
        data: { severity: 'critical', previous: 'healthy', current: 'degraded', reasons, window },
      });
    const counts = { requests: 14, authFailures: 0, serverErrors: 0, timeouts: 0 };
    expect(degraded('token', ['auth_failures'], { ...counts, authFailures: 14 })).toBe(
      'fleetwatch cannot authenticate: the token issuer refuses its client credentials, 14 of 14 requests refused (400/401/403); check upstream.client_id and upstream.client_secret',
    );
    expect(degraded('token', ['error_ratio'], { ...counts, serverErrors: 12, timeouts: 2 })).toBe(
      'fleetwatch cannot authenticate: the token issuer is failing, 14 of 14 requests failed (5xx or no answer)',
    );
    expect(degraded('fleet', ['auth_failures'], { ...counts, authFailures: 9 })).toBe(
      'fleetwatch is refused by the fleet API: 9 of 14 requests refused (401/403)',
    );
    expect(degraded('robots', ['error_ratio'], { ...counts, requests: 600, serverErrors: 600 })).toBe(
      'the robot gateway is failing: 600 of 600 requests failed (5xx or no answer)',
    );
    expect(
      degraded('robots', ['error_ratio'], { ...counts, requests: 40, serverErrors: 2, unreadable: 30 }),
    ).toBe(
      'the robot gateway is failing: 32 of 40 requests failed (5xx, no answer, or an answer not as the spec says)',
    );
    expect(
      describeEvent({
        type: 'monitor.upstream.recovered',
        subject: 'upstream/token',
        data: { severity: 'info', previous: 'degraded', current: 'healthy', durationMs: 62_000 },
      }),
    ).toBe('the token issuer has recovered: degraded → healthy after 1m 02s');
  });

  it('names a disabled receiver as a receiver, with its answer and the way back', () => {
    expect(
      describeEvent({
        type: 'monitor.receiver.disabled',
        subject: 'receiver/hook',
        data: { severity: 'critical', receiver: 'hook', kind: 'webhook', reason: 'HTTP 410: gone' },
      }),
    ).toBe(
      'receiver hook was disabled: it answered that it is gone for good (HTTP 410: gone); its notifications wait as dead letters: run fleetwatch receiver enable hook, then fleetwatch dlq replay --all --receiver hook',
    );
  });

  it('says how far behind its interval a poller is, and when it keeps it again', () => {
    const data = { previous: 'on_pace', current: 'behind', shards: 250, coalesced: 40, waiting: 31 };
    expect(
      describeEvent({
        type: 'monitor.polling.behind',
        subject: 'poller/robot_feedback',
        data: { severity: 'warning', ...data, intervalMs: 60_000 },
      }),
    ).toBe(
      'poller robot_feedback is behind its interval: 31 of 250 shards had waited a whole interval (1m 00s) for a worker; every entity is still polled, less often',
    );
    expect(
      describeEvent({
        type: 'monitor.polling.caught_up',
        subject: 'poller/robot_feedback',
        data: { severity: 'info', previous: 'behind', current: 'on_pace', durationMs: 185_000 },
      }),
    ).toBe('poller robot_feedback keeps its interval again after 3m 05s');
  });

  it('says how much of a list is not as the spec says, and what fleetwatch does not see for it', () => {
    const examples = [{ id: 'veh-0050', message: 'vehicle "veh-0050": ipAddress: expected a string' }];
    expect(
      describeEvent({
        type: 'monitor.list.unreadable',
        subject: 'upstream/fleet',
        data: { severity: 'warning', rejected: 1, elements: 50, unnamed: 0, examples },
      }),
    ).toBe(
      'the fleet API lists elements not as the spec says: 1 of 50 elements; the vehicle it names is not watched for VPN state and address; e.g. vehicle "veh-0050": ipAddress: expected a string',
    );
    expect(
      describeEvent({
        type: 'monitor.list.unreadable',
        subject: 'upstream/robots',
        data: { severity: 'warning', rejected: 3, elements: 40, unnamed: 2, examples },
      }),
    ).toBe(
      'the robot gateway lists elements not as the spec says: 3 of 40 elements; 2 name no robot: a new robot behind them is not discovered; e.g. vehicle "veh-0050": ipAddress: expected a string',
    );
    expect(
      describeEvent({
        type: 'monitor.list.readable',
        subject: 'upstream/fleet',
        data: { severity: 'info', previous: 'unreadable', current: 'readable', durationMs: 65_000 },
      }),
    ).toBe('the fleet API lists every element as the spec says again after 1m 05s');
  });

  it('has words for every catalogued type', () => {
    for (const type of FLEET_EVENT_TYPES) {
      expect(describeEvent({ type, subject: 'vehicle/x', data: { severity: 'info' } })).not.toContain(type);
    }
  });
});

describe('describeCount', () => {
  const nouns = { one: 'vehicle', many: 'vehicles' };

  it('uses the one form for a count of 1 and the many form otherwise, for every catalogued type', () => {
    for (const entry of CATALOGUE) {
      expect(describeCount(entry.type, 1, nouns)).toBe(`1 vehicle ${entry.says.one}`);
      expect(describeCount(entry.type, 2, nouns)).toBe(`2 vehicles ${entry.says.many}`);
      expect(describeCount(entry.type, 0, nouns)).toBe(`0 vehicles ${entry.says.many}`);
    }
  });

  it('reads "1 vehicle reports its power state again", not "report their"', () => {
    expect(describeCount('vehicle.power.report.fresh', 1, nouns)).toBe(
      '1 vehicle reports its power state again',
    );
  });

  it('names an unknown type as it is', () => {
    expect(describeCount('vehicle.teleported', 1, nouns)).toBe('1 vehicle: vehicle.teleported');
  });
});

describe('describeDuration', () => {
  it.each([
    [12_000, '12s'],
    [185_000, '3m 05s'],
    [3_720_000, '1h 02m'],
    [3 * 86_400_000 + 3_600_000, '3d 1h'],
  ])('%d ms is %s', (ms, text) => {
    expect(describeDuration(ms)).toBe(text);
  });
});
