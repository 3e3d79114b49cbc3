import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { startSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/types.js';
import { runCli, writeSimulatorConfig } from '../support/cli.js';

/** `fleetwatch robot sites|routes|zone-sets …` (Site, Route and Zone Set Management) against the simulator. */

let simulator: Simulator;
let config: string;
let device: string;
let dir: string;
const env = () => ({ FLEETWATCH_CONFIG: config, FLEET_SECRET: 'demo-secret' });
const robot = () => simulator.control.getRobot(device);
const body = (value: unknown) => {
  const path = join(dir, `body-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(value));
  return path;
};

beforeAll(async () => {
  simulator = await startSimulator({ vehicles: 0, robots: 2, seed: 11, behaviours: false });
  config = writeSimulatorConfig(simulator.url);
  dir = mkdtempSync(join(tmpdir(), 'fleetwatch-documents-'));
});

afterAll(async () => {
  await simulator.close();
});

beforeEach(() => {
  simulator.control.reset();
  device = simulator.control.state().robots[0]?.deviceId ?? '';
  simulator.control.updateRobot(device, { activeSite: null, loadedRoute: null, loadedZoneSet: null });
});

describe.each([
  {
    group: 'sites',
    noun: 'site',
    key: 'sites',
    select: 'activate',
    selected: 'active',
    field: 'activeSite',
    none: 'no active site',
  },
  {
    group: 'routes',
    noun: 'route',
    key: 'routes',
    select: 'load',
    selected: 'loaded',
    field: 'loadedRoute',
    none: 'no route loaded',
  },
  {
    group: 'zone-sets',
    noun: 'zone set',
    key: 'zoneSets',
    select: 'load',
    selected: 'loaded',
    field: 'loadedZoneSet',
    none: 'no zone set loaded',
  },
] as const)('fleetwatch robot $group', ({ group, noun, key, select, selected, field, none: nothing }) => {
  const name = `cli-${group}`;

  it('create, get, list, update, select and delete change what the robot keeps', async () => {
    const create = await runCli(
      ['robot', group, 'create', device, name, '--file', body({ note: 'first' })],
      env(),
    );
    expect(create.code, create.stderr).toBe(ExitCode.ok);
    expect(create.stdout).toBe(`${device}: created ${noun} "${name}"\n`);
    expect(robot()?.[key]).toContain(name);

    const get = await runCli(['robot', group, 'get', device, name], env());
    expect(get.code).toBe(ExitCode.ok);
    expect(get.stdout).toMatch(new RegExp(`^name:\\s+${name}$`, 'm'));
    expect(get.stdout).toMatch(/^note:\s+first$/m);

    const update = await runCli(
      ['robot', group, 'update', device, name, '--file', body({ note: 'second' })],
      env(),
    );
    expect(update.code, update.stderr).toBe(ExitCode.ok);
    const json = await runCli(['robot', group, 'get', device, name, '--json'], env());
    expect(JSON.parse(json.stdout)).toMatchObject({ data: { name, note: 'second' } });

    const list = await runCli(['robot', group, 'list', device], env());
    expect(list.stdout).toMatch(/^NAME\s+CREATED_AT\s+UPDATED_AT$/m);
    expect(list.stdout).toMatch(new RegExp(`^${name}\\s`, 'm'));

    const none = await runCli(['robot', group, selected, device], env());
    expect(none.stdout).toBe(`${device}: ${nothing}\n`);
    const chosen = await runCli(['robot', group, select, device, name], env());
    expect(chosen.code, chosen.stderr).toBe(ExitCode.ok);
    expect(robot()?.[field]).toBe(name);
    const shown = await runCli(['robot', group, selected, device, '--json'], env());
    expect(JSON.parse(shown.stdout)).toMatchObject({ data: { name } });

    // In use: the robot refuses (409), exit 1, nothing deleted.
    const busy = await runCli(['robot', group, 'delete', device, name, '--yes'], env());
    expect(busy.code).toBe(ExitCode.failed);
    expect(busy.stderr).toContain(
      `fleetwatch: ${noun} "${name}" on robot "${device}": refused in its current state (robot.delete_`,
    );
    expect(robot()?.[key]).toContain(name);

    simulator.control.updateRobot(device, { [field]: null });
    const refused = await runCli(['robot', group, 'delete', device, name], env());
    expect(refused.code).toBe(ExitCode.usage);
    expect(refused.stderr).toContain('add --yes to send it');
    expect(robot()?.[key]).toContain(name);
    const deleted = await runCli(['robot', group, 'delete', device, name, '--yes'], env());
    expect(deleted.code, deleted.stderr).toBe(ExitCode.ok);
    expect(deleted.stdout).toBe(`${device}: deleted ${noun} "${name}"\n`);
    expect(robot()?.[key]).not.toContain(name);
  });

  it('an unknown name is exit 4, naming it and the robot', async () => {
    const run = await runCli(['robot', group, 'get', device, 'nowhere'], env());
    expect(run.code).toBe(ExitCode.notFound);
    expect(run.stderr).toMatch(
      new RegExp(`^fleetwatch: ${noun} "nowhere" on robot "${device}" not found \\(robot\\.get_`),
    );
  });
});

describe('fleetwatch robot zone-sets clear and enable', () => {
  it('enable switches zones of the loaded set; an unknown zone is the robot 422, exit 2', async () => {
    await runCli(
      ['robot', 'zone-sets', 'create', device, 'yard', '--file', body({ zones: { dock: true, gate: true } })],
      env(),
    );
    await runCli(['robot', 'zone-sets', 'load', device, 'yard'], env());
    const enable = await runCli(
      ['robot', 'zone-sets', 'enable', device, '--file', body({ zones: { dock: false } })],
      env(),
    );
    expect(enable.code, enable.stderr).toBe(ExitCode.ok);
    expect(enable.stdout).toMatch(
      new RegExp(`^${device}: changed the enabled zones of the loaded zone set\\n`),
    );
    const loaded = await runCli(['robot', 'zone-sets', 'loaded', device, '--json'], env());
    expect(JSON.parse(loaded.stdout)).toMatchObject({
      data: {
        zones: [
          { name: 'dock', enabled: false },
          { name: 'gate', enabled: true },
        ],
      },
    });

    const unknown = await runCli(
      ['robot', 'zone-sets', 'enable', device, '--file', body({ zones: { moat: true } })],
      env(),
    );
    expect(unknown.code).toBe(ExitCode.usage);
    expect(unknown.stderr).toContain(
      '(robot.set_loaded_zone_set_enabled: 422): body.zones.moat: unknown zone',
    );
  });

  it('clear asks, then unloads the zone set', async () => {
    simulator.control.updateRobot(device, { loadedZoneSet: 'yard' });
    const refused = await runCli(['robot', 'zone-sets', 'clear', device], env());
    expect(refused.code).toBe(ExitCode.usage);
    expect(robot()?.loadedZoneSet).toBe('yard');
    const clear = await runCli(['robot', 'zone-sets', 'clear', device, '--yes'], env());
    expect(clear.code, clear.stderr).toBe(ExitCode.ok);
    expect(clear.stdout).toBe(`${device}: cleared the loaded zone set\n`);
    expect(robot()?.loadedZoneSet).toBeNull();
  });
});
