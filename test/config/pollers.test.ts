import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { configProblems } from '../support/config-problems.js';

/** The `pollers:` section, made of the sections the poller definitions carry. */

const BASE = `
upstream:
  base_url: https://fleet.example.com
  robot_base_url: https://robots.example.com
  auth_url: https://auth.example.com
  client_id: fleetwatch
  client_secret: s3cr3t-value
`;

const problemsOf = (text: string): string[] =>
  configProblems(() => parseConfig(BASE + text, 'test.yaml', {}));

describe('the pollers config section', () => {
  it('has every poller with its defaults, in tick order', () => {
    const pollers = parseConfig(BASE, 'test.yaml', {}).pollers;
    expect(Object.keys(pollers)).toEqual([
      'vehicles',
      'power',
      'robots',
      'robot_health',
      'robot_feedback',
      'robot_lease',
      'robot_config',
      'robot_command_queue',
      'upstream',
    ]);
    expect(pollers).toEqual({
      vehicles: { enabled: true, interval: 30_000 },
      power: {
        enabled: true,
        interval: 30_000,
        batch_size: 200,
        unsupported_interval: 3_600_000,
        unsupported_recheck: 60_000,
      },
      robots: { enabled: true, interval: 60_000 },
      robot_health: { enabled: true, interval: 30_000, batch_size: 200 },
      robot_feedback: { enabled: true, interval: 30_000, batch_size: 200 },
      robot_lease: { enabled: true, interval: 60_000, batch_size: 200 },
      robot_config: { enabled: true, interval: 300_000, batch_size: 200 },
      robot_command_queue: { enabled: true, interval: 30_000, batch_size: 200 },
      upstream: { enabled: true, interval: 15_000, degraded_sample: 20 },
    });
  });

  it('names the poller and field of every problem', () => {
    expect(
      problemsOf(
        'pollers:\n  power: { interval: 10ms, batch_size: 0, unsupported_interval: soon, unsupported_recheck: 10ms }\n',
      ),
    ).toEqual([
      'pollers.power.interval: expected a duration between 1s and 1d, like 30s; got 10ms',
      'pollers.power.batch_size: expected a whole number between 1 and 10000; got 0',
      'pollers.power.unsupported_interval: expected a duration between 1s and 7d, like 30s; got soon',
      'pollers.power.unsupported_recheck: expected a duration between 1s and 1d, like 30s; got 10ms',
    ]);
    expect(problemsOf('pollers:\n  vehicles: { batch_size: 5 }\n')).toEqual([
      'pollers.vehicles: unknown field "batch_size" (expected one of enabled, interval)',
    ]);
    expect(problemsOf('pollers:\n  robot_lease: { enabled: 1, interval: 500 }\n  nope: {}\n')).toEqual([
      'pollers.robot_lease.enabled: expected true or false; got a number',
      'pollers.robot_lease.interval: expected a duration between 1s and 1d, like 30s; got 500 (a bare number is milliseconds; did you mean 500s?)',
      'pollers: unknown field "nope" (expected one of vehicles, power, robots, robot_health, robot_feedback, robot_lease, robot_config, robot_command_queue, upstream)',
    ]);
    expect(
      problemsOf('pollers:\n  robot_config: { batch_size: 10001 }\n  upstream: { interval: 1s, extra: 2 }\n'),
    ).toEqual([
      'pollers.robot_config.batch_size: expected a whole number between 1 and 10000; got 10001',
      'pollers.upstream: unknown field "extra" (expected one of enabled, interval, degraded_sample)',
    ]);
    expect(problemsOf('pollers: 3\n')).toEqual([
      'pollers: expected a mapping (key: value pairs); got a number',
    ]);
  });
});
