import type { Command } from 'commander';
import { NAV_GOAL_STATUS, type PlatformFeedback } from '../../upstream/schemas/robot.js';
import type { CliContext } from '../context.js';
import { renderTable, writeJson, writeLine } from '../io.js';
import { describeAge, describeElapsed } from '../time.js';

export function registerRobotCommands(program: Command, context: CliContext): void {
  program
    .command('robots')
    .description('list the robots (device ids) this client may access')
    .option('--json', 'print the list as JSON')
    .action(async (options: { json?: boolean }) => {
      const robots = await context.upstream().robots.listRobots({ signal: context.io.signal });
      const { stdout } = context.io;
      if (options.json) {
        return writeJson(
          stdout,
          robots.map(({ deviceId, name }) => ({ deviceId, ...(name === undefined ? {} : { name }) })),
        );
      }
      if (robots.length === 0) return writeLine(stdout, 'no robots are granted to this client');
      writeLine(
        stdout,
        renderTable(
          ['DEVICE', 'NAME'],
          robots.map((robot) => [robot.deviceId, robot.name ?? '-']),
        ),
      );
      writeLine(stdout, `\n${robots.length} robots`);
    });

  const robot = program.command('robot').description('read one robot through the gateway');

  robot
    .command('health')
    .description("check that the robot's API is up and answering")
    .argument('<deviceId>', 'device id as listed by `fleetwatch robots`')
    .option('--json', 'print the answer as JSON')
    .action(async (deviceId: string, options: { json?: boolean }) => {
      const started = Date.now();
      const health = await context.upstream().robots.health(deviceId, { signal: context.io.signal });
      const tookMs = Date.now() - started;
      if (options.json)
        return writeJson(context.io.stdout, { deviceId, healthy: true, tookMs, response: health });
      const status = typeof health.status === 'string' ? ` (status "${health.status}")` : '';
      writeLine(context.io.stdout, `${deviceId}: healthy${status}, answered in ${tookMs} ms`);
    });

  robot
    .command('feedback')
    .description('show autonomy, navigation and vehicle feedback')
    .argument('<deviceId>', 'device id as listed by `fleetwatch robots`')
    .option('--json', 'print the whole feedback as JSON')
    .action(async (deviceId: string, options: { json?: boolean }) => {
      const feedback = await context
        .upstream()
        .robots.platformFeedback(deviceId, { signal: context.io.signal });
      if (options.json) return writeJson(context.io.stdout, { deviceId, ...feedback });
      writeLine(context.io.stdout, describeFeedback(deviceId, feedback));
    });

  robot
    .command('lease')
    .description('show who holds the teleoperation lease, and until when')
    .argument('<deviceId>', 'device id as listed by `fleetwatch robots`')
    .option('--json', 'print the lease as JSON')
    .action(async (deviceId: string, options: { json?: boolean }) => {
      const lease = await context.upstream().robots.teleopStatus(deviceId, { signal: context.io.signal });
      if (options.json) {
        return writeJson(context.io.stdout, {
          deviceId,
          holderId: lease.holderId ?? null,
          expiresAt: lease.expiresAt ?? null,
        });
      }
      if (!lease.holderId) return writeLine(context.io.stdout, `${deviceId}: nobody holds the lease`);
      const until = lease.expiresAt ? ` until ${lease.expiresAt} (${describeUntil(lease.expiresAt)})` : '';
      writeLine(context.io.stdout, `${deviceId}: lease held by ${lease.holderId}${until}`);
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
