import { PassThrough, Writable } from 'node:stream';
import type { Command } from 'commander';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CliContext } from '../../src/cli/context.js';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { buildProgram, main } from '../../src/cli/main.js';
import { startSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/types.js';
import { runCli, writeSimulatorConfig } from '../support/cli.js';

const SECRET = 'demo-secret';
let simulator: Simulator;
let config: string;
const env = () => ({ FLEETWATCH_CONFIG: config, FLEET_SECRET: SECRET });

beforeAll(async () => {
  simulator = await startSimulator({ vehicles: 12, robots: 3, seed: 7, powerDelayMs: 150 });
  config = writeSimulatorConfig(simulator.url);
});

afterAll(async () => {
  await simulator.close();
});

beforeEach(() => {
  simulator.control.reset();
});

describe('fleetwatch vehicles', () => {
  it('prints every vehicle with its VPN status and address', async () => {
    const run = await runCli(['vehicles'], env());
    expect(run.code).toBe(ExitCode.ok);
    const vehicles = simulator.control.state().vehicles;
    for (const vehicle of vehicles) {
      expect(run.stdout).toMatch(
        new RegExp(
          `^${vehicle.id}\\s+${vehicle.vpnConnected ? 'connected' : 'disconnected'}\\s+${vehicle.ipAddress?.replaceAll('.', '\\.') ?? '-'}$`,
          'm',
        ),
      );
    }
    expect(run.stdout).toContain(`${vehicles.length} vehicles`);
  });

  it('prints JSON with --json, omitting absent addresses', async () => {
    simulator.control.updateVehicle('veh-0001', { ipAddress: null, vpnConnected: false });
    const run = await runCli(['vehicles', '--json'], env());
    const list = JSON.parse(run.stdout) as Array<Record<string, unknown>>;
    expect(list).toHaveLength(12);
    expect(list[0]).toEqual({ id: 'veh-0001', vpnConnected: false });
  });

  it('takes the config from --config as well', async () => {
    const run = await runCli(['--config', config, 'vehicles', '--json'], { FLEET_SECRET: SECRET });
    expect(run.code).toBe(ExitCode.ok);
  });
});

describe('fleetwatch power', () => {
  function powerCapableVehicle(state: 'on' | 'off'): string {
    const vehicle = simulator.control.state().vehicles.find((candidate) => candidate.powerCapable);
    if (!vehicle) throw new Error('the seeded fleet has no power-capable vehicle');
    simulator.control.updateVehicle(vehicle.id, { state, pendingCommand: null, stuck: false });
    return vehicle.id;
  }

  it('status shows state, pending command and report time', async () => {
    const id = powerCapableVehicle('off');
    // Stuck: the command stays pending however long the CLI takes to start on a busy machine.
    simulator.control.updateVehicle(id, { pendingCommand: { state: 'on' }, updatedAt: null, stuck: true });
    const run = await runCli(['power', 'status', id], env());
    expect(run.code).toBe(ExitCode.ok);
    expect(run.stdout.trim()).toBe(`${id}: off; power on pending; never reported`);
  });

  it('on --wait returns once the vehicle reports on, with progress on stderr', async () => {
    const id = powerCapableVehicle('off');
    const run = await runCli(['power', 'on', id, '--wait', '--interval', '250ms'], env());
    expect(run.stderr).toContain(`waiting for ${id} to report on`);
    expect(run.stdout).toMatch(new RegExp(`^${id} reports power on \\(took [\\d.]+s\\)$`, 'm'));
    expect(run.code).toBe(ExitCode.ok);
    expect(simulator.control.getVehicle(id)).toMatchObject({ state: 'on', pendingCommand: null });
  });

  it('off without --wait only reports acceptance', async () => {
    const id = powerCapableVehicle('on');
    const run = await runCli(['power', 'off', id, '--json'], env());
    expect(run.code).toBe(ExitCode.ok);
    expect(JSON.parse(run.stdout)).toEqual({ vehicleId: id, requested: 'off', outcome: 'accepted' });
    expect(simulator.control.getVehicle(id)?.pendingCommand).toEqual({ state: 'off' });
  });

  it('--wait times out with its own exit status when the command sticks', async () => {
    const id = powerCapableVehicle('off');
    simulator.control.updateVehicle(id, { stuck: true });
    const run = await runCli(['power', 'on', id, '--wait', '--timeout', '1s', '--interval', '250ms'], env());
    expect(run.code).toBe(ExitCode.timedOut);
    expect(run.stderr).toMatch(
      new RegExp(`${id} did not report power on within [\\d.]+s; last report: off, on pending`),
    );
  });

  it('--wait fails when an opposite command replaces ours', async () => {
    const id = powerCapableVehicle('off');
    simulator.control.updateVehicle(id, { stuck: true });
    const waiting = runCli(['power', 'on', id, '--wait', '--timeout', '10s', '--interval', '250ms'], env());
    await expect.poll(() => simulator.control.getVehicle(id)?.pendingCommand).toEqual({ state: 'on' });
    simulator.control.updateVehicle(id, { pendingCommand: { state: 'off' } });
    const run = await waiting;
    expect(run.code).toBe(ExitCode.failed);
    expect(run.stderr).toContain('a power off command replaced the power on request');
  });

  it('an unknown vehicle is "not found", exit 4', async () => {
    const run = await runCli(['power', 'on', 'veh-9999'], env());
    expect(run.code).toBe(ExitCode.notFound);
    expect(run.stderr).toBe(
      'fleetwatch: vehicle "veh-9999" not found, not available to this client, or not power-capable (request_vehicle_power_on: 404)\n',
    );
  });

  it('--timeout or --interval without --wait is a usage error, and nothing is sent', async () => {
    const id = powerCapableVehicle('off');
    for (const option of [
      ['--timeout', '10s'],
      ['--interval', '1s'],
    ]) {
      const run = await runCli(['power', 'on', id, ...option], env());
      expect(run.code).toBe(ExitCode.usage);
      expect(run.stderr).toBe(
        `fleetwatch: option '${option[0]}' only applies with --wait; add --wait, or leave it out (add --help for usage)\n`,
      );
      expect(simulator.control.getVehicle(id)?.pendingCommand).toBeNull();
    }
  });

  it('a wrong secret is a one-line authentication error, exit 3, secret not shown', async () => {
    const run = await runCli(['vehicles'], { FLEETWATCH_CONFIG: config, FLEET_SECRET: 'wrong-secret-value' });
    expect(run.code).toBe(ExitCode.auth);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^fleetwatch: authentication failed/);
    expect(run.stderr).not.toContain('wrong-secret-value');
  });
});

