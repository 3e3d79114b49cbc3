import type { Command } from 'commander';
import { NAV_GOAL_STATUS, type PlatformFeedback } from '../../upstream/schemas/robot.js';
import type { CliContext } from '../context.js';
import { addListCommand, addReadCommand } from '../read-command.js';
import { describeAge, describeElapsed } from '../time.js';

const DEVICE_ID = ['deviceId', 'device id as listed by `fleetwatch robots`'] as const;

export function registerRobotCommands(program: Command, context: CliContext): void {
  addListCommand(program, context, {
    name: 'robots',
    noun: 'robot',
    description: 'list the robots (device ids) this client may access',
    jsonHelp: 'print the list as JSON',
    list: (signal) => context.upstream().robots.listRobots({ signal }),
    view: {
      headers: ['DEVICE', 'NAME'],
      row: (robot) => [robot.deviceId, robot.name ?? '-'],
      empty: 'no robots are granted to this client',
      footer: (all) => `${all.length} robots`,
      json: (all) => all.map(({ deviceId, name }) => ({ deviceId, ...(name === undefined ? {} : { name }) })),
    },
  });

  const robot = program.command('robot').description('read one robot through the gateway');
  const robots = () => context.upstream().robots;

  addReadCommand(robot, context, {
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
  });

  addReadCommand(robot, context, {
    name: 'feedback',
    description: 'show autonomy, navigation and vehicle feedback',
    args: [DEVICE_ID],
    jsonHelp: 'print the whole feedback as JSON',
    read: ([deviceId = ''], signal) => robots().platformFeedback(deviceId, { signal }),
    view: ([deviceId = '']) => ({
      json: (feedback) => ({ deviceId, ...feedback }),
      text: (feedback) => describeFeedback(deviceId, feedback),
    }),
  });

  addReadCommand(robot, context, {
    name: 'lease',
    description: 'show who holds the teleoperation lease, and until when',
    args: [DEVICE_ID],
    jsonHelp: 'print the lease as JSON',
    read: ([deviceId = ''], signal) => robots().teleopStatus(deviceId, { signal }),
    view: ([deviceId]) => ({
      json: (lease) => ({ deviceId, holderId: lease.holderId ?? null, expiresAt: lease.expiresAt ?? null }),
      text: (lease) => {
        if (!lease.holderId) return `${deviceId}: nobody holds the lease`;
        const until = lease.expiresAt ? ` until ${lease.expiresAt} (${describeUntil(lease.expiresAt)})` : '';
        return `${deviceId}: lease held by ${lease.holderId}${until}`;
      },
    }),
  });
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
