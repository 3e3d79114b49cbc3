import { PassThrough } from 'node:stream';
import type { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { CliContext } from '../../src/cli/context.js';
import { buildProgram } from '../../src/cli/main.js';
import { asksOf, isWrite } from '../../src/cli/robot-command.js';
import { type CommandWords, ROBOT_COMMAND_GROUPS, ROBOT_COMMAND_WORDS } from '../../src/cli/robot-words.js';
import { checkOperationBody } from '../../src/operations/operation-body.js';
import { ROBOT_OPERATIONS } from '../../src/upstream/operations/robot.js';
import { runCli } from '../support/cli.js';

/** The table of CLI words against the operation table, and the commands the builder makes of them. */

const program = buildProgram(
  new CliContext(
    {
      stdin: new PassThrough(),
      stdout: new PassThrough(),
      stderr: new PassThrough(),
      env: {},
      signal: new AbortController().signal,
    },
    () => ({}),
  ),
);

function commandAt(path: readonly string[]): Command | undefined {
  let command: Command | undefined = program;
  for (const word of path) command = command?.commands.find((sub) => sub.name() === word);
  return command;
}

const longFlags = (command: Command) => command.options.map((option: Option) => option.long);
const mandatory = (command: Command) =>
  command.options.filter((option: Option) => option.mandatory).map((option: Option) => option.flags);

const ALL = ROBOT_OPERATIONS.flatMap((operation) =>
  ROBOT_COMMAND_WORDS[operation.name].map((words: CommandWords) => ({ operation, words })),
);

describe('the CLI words of the robot operations', () => {
  it('give every row of the operation table at least one command, and nothing else', () => {
    expect(Object.keys(ROBOT_COMMAND_WORDS).sort()).toEqual(ROBOT_OPERATIONS.map((row) => row.name).sort());
    for (const operation of ROBOT_OPERATIONS) {
      expect(ROBOT_COMMAND_WORDS[operation.name].length, operation.name).toBeGreaterThan(0);
    }
  });

  it('put every command in the command tree, each path once', () => {
    const paths = ALL.map(({ words }) => words.path.join(' '));
    expect(new Set(paths).size).toBe(paths.length);
    for (const { operation, words } of ALL) {
      expect(commandAt(words.path), `${operation.name}: fleetwatch ${words.path.join(' ')}`).toBeDefined();
    }
  });

  it('give every group a help line', () => {
    const groups = new Set(
      ALL.flatMap(({ words }) => words.path.slice(1, -1).map((_, i) => words.path.slice(0, i + 2).join(' '))),
    );
    for (const group of groups) {
      expect(ROBOT_COMMAND_GROUPS[group], group).toBeTruthy();
      expect(commandAt(group.split(' '))?.description(), group).toBe(ROBOT_COMMAND_GROUPS[group]);
    }
  });

  it('say what each write did, and what an empty read means, never the other way round', () => {
    for (const { operation, words } of ALL) {
      if (words.handwritten) continue;
      if (isWrite(operation)) {
        expect(words.did, operation.name).toBeTruthy();
        expect(words.none, operation.name).toBeUndefined();
        expect(operation.retry, `${operation.name} is a write: never retried`).toBe('never');
      } else {
        expect(words.did, operation.name).toBeUndefined();
        expect(words.showsAnswer, operation.name).toBeUndefined();
      }
    }
  });

  it('ask before every destructive row, and never before the others', () => {
    for (const operation of ROBOT_OPERATIONS) {
      const asks = ROBOT_COMMAND_WORDS[operation.name].map((words) => asksOf(operation, words));
      const anyAsks = asks.some((a) => a !== 'never');
      expect(anyAsks, operation.name).toBe(operation.destructive);
    }
    const asking = ALL.filter(({ operation, words }) => asksOf(operation, words) !== 'never').map(
      ({ words }) => words.path.join(' '),
    );
    expect(asking.sort()).toEqual(
      [
        'robot lease release',
        'robot motion stop',
        'robot realtime room delete',
        'robot realtime track remove',
        'robot routes delete',
        'robot sites delete',
        'robot zone-sets clear',
        'robot zone-sets delete',
      ].sort(),
    );
  });

  it('fix bodies that the row schema accepts, with and without their flags', () => {
    for (const { operation, words } of ALL) {
      if (!words.body) continue;
      for (const on of [true, false]) {
        const body = {
          ...words.body,
          ...Object.fromEntries((words.flags ?? []).map((flag) => [flag.field, on ? flag.on : flag.off])),
        };
        expect(checkOperationBody(operation, body), `${words.path.join(' ')} ${on}`).toEqual({
          ok: true,
          value: body,
        });
      }
    }
    const stop = ROBOT_COMMAND_WORDS.sendMotionCommand.map((words) => words.body?.motion_command);
    expect(stop).toEqual([0, 1, 2]);
  });
});

describe('the commands built from the rows', () => {
  it('take --yes on every write (a no-op where nothing asks), and on no read', () => {
    for (const { operation, words } of ALL) {
      const path = words.path.join(' ');
      const yes = commandAt(words.path)?.options.some((option) => option.long === '--yes');
      expect(yes, path).toBe(isWrite(operation));
    }
  });

  it('take the device and path parameters as arguments, the others as options', () => {
    const site = commandAt(['robot', 'sites', 'create']);
    expect(site?.registeredArguments.map((argument) => argument.name())).toEqual(['deviceId', 'name']);
    expect(mandatory(site as Command)).toEqual(['--file <path>']);
    expect(longFlags(commandAt(['robot', 'routes', 'load']) as Command)).toEqual([
      '--file',
      '--yes',
      '--json',
    ]);
    expect(mandatory(commandAt(['robot', 'lease', 'transfer']) as Command)).toEqual(['--to <user>']);
    expect(longFlags(commandAt(['robot', 'lease', 'release']) as Command)).toEqual([
      '--force',
      '--yes',
      '--json',
    ]);
    expect(longFlags(commandAt(['robot', 'motion', 'pause']) as Command)).toEqual([
      '--preempt',
      '--yes',
      '--json',
    ]);
    expect(longFlags(commandAt(['robot', 'zone-sets', 'clear']) as Command)).toEqual(['--yes', '--json']);
    for (const { words } of ALL) {
      expect(longFlags(commandAt(words.path) as Command), words.path.join(' ')).toContain('--json');
    }
  });

  it("show the spec's summary, the request, and whether it asks in --help", async () => {
    for (const { operation, words } of ALL) {
      const help = await runCli([...words.path, '--help']);
      const summary = operation.summary.replace(/^[A-Z](?=[a-z])/, (first) => first.toLowerCase());
      expect(help.stdout, words.path.join(' ')).toContain(summary);
      expect(help.stdout).toContain(`(${operation.id})`);
      const asks = asksOf(operation, words);
      expect(help.stdout.includes('for confirmation (y/N)'), words.path.join(' ')).toBe(asks !== 'never');
    }
  });
});
