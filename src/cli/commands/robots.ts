import type { Command } from 'commander';
import { ROBOT_OPERATIONS } from '../../upstream/operations/robot.js';
import { operationNamed } from '../../upstream/operations/types.js';
import { type LeaseStatus, NAV_GOAL_STATUS, type PlatformFeedback } from '../../upstream/schemas/robot.js';
import type { CliContext } from '../context.js';
import { CommandError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { printRead, type ReadView } from '../io.js';
import { addListCommand, addReadCommand } from '../read-command.js';
import { addRobotCommand, commandAt, DEVICE_ID_HELP, operationHelp } from '../robot-command.js';
import { ROBOT_COMMAND_WORDS } from '../robot-words.js';
import { describeAge, describeElapsed } from '../time.js';

const DEVICE_ID = ['deviceId', DEVICE_ID_HELP] as const;

type Handwritten = (parent: Command) => Command;

/**
 * `fleetwatch robots` and `fleetwatch robot …`: one command per row of the operation table (and
 * three for the motion command), in the order of the table. Most are built from the row and its
 * words (`robot-command.ts`); the few with a view of their own are written here.
 */
export function registerRobotCommands(program: Command, context: CliContext): void {
  program.command('robot').description('read and operate one robot through the gateway (see each group)');
  const robots = () => context.upstream().robots;

  const handwritten: Record<string, Handwritten> = {
    listRobots: (parent) =>
      addListCommand(parent, context, {
        name: 'robots',
        noun: 'robot',
        description: 'list the robots (device ids) this client may access',
        jsonHelp: 'print the list as JSON',
        list: (signal) => robots().listRobots({ signal }),
        view: {
          headers: ['DEVICE', 'NAME'],
          row: (robot) => [robot.deviceId, robot.name ?? '-'],
          empty: 'no robots are granted to this client',
          footer: (all) => `${all.length} robots`,
          json: (all) =>
            all.map(({ deviceId, name }) => ({ deviceId, ...(name === undefined ? {} : { name }) })),
        },
      }),
    health: (parent) =>
      addReadCommand(parent, context, {
        name: 'health',
        description: "check that the robot's API is up and answering",
        args: [DEVICE_ID],
        jsonHelp: 'print the answer as JSON',
        read: async ([deviceId = ''], signal) => {
          const started = Date.now();
          const response = await robots().health(deviceId, { signal });
          return { response, tookMs: Date.now() - started };
        },
        view: ([deviceId]) => ({
          json: ({ response, tookMs }) => ({ deviceId, healthy: true, tookMs, response }),
          text: ({ response, tookMs }) => {
            const status = typeof response.status === 'string' ? ` (status "${response.status}")` : '';
            return `${deviceId}: healthy${status}, answered in ${tookMs} ms`;
          },
        }),
      }),
    platformFeedback: (parent) =>
      addReadCommand(parent, context, {
        name: 'feedback',
        description: 'show autonomy, navigation and vehicle feedback',
        args: [DEVICE_ID],
        jsonHelp: 'print the whole feedback as JSON',
        read: ([deviceId = ''], signal) => robots().platformFeedback(deviceId, { signal }),
        view: ([deviceId = '']) => ({
          json: (feedback) => ({ deviceId, ...feedback }),
          text: (feedback) => describeFeedback(deviceId, feedback),
        }),
      }),
    teleopStatus: (parent) =>
      addReadCommand(parent, context, {
        name: 'status',
        description: 'show who holds the teleoperation lease, and until when',
        args: [DEVICE_ID],
        jsonHelp: 'print the lease as JSON',
        read: ([deviceId = ''], signal) => robots().teleopStatus(deviceId, { signal }),
        view: ([deviceId = '']) => leaseView(deviceId),
      }),
  };

  for (const operation of ROBOT_OPERATIONS) {
    for (const words of ROBOT_COMMAND_WORDS[operation.name]) {
      if (!words.handwritten) {
        addRobotCommand(program, context, operation, words);
        continue;
      }
      const add = handwritten[operation.name];
      if (!add) throw new Error(`${operation.name}: marked handwritten, but no command is written for it`);
      add(commandAt(program, words.path.slice(0, -1))).addHelpText('after', operationHelp(operation, words));
    }
  }

  addLeaseShorthand(commandAt(program, ['robot', 'lease']), context);
}

/**
 * `robot lease <deviceId>`, as documented before the lease had commands of its own: the same as
 * `robot lease status <deviceId>`.
 */
function addLeaseShorthand(lease: Command, context: CliContext): void {
  const status = operationNamed(ROBOT_OPERATIONS, 'teleopStatus');
  lease
    .argument('[deviceId]', `${DEVICE_ID_HELP}: the same as \`robot lease status <deviceId>\``)
    .option('--json', 'print the lease as JSON')
    .action(async (deviceId: string | undefined, options: { json?: boolean }) => {
      if (deviceId === undefined) {
        const verbs = lease.commands.map((sub) => sub.name()).join(', ');
        throw new CommandError(
          `robot lease: name a device (robot lease <deviceId>) or a command: ${verbs}`,
          ExitCode.usage,
        );
      }
      const value = await context.upstream().robots[status.name](deviceId, { signal: context.io.signal });
      printRead(context.io, options.json, value, leaseView(deviceId));
    });
}

function leaseView(deviceId: string): ReadView<LeaseStatus> {
  return {
    json: (lease) => ({ deviceId, holderId: lease.holderId ?? null, expiresAt: lease.expiresAt ?? null }),
    text: (lease) => {
      if (!lease.holderId) return `${deviceId}: nobody holds the lease`;
      const until = lease.expiresAt ? ` until ${lease.expiresAt} (${describeUntil(lease.expiresAt)})` : '';
      return `${deviceId}: lease held by ${lease.holderId}${until}`;
    },
  };
}

function describeFeedback(deviceId: string, feedback: PlatformFeedback): string {
  const cortex = feedback.cortex_status;
  const goal = feedback.navigation_feedback?.nav2_goal_status;
  const goalWord =
    goal?.status_text ??
    (goal?.status === undefined ? undefined : (NAV_GOAL_STATUS[goal.status] ?? `${goal.status}`));
  const distance = feedback.navigation_feedback?.total_distance_remaining;
  const position = feedback.current_pose?.pose?.position;
  const stamp = feedback.timestamp_utc?.sec;
  const rows: [string, string][] = [
    [
      'autonomy',
      cortex
        ? `${cortex.status_text ?? cortex.status ?? '-'}${cortex.description ? ` (${cortex.description})` : ''}`
        : '-',
    ],
    [
      'navigation',
      goalWord ? `${goalWord}${distance === undefined ? '' : `, ${distance.toFixed(1)} m remaining`}` : '-',
    ],
    ['vehicle', feedback.vehicle_feedback?.state ?? '-'],
    [
      'position',
      position?.latitude !== undefined && position.longitude !== undefined
        ? `${position.latitude.toFixed(6)}, ${position.longitude.toFixed(6)}`
        : '-',
    ],
    [
      'commands left',
      feedback.number_commands_remaining === undefined ? '-' : String(feedback.number_commands_remaining),
    ],
    ['reported', stamp === undefined ? '-' : describeAge(new Date(stamp * 1000).toISOString())],
  ];
  return [`${deviceId}`, ...rows.map(([label, value]) => `  ${label.padEnd(14)}${value}`)].join('\n');
}

function describeUntil(iso: string): string {
  const ms = Date.parse(iso) - Date.now();
  if (Number.isNaN(ms)) return 'unknown expiry';
  return ms <= 0 ? 'expired' : `in ${describeElapsed(ms)}`;
}
