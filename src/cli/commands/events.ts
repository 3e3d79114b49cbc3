import type { Command } from 'commander';
import { describeEvent } from '../../events/describe.js';
import type { FleetEvent } from '../../events/types.js';
import { EventLog, type EventLogEntry } from '../../store/event-log.js';
import { positiveIntegerArgument } from '../arguments.js';
import type { CliContext } from '../context.js';
import { writeLine } from '../io.js';

interface FilterOptions {
  type?: string;
  subject?: string;
  json?: boolean;
}

export function registerEventsCommand(program: Command, context: CliContext): void {
  const events = program.command('events').description('read the event log that `fleetwatch run` writes');

  events
    .command('list')
    .description('print logged events, oldest first')
    .option('--type <glob>', 'only these types, e.g. "vehicle.vpn.*"')
    .option('--subject <subject>', 'only this entity, e.g. vehicle/veh-0003')
    .option('--since <id|time>', 'events after this stream id, or at or after this ISO 8601 time')
    .option(
      '--limit <n>',
      'at most this many (default 100, newest when --since is not given)',
      positiveIntegerArgument,
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

  events
    .command('tail')
    .description('print events live as they are logged, until Ctrl-C')
    .option('--type <glob>', 'only these types, e.g. "robot.*"')
    .option('--subject <subject>', 'only this entity, e.g. robot/rb-0002')
    .option('--from <id>', 'resume after this stream id instead of starting with the next event')
    .option('--json', 'one CloudEvent JSON object per line')
    .action(async (options: FilterOptions & { from?: string }) => {
      await withEventLog(context, async (log) => {
        const tail = log.tail({
          type: options.type,
          subject: options.subject,
          fromId: options.from,
          signal: context.io.signal,
        });
        const from = await tail.ready;
        if (!options.json)
          writeLine(context.io.stderr, `following the event log after ${from}; Ctrl-C stops`);
        for await (const entry of tail) print(context, entry, options.json);
      });
    });
}

function withEventLog(context: CliContext, use: (log: EventLog) => Promise<void>): Promise<void> {
  return context.withRedis((redis, config) =>
    use(new EventLog({ redis, prefix: config.redis.prefix, logger: context.logger() })),
  );
}

function print(context: CliContext, entry: EventLogEntry, json: boolean | undefined): void {
  writeLine(context.io.stdout, json ? JSON.stringify(entry.event) : formatLine(entry.event));
}

/** `08:15:02  warning   vehicle.vpn.disconnected      veh-0003 lost its VPN connection` */
export function formatLine(event: FleetEvent): string {
  const time = event.time.length >= 19 ? event.time.slice(11, 19) : event.time;
  return `${time}  ${event.data.severity.padEnd(8)}  ${event.type.padEnd(30)}  ${describeEvent(event)}`;
}
