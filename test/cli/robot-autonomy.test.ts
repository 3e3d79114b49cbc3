import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { OPERATION_BODY_MAX_BYTES } from '../../src/operations/operation-body.js';
import { startSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/types.js';
import { runCli, writeSimulatorConfig } from '../support/cli.js';

/**
 * `fleetwatch robot motion|waypoints|targets|commands|costmap|nav-options|uuid` (Health Check,
 * Vehicle Autonomy) against the simulator, and how a body from `--file` is read and refused.
 */

let simulator: Simulator;
let config: string;
let device: string;
let dir: string;
const env = () => ({ FLEETWATCH_CONFIG: config, FLEET_SECRET: 'demo-secret' });
const robot = () => simulator.control.getRobot(device);
const requests = (route: string) =>
  Object.values(simulator.control.stats().requests[`robot:${route}`] ?? {}).reduce((sum, n) => sum + n, 0);
const file = (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const GPS = JSON.stringify({ waypoints: [{ latitude: 48.1, longitude: 11.5 }] });

beforeAll(async () => {
  simulator = await startSimulator({ vehicles: 0, robots: 2, seed: 5, behaviours: false });
  config = writeSimulatorConfig(simulator.url);
  dir = mkdtempSync(join(tmpdir(), 'fleetwatch-bodies-'));
});

afterAll(async () => {
  await simulator.close();
});

beforeEach(() => {
  simulator.control.reset();
  device = simulator.control.state().robots[0]?.deviceId ?? '';
});

describe('fleetwatch robot waypoints and commands', () => {
  it('gps and relative waypoints from --file are queued; the queue and history read them back', async () => {
    const before = robot()?.commandQueue ?? 0;
    const gps = await runCli(['robot', 'waypoints', 'gps', device, '--file', file('gps.json', GPS)], env());
    expect(gps.code, gps.stderr).toBe(ExitCode.ok);
    expect(gps.stdout).toMatch(new RegExp(`^${device}: sent GPS waypoints\\n`));
    expect(gps.stdout).toMatch(/command_id:\s+\S+-cmd-\d+/);

    const relative = await runCli(
      ['robot', 'waypoints', 'relative', device, '--file', '-', '--json'],
      env(),
      undefined,
      undefined,
      {
        text: JSON.stringify({ waypoints: [{ x: 1, y: 2 }] }),
      },
    );
    expect(relative.code, relative.stderr).toBe(ExitCode.ok);
    expect(JSON.parse(relative.stdout)).toMatchObject({ status: 'success', data: { received: true } });
    expect(robot()?.commandQueue).toBe(before + 2);

    const queue = await runCli(['robot', 'commands', 'queue', device], env());
    expect(queue.code).toBe(ExitCode.ok);
    expect(queue.stdout.split('\n')[0]).toMatch(/^ID\s+TYPE\s+STATUS\s+QUEUED_AT\s+PAYLOAD$/);
    expect(queue.stdout).toMatch(/gps_waypoints\s+queued/);
    expect(queue.stdout).toMatch(/relative_waypoints\s+queued/);
    const json = await runCli(['robot', 'commands', 'queue', device, '--json'], env());
    expect((JSON.parse(json.stdout) as { data: unknown[] }).data).toHaveLength(before + 2);
  });

  it('the robot refusing a body (422) is exit 2 with its details', async () => {
    const bad = file('far.json', JSON.stringify({ waypoints: [{ latitude: 91, longitude: 0 }] }));
    const run = await runCli(['robot', 'waypoints', 'gps', device, '--file', bad], env());
    expect(run.code).toBe(ExitCode.usage);
    expect(run.stderr).toMatch(
      new RegExp(
        `^fleetwatch: the request for robot "${device}" was rejected as invalid \\(robot\\.send_gps_waypoints: 422\\): body\\.waypoints\\.0\\.latitude: .+\\n$`,
      ),
    );
  });
});

describe('fleetwatch robot motion', () => {
  it('stop asks (refused without --yes off a terminal); with --yes it cancels the queue', async () => {
    await runCli(['robot', 'waypoints', 'gps', device, '--file', file('gps.json', GPS)], env());
    expect(robot()?.commandQueue).toBeGreaterThan(0);
    const refused = await runCli(['robot', 'motion', 'stop', device], env());
    expect(refused.code).toBe(ExitCode.usage);
    expect(refused.stderr).toContain('add --yes to send it');
    expect(requests('POST /v2/motion-command')).toBe(0);
    expect(robot()?.commandQueue).toBeGreaterThan(0);

    const stop = await runCli(['robot', 'motion', 'stop', device, '--yes', '--preempt'], env());
    expect(stop.code, stop.stderr).toBe(ExitCode.ok);
    expect(stop.stdout).toBe(`${device}: sent STOP\n`);
    expect(robot()?.commandQueue).toBe(0);

    const history = await runCli(['robot', 'commands', 'history', device, '--json'], env());
    const finished = (JSON.parse(history.stdout) as { data: Array<{ type: string; payload: unknown }> }).data;
    expect(finished.at(-1)).toMatchObject({
      type: 'motion_command',
      payload: { motion_command: 'STOP', mode: 'PREEMPT' },
    });
  });

  it('pause and resume are sent without asking', async () => {
    const pause = await runCli(['robot', 'motion', 'pause', device], env());
    expect(pause.code, pause.stderr).toBe(ExitCode.ok);
    expect(robot()?.paused).toBe(true);
    // --yes is accepted where nothing asks, so a script may pass it to every write.
    const resume = await runCli(['robot', 'motion', 'resume', device, '--yes'], env());
    expect(resume.code, resume.stderr).toBe(ExitCode.ok);
    expect(resume.stdout).toBe(`${device}: sent RESUME\n`);
    expect(robot()?.paused).toBe(false);
  });

  it('list shows the motion commands the robot knows', async () => {
    const run = await runCli(['robot', 'motion', 'list', device], env());
    expect(run.code).toBe(ExitCode.ok);
    expect(run.stdout).toMatch(/^MOTION_COMMAND\s+ALTERNATIVE\nSTOP\s+0$/m);
  });
});

describe('fleetwatch robot targets, costmap, nav-options, uuid', () => {
  it('set and here add reference targets; list reads them', async () => {
    const set = await runCli(
      [
        'robot',
        'targets',
        'set',
        device,
        '--file',
        file('dock.json', JSON.stringify({ name: 'dock', latitude: 1, longitude: 2 })),
      ],
      env(),
    );
    expect(set.code, set.stderr).toBe(ExitCode.ok);
    expect(set.stdout).toMatch(new RegExp(`^${device}: set a reference target\\n`));
    const here = await runCli(['robot', 'targets', 'here', device], env());
    expect(here.code, here.stderr).toBe(ExitCode.ok);
    const list = await runCli(['robot', 'targets', 'list', device, '--json'], env());
    const targets = (JSON.parse(list.stdout) as { data: Array<{ name: string; source?: string }> }).data;
    expect(targets.map((target) => target.name)).toEqual(['dock', 'target-2']);
    expect(targets[1]?.source).toBe('current_location');
  });

  it('the reads print the robot data for people, or JSON', async () => {
    for (const command of [['costmap'], ['nav-options'], ['uuid'], ['targets', 'list']]) {
      const text = await runCli(['robot', ...command, device], env());
      expect(text.code, command.join(' ')).toBe(ExitCode.ok);
      expect(text.stdout.trim().length, command.join(' ')).toBeGreaterThan(0);
      const json = await runCli(['robot', ...command, device, '--json'], env());
      expect(JSON.parse(json.stdout), command.join(' ')).toHaveProperty('status', 'success');
    }
    const uuid = await runCli(['robot', 'uuid', device], env());
    expect(uuid.stdout).toBe(`uuid: ${robot()?.uuid}\n`);
    const none = await runCli(['robot', 'targets', 'list', device], env());
    expect(none.stdout).toBe(`${device}: no reference targets\n`);
  });
});

describe('a body from --file', () => {
  it('that cannot be read, is not JSON, is empty or too large is exit 2 and nothing is sent', async () => {
    const big = file('big.json', `{"waypoints": "${'x'.repeat(OPERATION_BODY_MAX_BYTES)}"}`);
    const cases: Array<[string, string]> = [
      [join(dir, 'missing.json'), 'cannot be read: no such file'],
      [file('broken.json', '{"waypoints": ['), 'is not valid JSON ('],
      [file('empty.json', '  \n'), 'is empty; expected a JSON document'],
      [big, 'more than 1MiB, the largest body taken (nothing sent)'],
      [dir, 'is a directory, not a file'],
    ];
    for (const [path, words] of cases) {
      const run = await runCli(['robot', 'waypoints', 'gps', device, '--file', path], env());
      expect(run.code, path).toBe(ExitCode.usage);
      expect(run.stderr, path).toMatch(new RegExp(`^fleetwatch: --file ${path.replaceAll('.', '\\.')}: `));
      expect(run.stderr.split('\n')).toHaveLength(2);
      expect(run.stderr, path).toContain(words);
    }
    const stdin = await runCli(
      ['robot', 'waypoints', 'gps', device, '--file', '-'],
      env(),
      undefined,
      undefined,
      {
        text: 'x'.repeat(OPERATION_BODY_MAX_BYTES + 1),
      },
    );
    expect(stdin.code).toBe(ExitCode.usage);
    expect(stdin.stderr).toBe(
      'fleetwatch: --file -: is larger than 1MiB, the largest body taken (nothing sent)\n',
    );
    expect(requests('POST /v2/gps-waypoints')).toBe(0);
  });

  it('is required where the spec requires a body', async () => {
    const run = await runCli(['robot', 'waypoints', 'gps', device], env());
    expect(run.code).toBe(ExitCode.usage);
    expect(run.stderr).toContain("required option '--file <path>' not specified");
  });
});
