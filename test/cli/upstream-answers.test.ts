import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/cli/exit-codes.js';
import { PREVIEW_CHARS } from '../../src/upstream/schemas/robot.js';
import { runCli, writeSimulatorConfig } from '../support/cli.js';
import { FakeUpstream } from '../upstream/fake-upstream.js';

/**
 * Answers the simulator never gives, from a loopback stand-in: a power request answered 200 in
 * place of 202, a 403, a robot list of a shape the spec does not describe.
 */

let fake: FakeUpstream;
let config: string;
const env = () => ({ FLEETWATCH_CONFIG: config, FLEET_SECRET: 'any-secret' });
const POWER_ON = '/v1/vehicles/veh-0001/power/on';

beforeAll(async () => {
  fake = await FakeUpstream.start();
  config = writeSimulatorConfig(fake.url);
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.requests.length = 0;
});

describe('fleetwatch power on, answered 200 instead of 202', () => {
  it('is accepted with a warning on stderr, exit 0, sent once', async () => {
    fake.sequence('POST', POWER_ON, [[200, { status: 'success' }]]);
    const run = await runCli(['power', 'on', 'veh-0001'], env());
    expect(run.code).toBe(ExitCode.ok);
    expect(run.stdout).toMatch(/^power on accepted for veh-0001/);
    expect(run.stderr).toBe(
      'fleetwatch: warning: the fleet service answered power on for vehicle "veh-0001" with 200, not 202 as the spec says; taken as accepted (do not send it again; follow it with the power status)\n',
    );
    expect(fake.count('POST', POWER_ON)).toBe(1);

    const json = await runCli(['power', 'on', 'veh-0001', '--json'], env());
    expect(JSON.parse(json.stdout)).toEqual({
      vehicleId: 'veh-0001',
      requested: 'on',
      outcome: 'accepted',
      warning: expect.stringContaining('with 200, not 202'),
    });
  });

  it('a 403 is exit 6, "forbidden", not a credentials problem', async () => {
    fake.sequence('POST', POWER_ON, [[403, { status: 'error', message: 'forbidden' }]]);
    const run = await runCli(['power', 'on', 'veh-0001'], env());
    expect(run.code).toBe(ExitCode.forbidden);
    expect(run.stderr).toBe(
      'fleetwatch: access to vehicle "veh-0001" is forbidden for this client (request_vehicle_power_on: 403)\n',
    );
    expect(fake.count('POST', POWER_ON)).toBe(1);
  });
});

describe('fleetwatch robots, when the list has a shape the spec does not describe', () => {
  it('says what was expected and quotes the first characters of what came', async () => {
    const items = Array.from({ length: 20 }, (_, index) => ({ serial: `rb-${index}` }));
    fake.sequence('GET', '/api/robots', [[200, { items }]]);
    const run = await runCli(['robots'], env());
    expect(run.code).toBe(ExitCode.failed);
    const line = run.stderr.trim();
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain(
      'invalid response payload (robot.list_robots: 200): expected a list of robots: [...], {"data": [...]}, {"data": {"robots": [...]}} or {"robots": [...]}; got {"items":[{"serial":"rb-0"},',
    );
    const quoted = line.slice(line.indexOf('; got ') + '; got '.length);
    expect(quoted.endsWith('…')).toBe(true);
    expect(quoted.length).toBe(PREVIEW_CHARS + 1);
  });
});
