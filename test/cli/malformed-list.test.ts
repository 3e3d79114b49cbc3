import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { startSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/types.js';
import { runCli, writeSimulatorConfig } from '../support/cli.js';

/** `fleetwatch vehicles` / `robots` when one element of the list does not match the spec. */

let simulator: Simulator;
let config: string;
const env = () => ({ FLEETWATCH_CONFIG: config, FLEET_SECRET: 'demo-secret' });

beforeAll(async () => {
  simulator = await startSimulator({ vehicles: 50, robots: 3, seed: 13, behaviours: false });
  config = writeSimulatorConfig(simulator.url);
});

afterAll(async () => {
  await simulator.close();
});

describe('one malformed vehicle among 50', () => {
  it('lists the 49 others, warns about the 50th on stderr and exits 0', async () => {
    simulator.control.updateVehicle('veh-0050', { listFields: { ipAddress: null } });
    const run = await runCli(['vehicles'], env());
    expect(run.code).toBe(ExitCode.ok);
    const rows = run.stdout.split('\n').filter((line) => /^veh-\d{4}\s/.test(line));
    expect(rows).toHaveLength(49);
    expect(run.stdout).not.toContain('veh-0050');
    expect(run.stdout).toContain('49 vehicles');
    expect(run.stderr.trim().split('\n')).toEqual([
      'fleetwatch: warning: vehicle "veh-0050" left out: its list element does not match the spec: ipAddress: Invalid input: expected string, received null',
    ]);

    const json = await runCli(['vehicles', '--json'], env());
    expect(json.code).toBe(ExitCode.ok);
    expect(JSON.parse(json.stdout)).toHaveLength(49);
    expect(json.stderr).toContain('veh-0050');
  });

  it('names the position of an element that names no vehicle', async () => {
    simulator.control.updateVehicle('veh-0050', { listFields: { id: 50 } });
    const run = await runCli(['vehicles'], env());
    expect(run.code).toBe(ExitCode.ok);
    expect(run.stderr).toMatch(/^fleetwatch: warning: element 49 of the vehicle list left out: .*id/m);
    simulator.control.updateVehicle('veh-0050', { listFields: null });
    const clean = await runCli(['vehicles'], env());
    expect(clean.stderr).toBe('');
    expect(clean.stdout).toContain('50 vehicles');
  });
});

describe('a robot entry that names no device', () => {
  it('lists the other robots and warns', async () => {
    const [first] = simulator.control.state().robots;
    simulator.control.updateRobot(first!.deviceId, { listFields: { device_id: [] } });
    const run = await runCli(['robots', '--json'], env());
    expect(run.code).toBe(ExitCode.ok);
    expect(JSON.parse(run.stdout)).toHaveLength(2);
    expect(run.stderr).toMatch(/^fleetwatch: warning: element 0 of the robot list left out: .*device_id/m);
  });
});