describe('fleetwatch robots', () => {
  it('lists robots and reads health, feedback and lease', async () => {
    const robots = await runCli(['robots', '--json'], env());
    const list = JSON.parse(robots.stdout) as Array<{ deviceId: string }>;
    expect(list.map((robot) => robot.deviceId)).toEqual(
      simulator.control.state().robots.map((r) => r.deviceId),
    );
    const id = list[0]?.deviceId ?? '';

    simulator.control.updateRobot(id, {
      lease: { holderId: 'alice', expiresAt: '2099-01-01T00:00:00.000Z' },
    });
    const lease = await runCli(['robot', 'lease', id], env());
    expect(lease.stdout).toContain(`${id}: lease held by alice until 2099-01-01T00:00:00.000Z`);

    const feedback = await runCli(['robot', 'feedback', id, '--json'], env());
    expect(JSON.parse(feedback.stdout)).toHaveProperty('cortex_status');

    const health = await runCli(['robot', 'health', id], env());
    expect(health.code).toBe(ExitCode.ok);
    expect(health.stdout).toContain(`${id}: healthy`);
  });

  it('an unhealthy robot fails its health check', async () => {
    const id = simulator.control.state().robots[0]?.deviceId ?? '';
    simulator.control.updateRobot(id, { healthy: false, unhealthyMode: 'error' });
    const health = await runCli(['robot', 'health', id], env());
    expect(health.code).toBe(ExitCode.failed);
    expect(health.stderr).toMatch(/^fleetwatch: /);
  });
});

