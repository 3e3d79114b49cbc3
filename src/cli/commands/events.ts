import type { Command } from 'commander';
import { describeEvent } from '../../events/describe.js';
import type { FleetEvent } from '../../events/types.js';
import { DEFAULT_RANGE_LIMIT, EventLog, type EventLogEntry, MAX_RANGE_LIMIT } from '../../store/event-log.js';
import { eventSince, eventStreamId, eventSubject, eventTypeGlob } from '../../store/event-query.js';
import { countArgument, schemaArgument } from '../arguments.js';
import type { CliContext } from '../context.js';
import { writeLine } from '../io.js';

interface FilterOptions {
  type?: string;
  subject?: string;
  json?: boolean;
}

export function registerEventsCommand(program: Command, context: CliContext): void {
  const events = program.command('events').description('read the event log that `fleetwatch run` writes');

  filtered(
    events.command('list').description('print logged events, oldest first'),
    'vehicle.vpn.*',
    'vehicle/veh-0003',
  )
    .option(
      '--since <id|time>',
      'events after this stream id, or at or after this ISO 8601 time',
      schemaArgument(eventSince),
    )
    .option(
      '--limit <n>',
      `at most this many, 1 to ${MAX_RANGE_LIMIT} (default ${DEFAULT_RANGE_LIMIT}, newest when --since is not given)`,
      countArgument(1, MAX_RANGE_LIMIT),
    )
    .option('--json', 'one CloudEvent JSON object per line')
    .action(async (options: FilterOptions & { since?: string; limit?: number }) => {
      await withEventLog(context, async (log) => {
        const entries = await log.range({
          type: options.type,
          subject: options.subject,
          since: options.since,
          limit: options.limit,
        });
        for (const entry of entries) print(context, entry, options.json);
      });
    });

  filtered(
    events.command('tail').description('print events live as they are logged, until Ctrl-C'),
    'robot.*',
    'robot/rb-0002',
  )
    .option(
      '--from <id>',
      'resume after this stream id (e.g. 1767225600000-0) instead of starting with the next event',
      schemaArgument(eventStreamId),
    )
    .option('--json', 'one CloudEvent JSON object per line')
    .action(async (options: FilterOptions & { from?: string }) => {
      await withEventLog(context, async (log) => {
        const tail = log.tail({
          type: options.type,
          subject: options.subject,
          fromId: options.from,
          signal: context.io.signal,
        });
        // Closed whatever ends the command: the tail's own connection keeps the process alive.
        try {
          const from = await tail.ready;
          if (!options.json)
            writeLine(context.io.stderr, `following the event log after ${from}; Ctrl-C stops`);
          for await (const entry of tail) print(context, entry, options.json);
        } finally {
          await tail.close();
        }
      });
    });
}

/** `--type` and `--subject`, checked as `/api/events` checks `type` and `subject`. */
function filtered(command: Command, type: string, subject: string): Command {
  return command
    .option('--type <glob>', `only these types, e.g. "${type}"`, schemaArgument(eventTypeGlob))
    .option('--subject <subject>', `only this entity, e.g. ${subject}`, schemaArgument(eventSubject));
}

function withEventLog(context: CliContext, use: (log: EventLog) => Promise<void>): Promise<void> {
  return context.withRedis((redis, config) =>
    use(
      new EventLog({
        redis,
        prefix: config.redis.prefix,
        shards: config.redis.shards,
        logger: context.logger(),
      }),
    ),
  );
}

function print(context: CliContext, entry: EventLogEntry, json: boolean | undefined): void {
  writeLine(context.io.stdout, json ? JSON.stringify(entry.event) : formatLine(entry.event));
}

/** `08:15:02  warning   vehicle.vpn.disconnected      veh-0003 is off the VPN` */
export function formatLine(event: FleetEvent): string {
  const time = event.time.length >= 19 ? event.time.slice(11, 19) : event.time;
  return `${time}  ${event.data.severity.padEnd(8)}  ${event.type.padEnd(30)}  ${describeEvent(event)}`;
}
