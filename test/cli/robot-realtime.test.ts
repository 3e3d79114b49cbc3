import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { startSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/types.js';
import { runCli, writeSimulatorConfig } from '../support/cli.js';

/** `fleetwatch robot realtime …` (Realtime) against the simulator. */

let simulator: Simulator;
let config: string;
let device: string;
const env = () => ({ FLEETWATCH_CONFIG: config, FLEET_SECRET: 'demo-secret' });
const robot = () => simulator.control.getRobot(device);
const run = (args: string[], text?: string) =>
  runCli(['robot', 'realtime', ...args], env(), undefined, undefined, text === undefined ? {} : { text });

beforeAll(async () => {
  simulator = await startSimulator({ vehicles: 0, robots: 1, seed: 17, behaviours: false });
  config = writeSimulatorConfig(simulator.url);
});

afterAll(async () => {
  await simulator.close();
});

beforeEach(() => {
  simulator.control.reset();
  device = simulator.control.state().robots[0]?.deviceId ?? '';
});

describe('fleetwatch robot realtime', () => {
  it('config and token read and create what the robot offers', async () => {
    const config = await run(['config', device]);
    expect(config.code).toBe(ExitCode.ok);
    expect(config.stdout).toMatch(/^url:\s+wss:\/\/realtime\.invalid$/m);
    const token = await run(['token', device, '--file', '-'], JSON.stringify({ identity: 'operator-7' }));
    expect(token.code, token.stderr).toBe(ExitCode.ok);
    expect(token.stdout).toMatch(new RegExp(`^${device}: created a real-time access token\\n`));
    expect(token.stdout).toMatch(/^identity:\s+operator-7$/m);
    const json = await run(['token', device, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ data: { token: expect.any(String) } });
  });

  it('room create, get and delete, and tracks added and removed, change the room the robot keeps', async () => {
    const none = await run(['room', 'get', device]);
    expect(none.stdout).toBe(`${device}: no room\n`);
    const create = await run(['room', 'create', device, '--file', '-'], JSON.stringify({ name: 'ops' }));
    expect(create.code, create.stderr).toBe(ExitCode.ok);
    expect(robot()?.room?.name).toBe('ops');

    const again = await run(['room', 'create', device]);
    expect(again.code).toBe(ExitCode.failed);
    expect(again.stderr).toContain(
      'refused in its current state (robot.create_realtime_room: 409): room already exists',
    );

    const add = await run(
      ['track', 'add', device, '--file', '-'],
      JSON.stringify({ name: 'front', kind: 'video' }),
    );
    expect(add.code, add.stderr).toBe(ExitCode.ok);
    expect(robot()?.room?.tracks).toHaveLength(1);
    const room = await run(['room', 'get', device, '--json']);
    expect(JSON.parse(room.stdout)).toMatchObject({ data: { name: 'ops', tracks: [{ name: 'front' }] } });

    const refused = await run(['track', 'remove', device, '--file', '-'], JSON.stringify({ name: 'front' }));
    expect(refused.code).toBe(ExitCode.usage);
    expect(refused.stderr).toContain(
      'not sent: it asks for confirmation and stdin holds the body; add --yes',
    );
    const remove = await run(
      ['track', 'remove', device, '--yes', '--file', '-'],
      JSON.stringify({ name: 'front' }),
    );
    expect(remove.code, remove.stderr).toBe(ExitCode.ok);
    expect(remove.stdout).toBe(`${device}: removed the track\n`);
    expect(robot()?.room?.tracks).toEqual([]);

    const leave = await run(['room', 'delete', device, '--yes']);
    expect(leave.code, leave.stderr).toBe(ExitCode.ok);
    expect(robot()?.room).toBeNull();
  });
});

describe('a missing room or track', () => {
  it('is named as the room or track on the robot, not as a missing robot (exit 4)', async () => {
    const room = await run(['room', 'delete', device, '--yes']);
    expect(room.code).toBe(ExitCode.notFound);
    expect(room.stderr).toBe(
      `fleetwatch: realtime room on robot "${device}" not found (robot.delete_realtime_room: 404)\n`,
    );
    await run(['room', 'create', device]);
    const track = await run(
      ['track', 'remove', device, '--yes', '--file', '-'],
      JSON.stringify({ track_id: 'TR_x' }),
    );
    expect(track.code).toBe(ExitCode.notFound);
    expect(track.stderr).toBe(
      `fleetwatch: track on robot "${device}" not found (robot.delete_realtime_track: 404): track not found: TR_x\n`,
    );
  });
});

describe('access and retries', () => {
  it('a client the gateway forbids gets exit 6 on a read and on a write', async () => {
    const forbidden = await startSimulator({
      vehicles: 0,
      robots: 1,
      seed: 17,
      behaviours: false,
      clients: [{ id: 'fleetwatch-demo', secret: 'demo-secret', forbidden: true }],
    });
    try {
      const forbiddenEnv = {
        FLEETWATCH_CONFIG: writeSimulatorConfig(forbidden.url),
        FLEET_SECRET: 'demo-secret',
      };
      const id = forbidden.control.state().robots[0]?.deviceId ?? '';
      for (const args of [
        ['robot', 'realtime', 'config', id],
        ['robot', 'realtime', 'room', 'create', id],
      ]) {
        const result = await runCli(args, forbiddenEnv);
        expect(result.code, args.join(' ')).toBe(ExitCode.forbidden);
        expect(result.stderr).toMatch(
          new RegExp(`^fleetwatch: access to (realtime room on )?robot "${id}" is forbidden for this client`),
        );
      }
    } finally {
      await forbidden.close();
    }
  });

  it('a write answered 503 is sent once and exits 1; a read is retried', async () => {
    simulator.control.setFaults({ errorRates: { 503: 1 }, scope: 'robots' });
    simulator.control.resetStats();
    const write = await run(['room', 'create', device]);
    expect(write.code).toBe(ExitCode.failed);
    expect(write.stderr).toContain('upstream service temporarily unavailable');
    const read = await run(['config', device]);
    expect(read.code).toBe(ExitCode.failed);
    const requests = simulator.control.stats().requests;
    expect(requests['robot:POST /v2/realtime/room']).toEqual({ 503: 1 });
    expect(requests['robot:GET /v2/realtime/config']?.['503']).toBeGreaterThan(1);
  });
});
