import type { Command } from 'commander';
import type { RedisClient } from '../../lib/redis-connection.js';
import {
  type DeadLetter,
  DeadLetterError,
  DeadLetters,
  receiversWithDeadLetters,
} from '../../notifiers/delivery/dead-letters.js';
import { DisabledReceivers } from '../../notifiers/delivery/disabled-receivers.js';
import { ReceiverHolds } from '../../notifiers/delivery/holds.js';
import { receiverNameField } from '../../queues/names.js';
import { schemaArgument } from '../arguments.js';
import type { CliContext } from '../context.js';
import { CommandError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { printList, writeLine } from '../io.js';

/**
 * `fleetwatch dlq`: the dead letters — notifications delivery gave up on (attempts used up,
 * rejected by the receiver, receiver disabled). List them, replay them (each exactly once: a
 * second replay of one id finds it is no longer a dead letter) or purge them.
 */
export function registerDlqCommand(program: Command, context: CliContext): void {
  const dlq = program
    .command('dlq')
    .description('list, replay or purge dead letters (notifications delivery gave up on)');

  dlq
    .command('list')
    .description('print the dead letters, oldest failure first')
    .option('--receiver <name>', 'only this receiver', schemaArgument(receiverNameField))
    .option('--json', 'a JSON array')
    .action(async (options: { receiver?: string; json?: boolean }) => {
      await withDelivery(context, async ({ deadLetters }) => {
        const letters = await deadLetters.list({ receiver: options.receiver });
        printList(context.io, options.json, letters, {
          headers: ['ID', 'RECEIVER', 'FAILED AT', 'ATTEMPTS', 'EVENTS', 'FIRST EVENT', 'REASON'],
          row: (letter) => [
            letter.id,
            letter.receiver,
            letter.failedAt ?? '-',
            String(letter.attempts),
            String(letter.events),
            firstEvent(letter),
            letter.reason,
          ],
          empty: 'no dead letters',
        });
      });
    });

  dlq
    .command('replay')
    .description('send dead letters again, attempts reset, after what is already waiting')
    .argument('[id]', 'the dead letter (notification) id, see dlq list')
    .option('--all', 'every dead letter (of --receiver, or of every receiver)')
    .option('--receiver <name>', 'only this receiver', schemaArgument(receiverNameField))
    .action(async (id: string | undefined, options: { all?: boolean; receiver?: string }) => {
      oneOrAll('replay', id, options.all);
      await withDelivery(context, async ({ deadLetters }) => {
        if (id !== undefined) {
          const letter = await deadLetters.replay(id, { receiver: options.receiver });
          writeLine(
            context.io.stdout,
            `replayed ${letter.id} to ${letter.receiver}: it is sent after the notifications already waiting`,
          );
          return;
        }
        const summaries = await deadLetters.replayAll({ receiver: options.receiver });
        for (const summary of summaries) {
          if (!summary.skipped) continue;
          writeLine(
            context.io.stdout,
            `${summary.receiver}: skipped, ${summary.skipped} (fleetwatch receiver enable ${summary.receiver})`,
          );
        }
        // One total, also when there was nothing to replay: a script (or a person) sees it ran.
        writeLine(context.io.stdout, `replayed ${total(summaries, (summary) => summary.replayed)}`);
      });
    });

  dlq
    .command('purge')
    .description('delete dead letters for good')
    .argument('[id]', 'the dead letter (notification) id, see dlq list')
    .option('--all', 'every dead letter (of --receiver, or of every receiver)')
    .option('--receiver <name>', 'only this receiver', schemaArgument(receiverNameField))
    .option('--yes', 'needed with --all: it cannot be undone')
    .action(async (id: string | undefined, options: { all?: boolean; receiver?: string; yes?: boolean }) => {
      oneOrAll('purge', id, options.all);
      await withDelivery(context, async ({ deadLetters }) => {
        if (id !== undefined) {
          const letter = await deadLetters.purge(id, { receiver: options.receiver });
          writeLine(context.io.stdout, `purged ${letter.id} (${letter.receiver})`);
          return;
        }
        if (!options.yes) {
          const count = await deadLetters.count({ receiver: options.receiver });
          // Nothing to delete: nothing to confirm.
          if (count === 0) return writeLine(context.io.stdout, `purged ${plural(0, 'dead letter')}`);
          throw new CommandError(
            `this deletes ${plural(count, 'dead letter')} for good; add --yes to go ahead`,
            ExitCode.usage,
          );
        }
        const results = await deadLetters.purgeAll({ receiver: options.receiver });
        writeLine(context.io.stdout, `purged ${total(results, (result) => result.purged)}`);
      });
    });
}

export interface DeliveryTools {
  redis: RedisClient;
  deadLetters: DeadLetters;
  disabledReceivers: DisabledReceivers;
  holds: ReceiverHolds;
  /** Receivers of the config. */
  configured: readonly { name: string; kind: string; max_hold: number }[];
}

/** Connects to Redis and hands over the dead letters (of configured receivers and of any left over). */
export async function withDelivery(
  context: CliContext,
  use: (tools: DeliveryTools) => Promise<void>,
): Promise<void> {
  try {
    await context.withRedis(async (redis, config) => {
      const prefix = config.redis.prefix;
      const configured = config.receivers.map(({ name, kind, max_hold }) => ({ name, kind, max_hold }));
      const leftOver = await receiversWithDeadLetters(redis, prefix);
      const receivers = [...new Set([...configured.map((receiver) => receiver.name), ...leftOver])];
      const disabledReceivers = new DisabledReceivers({ redis, prefix });
      const deadLetters = new DeadLetters({ connection: redis, prefix, receivers, disabledReceivers });
      try {
        const holds = new ReceiverHolds({ redis, prefix });
        await use({ redis, deadLetters, disabledReceivers, holds, configured });
      } finally {
        await deadLetters.close();
      }
    });
  } catch (error) {
    throw error instanceof DeadLetterError ? asCommandError(error) : error;
  }
}

function asCommandError(error: DeadLetterError): CommandError {
  switch (error.problem) {
    case 'not_found':
    case 'not_dead':
      return new CommandError(error.message, ExitCode.notFound);
    case 'ambiguous':
      return new CommandError(error.message, ExitCode.usage);
    default:
      return new CommandError(error.message, ExitCode.failed);
  }
}

function oneOrAll(verb: string, id: string | undefined, all: boolean | undefined): void {
  if (id !== undefined && all)
    throw new CommandError(`dlq ${verb}: give an id or --all, not both`, ExitCode.usage);
  if (id === undefined && !all) throw new CommandError(`dlq ${verb}: give an id or --all`, ExitCode.usage);
}

function firstEvent(letter: DeadLetter): string {
  if (!letter.type) return '-';
  return letter.subject ? `${letter.type} ${letter.subject}` : letter.type;
}

/** `3 dead letters (ops-slack 2, pager 1)`: the sum over receivers, and the ones that had any. */
function total<T extends { receiver: string }>(results: readonly T[], count: (result: T) => number): string {
  const sum = results.reduce((all, result) => all + count(result), 0);
  const parts = results.filter((result) => count(result) > 0).map((r) => `${r.receiver} ${count(r)}`);
  return `${plural(sum, 'dead letter')}${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
