import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { startSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/types.js';
import { runCli, writeSimulatorConfig } from '../support/cli.js';

/** `fleetwatch robot lease …` (Teleop Control) against the simulator. */

const CLIENT = 'fleetwatch-demo';
let simulator: Simulator;
let config: string;
let device: string;
const env = () => ({ FLEETWATCH_CONFIG: config, FLEET_SECRET: 'demo-secret' });
const robot = () => simulator.control.getRobot(device);
const sent = (operation: string) =>
  Object.values(
    simulator.control.stats().requests[`robot:POST /v2/teleop-control/${operation}`] ?? {},
  ).reduce((sum, count) => sum + count, 0);

beforeAll(async () => {
  simulator = await startSimulator({ vehicles: 0, robots: 2, seed: 3, behaviours: false });
  config = writeSimulatorConfig(simulator.url);
});

afterAll(async () => {
  await simulator.close();
});

beforeEach(() => {
  simulator.control.reset();
  device = simulator.control.state().robots[0]?.deviceId ?? '';
  simulator.control.updateRobot(device, { lease: null });
});

describe('fleetwatch robot lease', () => {
  it('acquire, renew, transfer and release change the lease the robot keeps', async () => {
    const acquire = await runCli(['robot', 'lease', 'acquire', device], env());
    expect(acquire.code, acquire.stderr).toBe(ExitCode.ok);
    expect(acquire.stdout).toMatch(new RegExp(`^${device}: acquired the lease\\n`));
    expect(acquire.stdout).toMatch(/holder_id:\s+fleetwatch-demo/);
    expect(robot()?.lease.holderId).toBe(CLIENT);

    const renew = await runCli(['robot', 'lease', 'renew', device, '--json'], env());
    expect(renew.code).toBe(ExitCode.ok);
    expect(JSON.parse(renew.stdout)).toMatchObject({ status: 'success', data: { holder_id: CLIENT } });

    const status = await runCli(['robot', 'lease', 'status', device], env());
    expect(status.stdout).toContain(`${device}: lease held by ${CLIENT} until`);

    const release = await runCli(['robot', 'lease', 'release', device], env());
    expect(release.code, release.stderr).toBe(ExitCode.ok);
    expect(release.stdout).toBe(`${device}: released the lease\n`);
    expect(robot()?.lease.holderId).toBeNull();

    await runCli(['robot', 'lease', 'acquire', device], env());
    const transfer = await runCli(['robot', 'lease', 'transfer', device, '--to', 'bob'], env());
    expect(transfer.code, transfer.stderr).toBe(ExitCode.ok);
    expect(transfer.stdout).toMatch(new RegExp(`^${device}: transferred the lease to bob\\n`));
    expect(robot()?.lease.holderId).toBe('bob');
  });

  it('`robot lease <deviceId>` still shows the status, with --json before or after', async () => {
    simulator.control.updateRobot(device, {
      lease: { holderId: 'alice', expiresAt: '2099-01-01T00:00:00.000Z' },
    });
    const text = await runCli(['robot', 'lease', device], env());
    expect(text.code).toBe(ExitCode.ok);
    expect(text.stdout).toContain(`${device}: lease held by alice until 2099-01-01T00:00:00.000Z`);
    for (const args of [
      ['robot', 'lease', device, '--json'],
      ['robot', 'lease', 'status', device, '--json'],
      ['robot', 'lease', '--json', 'status', device],
    ]) {
      const json = await runCli(args, env());
      expect(json.code, args.join(' ')).toBe(ExitCode.ok);
      expect(JSON.parse(json.stdout)).toEqual({
        deviceId: device,
        holderId: 'alice',
        expiresAt: '2099-01-01T00:00:00.000Z',
      });
    }
    const bare = await runCli(['robot', 'lease'], env());
    expect(bare.code).toBe(ExitCode.usage);
    expect(bare.stderr).toMatch(
      /^fleetwatch: robot lease: name a device .*acquire, renew, release, transfer, status\n$/,
    );
  });

  it('a lease held by another user is a 403: exit 6, the robot words shown, nothing changed', async () => {
    simulator.control.updateRobot(device, { lease: { holderId: 'alice' } });
    for (const verb of ['acquire', 'renew']) {
      const run = await runCli(['robot', 'lease', verb, device], env());
      expect(run.code, verb).toBe(ExitCode.forbidden);
      expect(run.stderr).toBe(
        `fleetwatch: access to robot "${device}" is forbidden for this client (robot.teleop_${verb}: 403): lease held by another user: alice\n`,
      );
    }
    const transfer = await runCli(['robot', 'lease', 'transfer', device, '--to', 'bob'], env());
    expect(transfer.code).toBe(ExitCode.forbidden);
    const release = await runCli(['robot', 'lease', 'release', device], env());
    expect(release.code).toBe(ExitCode.forbidden);
    expect(robot()?.lease.holderId).toBe('alice');
  });

  it('release --force asks: refused without --yes when stdin is not a terminal, nothing sent', async () => {
    simulator.control.updateRobot(device, { lease: { holderId: 'alice' } });
    simulator.control.resetStats();
    const refused = await runCli(['robot', 'lease', 'release', device, '--force'], env());
    expect(refused.code).toBe(ExitCode.usage);
    expect(refused.stderr).toBe(
      `fleetwatch: robot lease release (robot "${device}") not sent: it asks for confirmation and stdin is not a terminal; add --yes to send it\n`,
    );
    expect(sent('release')).toBe(0);
    expect(robot()?.lease.holderId).toBe('alice');

    const forced = await runCli(['robot', 'lease', 'release', device, '--force', '--yes'], env());
    expect(forced.code, forced.stderr).toBe(ExitCode.ok);
    expect(robot()?.lease.holderId).toBeNull();
    expect(sent('release')).toBe(1);
  });

  it('on a terminal it asks on stderr: y sends, anything else does not', async () => {
    simulator.control.updateRobot(device, { lease: { holderId: 'alice' } });
    const no = await runCli(['robot', 'lease', 'release', device, '--force'], env(), undefined, undefined, {
      tty: true,
      text: 'n\n',
    });
    expect(no.code).toBe(ExitCode.usage);
    expect(no.stderr).toContain(
      `fleetwatch: robot lease release (robot "${device}"): --force takes the lease from whoever holds it. Send it? [y/N] `,
    );
    expect(no.stderr).toContain('not sent: not confirmed');
    expect(robot()?.lease.holderId).toBe('alice');

    const yes = await runCli(['robot', 'lease', 'release', device, '--force'], env(), undefined, undefined, {
      tty: true,
      text: 'y\n',
    });
    expect(yes.code, yes.stderr).toBe(ExitCode.ok);
    expect(robot()?.lease.holderId).toBeNull();
  });

  it('transfer checks its body against the spec before sending: an empty --to is exit 2, nothing sent', async () => {
    await runCli(['robot', 'lease', 'acquire', device], env());
    simulator.control.resetStats();
    const empty = await runCli(['robot', 'lease', 'transfer', device, '--to', ''], env());
    expect(empty.code).toBe(ExitCode.usage);
    expect(empty.stderr).toBe('fleetwatch: the request body: to: must not be empty (nothing sent)\n');
    const missing = await runCli(['robot', 'lease', 'transfer', device], env());
    expect(missing.code).toBe(ExitCode.usage);
    expect(missing.stderr).toContain("required option '--to <user>' not specified");
    expect(sent('transfer')).toBe(0);
    expect(robot()?.lease.holderId).toBe(CLIENT);
  });

  it('an unknown device is exit 4', async () => {
    const run = await runCli(['robot', 'lease', 'acquire', 'no-such-robot'], env());
    expect(run.code).toBe(ExitCode.notFound);
    expect(run.stderr).toMatch(/^fleetwatch: robot "no-such-robot" not found \(robot\.teleop_acquire: 404\)/);
  });
});