describe('usage and configuration errors', () => {
  it('an unknown option exits 2 with a hint', async () => {
    const run = await runCli(['vehicles', '--colour'], env());
    expect(run.code).toBe(ExitCode.usage);
    expect(run.stderr).toContain("unknown option '--colour'");
  });

  it('--log-level takes every level log.level takes, fatal included', async () => {
    const run = await runCli(['--log-level', 'fatal', 'config', 'check', '--quiet'], env());
    expect(run.code).toBe(ExitCode.ok);
    expect(run.stderr).toBe('');
  });

  it('a malformed --timeout names what it expects', async () => {
    const run = await runCli(['power', 'on', 'veh-0001', '--wait', '--timeout', 'soon'], env());
    expect(run.code).toBe(ExitCode.usage);
    expect(run.stderr).toMatch(
      /^fleetwatch: option '--timeout <duration>' argument 'soon' is invalid\. expected a duration between 100ms and 1h, like 30s; got .*\(add --help for usage\)\n$/,
    );
  });

  it('--help works on every command and exits 0', async () => {
    const context = new CliContext(
      {
        stdin: new PassThrough(),
        stdout: new PassThrough(),
        stderr: new PassThrough(),
        env: {},
        signal: new AbortController().signal,
      },
      () => ({}),
    );
    const paths: string[][] = [[]];
    const walk = (command: Command, path: string[]) => {
      for (const sub of command.commands) {
        paths.push([...path, sub.name()]);
        walk(sub, [...path, sub.name()]);
      }
    };
    walk(buildProgram(context), []);
    expect(paths.length).toBeGreaterThan(25);
    for (const args of paths) {
      const run = await runCli([...args, '--help'], {});
      expect(run.code, args.join(' ')).toBe(ExitCode.ok);
      expect(run.stdout).toContain(`Usage: fleetwatch ${args.join(' ')}`.trimEnd());
      expect(run.stderr).toBe('');
    }
  });

  it('durations in --help read as people write them (5m), never as milliseconds', async () => {
    const help = async (args: string[]) =>
      (await runCli([...args, '--help'], {})).stdout.replace(/\s+/g, ' ');
    const power = await help(['power', 'on']);
    expect(power).toContain('--timeout <duration> how long --wait waits (100ms to 1h) (default: 5m)');
    expect(power).toContain('--interval <duration> how often --wait polls (250ms to 1m) (default: 2s)');
    const simulate = await help(['simulate']);
    expect(simulate).toContain('lifetime of issued tokens (1s to 1d) (default: 1h)');
    expect(await help(['silence', 'add'])).toContain(
      '--duration <duration> how long from now, e.g. 30m or 2h (1s to 365d)',
    );
    for (const text of [power, simulate]) {
      const defaults = [...text.matchAll(/<duration> [^<]*?\(default: ([^)]*)\)/g)].map((match) => match[1]);
      expect(defaults.length).toBeGreaterThan(1);
      for (const value of defaults) expect(value).toMatch(/^\d+(ms|s|m|h|d)$/);
    }
  });

  it('number options show their bounds in --help', async () => {
    const help = async (args: string[]) =>
      (await runCli([...args, '--help'], {})).stdout.replace(/\s+/g, ' ');
    const simulate = await help(['simulate']);
    expect(simulate).toContain('--vehicles <n> number of vehicles (0 to 100000) (default: 20)');
    expect(simulate).toContain(
      '--seed <n> seed of the generated fleet; the same seed gives the same fleet (0 to 4294967295) (default: 1)',
    );
    expect(await help(['demo'])).toContain(
      '--seed <n> seed of the simulated fleet (0 to 4294967295) (default: 7)',
    );
  });

  it('every number and duration option has bounds: outside them, one line and exit 2', async () => {
    const cases: Array<[string[], string]> = [
      [['simulate', '--vehicles', '1e9'], 'expected a whole number between 0 and 100000; got 1e9'],
      [['simulate', '--robots', ''], 'expected a whole number between 0 and 100000; got ""'],
      [
        ['simulate', '--seed', '4294967296'],
        'expected a whole number between 0 and 4294967295; got 4294967296',
      ],
      [['simulate', '--port', '-1'], 'expected a whole number between 0 and 65535; got -1'],
      [
        ['simulate', '--behaviour-interval', '1ms'],
        'expected a duration between 100ms and 1h, like 30s; got 1ms',
      ],
      [['simulate', '--token-ttl', '30d'], 'expected a duration between 1s and 1d, like 30s; got 30d'],
      [
        ['simulate', '--control-from', 'loopback,172.30.0.0/40'],
        'expected a prefix length from 0 to 32 after the "/" in "172.30.0.0/40".',
      ],
      [['simulate', '--control-from', 'bridge'], 'a single address or loopback; got "bridge".'],
      [['demo', '--vehicles', '1'], 'expected a whole number between 2 and 1000; got 1'],
      [['demo', '--robots', '0'], '--robots: the script takes a robot down; give 1 or more, or --no-script'],
      [
        ['power', 'on', 'veh-0001', '--wait', '--interval', '1ms'],
        'expected a duration between 250ms and 1m, like 30s; got 1ms',
      ],
      [
        ['power', 'off', 'veh-0001', '--wait', '--timeout', '2h'],
        'expected a duration between 100ms and 1h, like 30s; got 2h',
      ],
    ];
    for (const [args, words] of cases) {
      const run = await runCli(args, env());
      expect(run.code, args.join(' ')).toBe(ExitCode.usage);
      expect(run.stderr).toMatch(/^fleetwatch: [^\n]*\n$/);
      expect(run.stderr).toContain(words);
    }
    // Nothing reached the upstream.
    expect(simulator.control.getVehicle('veh-0001')?.pendingCommand).toBeNull();
  });

  it('simulate says which option keeps it from listening: one line, exit 2', async () => {
    const taken = Number(new URL(simulator.url).port);
    const inUse = await runCli(['simulate', '--port', String(taken)], {});
    expect([inUse.code, inUse.stderr]).toEqual([
      ExitCode.usage,
      `fleetwatch: --port ${taken} is in use; pick another, or --port 0 for a free one\n`,
    ]);
    const nowhere = await runCli(['simulate', '--host', 'nosuch.invalid', '--port', '0'], {});
    expect(nowhere.code).toBe(ExitCode.usage);
    expect(nowhere.stderr).toMatch(
      /^fleetwatch: --host nosuch\.invalid: no such host \(E[A-Z_]+\); give an address of this machine, such as 127\.0\.0\.1 or 0\.0\.0\.0\n$/,
    );
  });

  it('a stdout closed by its reader ends the command quietly, exit 0', async () => {
    // `fleetwatch vehicles | head -1`: the reader takes the table and goes before the footer.
    let writes = 0;
    const stdout = new Writable({
      write(_chunk, _encoding, done) {
        writes += 1;
        done(writes > 1 ? Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }) : undefined);
      },
    });
    const stderr = new PassThrough();
    const errors: string[] = [];
    stderr.on('data', (chunk) => errors.push(String(chunk)));
    const code = await main(['node', 'fleetwatch', 'vehicles'], {
      stdout,
      stderr,
      env: env(),
      signal: new AbortController().signal,
    });
    expect(code).toBe(ExitCode.ok);
    expect(writes).toBe(2);
    expect(errors).toEqual([]);
  });

  it('config check prints the effective config with secrets masked', async () => {
    const run = await runCli(['config', 'check'], env());
    expect(run.code).toBe(ExitCode.ok);
    expect(run.stdout).toContain('client_secret: "[REDACTED]"');
    expect(run.stdout).not.toContain(SECRET);
    expect(run.stdout).toContain('request_timeout: 2000');
  });

  it('a bad config exits 2 with one line per problem and no stack trace', async () => {
    const bad = writeSimulatorConfig('ftp://nowhere', 'colour: blue\n');
    const run = await runCli(['config', 'check'], { FLEETWATCH_CONFIG: bad });
    expect(run.code).toBe(ExitCode.usage);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toEqual([
      `fleetwatch: ${bad}: upstream.client_secret: environment variable FLEET_SECRET is not set`,
      `fleetwatch: ${bad}: upstream.base_url: must be an http(s) URL`,
      `fleetwatch: ${bad}: upstream.robot_base_url: must be an http(s) URL`,
      `fleetwatch: ${bad}: upstream.auth_url: must be an http(s) URL`,
      `fleetwatch: ${bad}: (top level): unknown field "colour" (expected one of installation, upstream, redis, log, pollers, worker, events, metrics, detectors, receivers, notifications, http, console)`,
    ]);
  });

  it('a missing secret variable is a config error naming it', async () => {
    const run = await runCli(['vehicles'], { FLEETWATCH_CONFIG: config });
    expect(run.code).toBe(ExitCode.usage);
    expect(run.stderr).toContain('upstream.client_secret: environment variable FLEET_SECRET is not set');
  });
});
