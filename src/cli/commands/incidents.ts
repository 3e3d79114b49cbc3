import type { Command } from 'commander';
import { describeDuration } from '../../events/describe.js';
import type { Severity } from '../../events/types.js';
import { ACK_DURATION_HELP, acknowledgeIncident } from '../../incidents/acknowledge.js';
import {
  filterProblems,
  INCIDENT_STATES,
  IncidentReader,
  type IncidentStateFilter,
  type IncidentView,
  isIncidentState,
  toView,
} from '../../incidents/view.js';
import { createMutes } from '../../notifiers/dispatch/notification-step.js';
import { IncidentStore } from '../../store/incidents.js';
import { SnapshotStore } from '../../store/snapshot-store.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import { printList, writeJson, writeLine, writeUsage } from '../io.js';

/**
 * `fleetwatch incidents`: the incidents fleetwatch holds open (from Redis, as the daemon keeps
 * them), each with whether it is muted right now and who acknowledged it. `fleetwatch ack <id>`:
 * acknowledge one, so its reminders stop until it resolves or the acknowledgement ends.
 */

interface ListOptions {
  type?: string[];
  subject?: string[];
  severity?: string;
  state?: string[];
  json?: boolean;
}

interface AckOptions {
  for?: string;
  comment?: string;
  author?: string;
  json?: boolean;
}

const collect = (value: string, previous: string[] = []): string[] => [
  ...previous,
  ...value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== ''),
];

const SEVERITIES = new Set<string>(['info', 'warning', 'critical']);

/** Schema fields as the flags that set them. */
const FLAG_OF: Record<string, string> = { for: '--for', comment: '--comment', author: '--author' };

function inFlags(problem: string): string {
  const colon = problem.indexOf(':');
  const field = colon > 0 ? problem.slice(0, colon) : '';
  const flag = FLAG_OF[field];
  return flag ? `${flag}${problem.slice(colon)}` : problem;
}

function usage(context: CliContext, command: string, problems: readonly string[]): void {
  writeUsage(context.io, command, problems);
  context.exitCode = ExitCode.usage;
}

/** `muted: silenced (silence s-1)`, `acked by dana until 14:00`, `-`. */
function standing(view: IncidentView): string {
  const parts: string[] = [];
  if (view.muted) parts.push(`${view.muted.reason} (${view.muted.by})`);
  if (view.acknowledged && view.acknowledgement) {
    parts.push(`acknowledged by ${view.acknowledgement.by} until ${view.acknowledgement.until}`);
  }
  if (view.state === 'closed') parts.push(`closed ${view.closedAt ?? ''}`.trim());
  return parts.length > 0 ? parts.join(', ') : '-';
}

