import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PollerName } from '../../src/pollers/config.js';
import type { ObservationErrorInfo } from '../../src/pollers/outcome.js';
import { createHarness, type Harness } from './harness.js';

/**
 * A storm of 5xx, time-outs and malformed bodies on every per-entity and list call: a failed poll
 * is not a state change, so nothing but reachability events may come out — and exactly those the
 * thresholds call for, given the sequence of observations each entity actually had.
 */

const POLLERS: PollerName[] = [
  'vehicles',
  'robots',
  'power',
  'robot_health',
  'robot_feedback',
  'robot_lease',
  'robot_config',
  'robot_command_queue',
];
const ROUNDS = 8;
const UNREACHABLE = new Set(['timeout', 'network', 'bad_gateway', 'service_unavailable', 'gateway_timeout']);

let h: Harness;
let round: ObservationErrorInfo[] = [];

/** Independent model of the consecutive-threshold rule: which transitions a sequence calls for. */
function expectedTransitions(
  sequence: Array<'bad' | 'good' | 'ignore'>,
  failureThreshold: number,
  successThreshold: number,
): Array<'fired' | 'resolved'> {
  const out: Array<'fired' | 'resolved'> = [];
  let alerting = false;
  let streak = 0;
  for (const observation of sequence) {
    if (observation === 'ignore') continue;
    if (!alerting) {
      streak = observation === 'bad' ? streak + 1 : 0;
      if (streak >= failureThreshold) {
        alerting = true;
        streak = 0;
        out.push('fired');
      }
    } else {
      streak = observation === 'good' ? streak + 1 : 0;
      if (streak >= successThreshold) {
        alerting = false;
        streak = 0;
        out.push('resolved');
      }
    }
  }
  return out;
}

beforeAll(async () => {
  h = await createHarness({
    empty: true,
    hooks: { observationError: (info) => round.push(info) },
    config: {
      upstream: { http: { retries: 1, request_timeout: 250 } },
      detectors: {
        reachability: { failure_threshold: 2, success_threshold: 1 },
        health: { failure_threshold: 2, success_threshold: 1 },
      },
    },
  });
  const fresh = new Date().toISOString();
  for (let i = 1; i <= 6; i += 1) {
    h.sim.control.addVehicle({
      id: `S-${i}`,
      vpnConnected: true,
      ...(i % 3 === 0 ? {} : { ipAddress: `10.1.0.${i}` }),
      state: i % 2 === 0 ? 'on' : 'off',
      updatedAt: fresh,
    });
  }
  for (let i = 1; i <= 4; i += 1) {
    h.sim.control.addRobot({
      deviceId: `SR-${i}`,
      loadedRoute: `route-${i}`,
      lease: { holderId: `op-${i}`, expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
    });
  }
});

afterAll(async () => {
  await h?.close();
});

describe('a storm of upstream failures', () => {
  it('produces no state-change events, only the reachability events the thresholds call for', async () => {
    // Baseline, then the storm.
    await h.tick(...POLLERS);
    expect(await h.newEvents()).toEqual([]);
    h.sim.control.setFaults({
      errorRates: { 500: 0.2, 502: 0.15, 503: 0.15, 504: 0.1 },
      timeoutRate: 0.1,
      malformedRate: 0.15,
      scope: ['v1', 'robots'],
    });

    const vehicles = h.sim.control.state().vehicles.map((vehicle) => vehicle.id);
    const robots = h.sim.control.state().robots.map((robot) => robot.deviceId);
    const power = new Map(vehicles.map((id) => [id, [] as Array<'bad' | 'good' | 'ignore'>]));
    const health = new Map(robots.map((id) => [id, [] as Array<'bad' | 'good' | 'ignore'>]));
    const events: string[] = [];
    for (let i = 0; i < ROUNDS; i += 1) {
      round = [];
      // The pollers of a round side by side, as a daemon's jobs run: a round lasts as long as its
      // slowest time-out instead of the sum of them.
      await Promise.all(POLLERS.map((poller) => h.tick(poller)));
      events.push(...(await h.newEvents()));
      const failed = (poller: string) =>
        new Map(round.filter((info) => info.poller === poller).map((info) => [info.ref.id, info.error]));
      const powerErrors = failed('power');
      for (const id of vehicles) {
        const error = powerErrors.get(id);
        const status = error?.status ?? 0;
        power
          .get(id)!
          .push(!error ? 'good' : UNREACHABLE.has(error.code) || status >= 502 ? 'bad' : 'ignore');
      }
      const healthErrors = failed('robot_health');
      for (const id of robots) health.get(id)!.push(healthErrors.has(id) ? 'bad' : 'good');
    }
    h.sim.control.clearFaults();
    // The storm did hit every kind of failure.
    const codes = [...h.counters.observationErrors.keys()].map((key) => key.split(':')[1]);
    expect(codes).toEqual(expect.arrayContaining(['internal_server_error', 'invalid_payload', 'timeout']));

    const expected: string[] = [];
    for (const [id, sequence] of power) {
      for (const transition of expectedTransitions(sequence, 2, 1)) {
        expected.push(
          `${transition === 'fired' ? 'vehicle.unreachable' : 'vehicle.reachable'} vehicle/${id}`,
        );
      }
    }
    for (const [id, sequence] of health) {
      for (const transition of expectedTransitions(sequence, 2, 1)) {
        expected.push(`${transition === 'fired' ? 'robot.health.down' : 'robot.health.up'} robot/${id}`);
      }
    }
    expect(events.sort()).toEqual(expected.sort());
    expect(events.every((line) => /^(vehicle\.(un)?reachable|robot\.health\.(down|up)) /.test(line))).toBe(
      true,
    );

    // After the storm, a clean round resolves what is open and changes nothing else.
    round = [];
    await h.tick(...POLLERS);
    const after = await h.newEvents();
    expect(after.every((line) => /^(vehicle\.reachable|robot\.health\.up) /.test(line))).toBe(true);
  });
});