export function registerIncidentCommands(program: Command, context: CliContext): void {
  program
    .command('incidents')
    .description('list open incidents: type, subject, since when, muted or acknowledged')
    .option('--type <glob>', 'only these firing types, e.g. "vehicle.*" (repeatable)', collect)
    .option('--subject <glob>', 'only these subjects, e.g. "robot/rb-00*" (repeatable)', collect)
    .option('--severity <minimum>', 'only this severity and above: info, warning, critical')
    .option(
      '--state <state>',
      `only these (repeatable, or comma-separated): ${INCIDENT_STATES.join(', ')}; default open`,
      collect,
    )
    .option('--json', 'print a JSON array')
    .action(async (options: ListOptions) => {
      const problems: string[] = [];
      if (options.severity !== undefined && !SEVERITIES.has(options.severity)) {
        problems.push(`--severity: expected info, warning or critical (got "${options.severity}")`);
      }
      const states = options.state ?? [];
      const unknown = states.filter((state) => !isIncidentState(state));
      if (unknown.length > 0) {
        problems.push(`--state: expected any of ${INCIDENT_STATES.join(', ')} (got ${unknown.join(', ')})`);
      }
      const filter = {
        type: options.type ?? [],
        subject: options.subject ?? [],
        ...(options.severity !== undefined && SEVERITIES.has(options.severity)
          ? { severity: options.severity as Severity }
          : {}),
        states: states.filter(isIncidentState) as IncidentStateFilter[],
      };
      problems.push(...filterProblems(filter).map((problem) => `--${problem}`));
      if (problems.length > 0) return usage(context, 'incidents', problems);
      await context.withRedis(async (redis, config) => {
        const reader = new IncidentReader({
          incidents: new IncidentStore({ redis, prefix: config.redis.prefix, shards: config.redis.shards }),
          mutes: createMutes({ notifications: config.notifications, redis, prefix: config.redis.prefix }),
        });
        const { items } = await reader.list(filter, { limit: Number.MAX_SAFE_INTEGER });
        const now = Date.now();
        printList(context.io, options.json, items, {
          headers: ['ID', 'SEVERITY', 'TYPE', 'SUBJECT', 'FOR', 'STANDING'],
          row: (view) => [
            view.id,
            view.severity,
            view.type,
            view.subject,
            describeDuration(view.state === 'open' ? now - Date.parse(view.since) : view.durationMs),
            standing(view),
          ],
          empty: states.length > 0 ? 'no incidents in that state' : 'no open incidents',
          footer: (all) => {
            const open = all.filter((view) => view.state === 'open');
            const acknowledged = open.filter((view) => view.acknowledged).length;
            const muted = open.filter((view) => view.muted !== null).length;
            return `${open.length} open (${acknowledged} acknowledged, ${muted} muted)`;
          },
        });
      });
    });

  program
    .command('ack')
    .description('acknowledge an open incident: its reminders stop until it resolves or --for ends')
    .argument('<incident>', 'the incident id (see fleetwatch incidents)')
    .option('--for <duration>', `how long the acknowledgement lasts (${ACK_DURATION_HELP})`)
    .option('--comment <text>', 'why, or what is being done (a ticket, "on it")')
    .option('--author <name>', 'who acknowledges (default: $USER)')
    .option('--json', 'print the incident as JSON')
    .action(async (id: string, options: AckOptions) => {
      const author = options.author ?? context.io.env.USER ?? context.io.env.LOGNAME;
      const problems: string[] = [];
      if (options.comment === undefined) problems.push('--comment: say why, or what is being done');
      if (author === undefined) problems.push('--author: say who acknowledges ($USER is not set)');
      if (problems.length > 0) return usage(context, 'ack', problems);
      const input = {
        comment: options.comment,
        author,
        ...(options.for === undefined ? {} : { for: options.for }),
      };
      await context.withRedis(async (redis, config) => {
        const incidents = new IncidentStore({
          redis,
          prefix: config.redis.prefix,
          shards: config.redis.shards,
        });
        const store = new SnapshotStore({
          redis,
          prefix: config.redis.prefix,
          shards: config.redis.shards,
          installation: config.installation,
          eventLogCap: config.events.log_max_length,
        });
        const outcome = await acknowledgeIncident({ incidents, store }, id, input);
        switch (outcome.kind) {
          case 'invalid':
            return usage(context, 'ack', outcome.problems.map(inFlags));
          case 'not-found':
            writeLine(
              context.io.stderr,
              `fleetwatch: no incident "${id}" (fleetwatch incidents --state all lists the open and recent ones)`,
            );
            context.exitCode = ExitCode.notFound;
            return;
          case 'closed':
            writeLine(
              context.io.stderr,
              `fleetwatch: incident ${id} is not open${outcome.record.closedAt ? ` (closed at ${outcome.record.closedAt})` : ''}: there is nothing to acknowledge`,
            );
            context.exitCode = ExitCode.failed;
            return;
          case 'acknowledged': {
            const view = toView(outcome.record, undefined, Date.now());
            if (options.json) return writeJson(context.io.stdout, view);
            writeLine(
              context.io.stdout,
              `${id} acknowledged by ${view.acknowledgement?.by} until ${view.acknowledgement?.until}: reminders stop until then or until it resolves`,
            );
          }
        }
      });
    });
}
