import type { Command } from 'commander';
import { describeDuration } from '../../events/describe.js';
import { formatDuration } from '../../lib/duration.js';
import type { ReceiverHold } from '../../notifiers/delivery/holds.js';
import { type ReceiverState, readReceiverStates } from '../../notifiers/delivery/receiver-states.js';
import type { CliContext } from '../context.js';
import { CommandError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { printList, writeLine } from '../io.js';
import { withDelivery } from './dlq.js';

/**
 * `fleetwatch receiver`: the receivers' delivery state. A receiver that answered that it is gone
 * (webhook 410, Slack `channel_is_archived`) is disabled: nothing is sent to it, its notifications
 * go to the dead letters. `receiver enable` turns it back on once it is fixed. A receiver that must
 * wait (it asked with `Retry-After`, or the back-off before its next attempt) is held as a whole,
 * in order; `receiver resume` ends the hold at once, on every replica.
 */
export function registerReceiverCommand(program: Command, context: CliContext): void {
  const receiver = program
    .command('receiver')
    .description('see, re-enable and resume notification receivers');

  receiver
    .command('list')
    .description('the configured receivers: enabled, held (until when, why) or disabled (why), dead letters')
    .option('--json', 'a JSON array')
    .action(async (options: { json?: boolean }) => {
      await withDelivery(context, async ({ deadLetters, disabledReceivers, holds, configured }) => {
        const rows = await readReceiverStates(configured, { deadLetters, disabledReceivers, holds });
        const now = Date.now();
        printList(context.io, options.json, rows, {
          headers: ['NAME', 'KIND', 'MAX HOLD', 'DEAD LETTERS', 'STATE'],
          row: (row) => [
            row.name,
            row.kind,
            formatDuration(row.maxHoldMs),
            String(row.deadLetters),
            describeState(row, now),
          ],
          empty: 'no receivers in the config',
        });
      });
    });

  receiver
    .command('enable')
    .description('turn a disabled receiver back on (its dead letters stay; replay them with dlq replay)')
    .argument('<name>', 'the receiver name from the config')
    .action(async (name: string) => {
      await withDelivery(context, async ({ disabledReceivers, configured }) => {
        const cleared = await disabledReceivers.enable(name);
        const known = configured.some((entry) => entry.name === name);
        if (!cleared) {
          if (!known) throw unknownReceiver(name, configured);
          writeLine(context.io.stdout, `${name} is not disabled`);
          return;
        }
        writeLine(
          context.io.stdout,
          `${name} enabled again (disabled since ${cleared.at}: ${cleared.reason}). ` +
            `Its dead letters stay; \`fleetwatch dlq replay --all --receiver ${name}\` sends them.`,
        );
        if (!known)
          writeLine(context.io.stderr, `fleetwatch: warning: ${name} is not in the config any more`);
      });
    });

  receiver
    .command('resume')
    .description(
      'end the hold of a receiver now, on every replica: its next notification, still first in its queue, is sent at once',
    )
    .argument('<name>', 'the receiver name from the config (see receiver list)')
    .action(async (name: string) => {
      await withDelivery(context, async ({ disabledReceivers, holds, configured }) => {
        if (!configured.some((entry) => entry.name === name)) throw unknownReceiver(name, configured);
        const released = await holds.resume(name);
        writeLine(
          context.io.stdout,
          released
            ? `${name} resumed: it was held until ${released.until} (${describeCause(released)}); its next notification is sent now`
            : `${name} is not held`,
        );
        const disabled = await disabledReceivers.status(name);
        if (disabled) {
          writeLine(
            context.io.stderr,
            `fleetwatch: warning: ${name} is disabled (${disabled.reason}): nothing is sent to it until \`fleetwatch receiver enable ${name}\``,
          );
        }
      });
    });
}

function unknownReceiver(name: string, configured: readonly { name: string }[]): CommandError {
  const names = configured.map((entry) => entry.name).join(', ');
  return new CommandError(
    `no receiver named "${name}" in the config${names ? ` (configured: ${names})` : ''}`,
    ExitCode.notFound,
  );
}

/** `enabled`, `disabled since …: why`, or `held until … (in 4m 59s): why`. */
function describeState(row: ReceiverState, now: number): string {
  if (row.disabled) return `disabled since ${row.disabled.at}: ${row.disabled.reason}`;
  if (row.hold) {
    const left = Math.max(0, Date.parse(row.hold.until) - now);
    return `held until ${row.hold.until} (in ${describeDuration(left)}): ${describeCause(row.hold)}`;
  }
  return 'enabled';
}

/** Why a receiver is held, in the words of the answer that caused it. */
export function describeCause(hold: ReceiverHold): string {
  const capped =
    hold.capped && hold.retryAfterMs !== undefined
      ? `; it asked for ${describeDuration(hold.retryAfterMs)}, capped at max_hold`
      : '';
  switch (hold.cause) {
    case 'throttled':
      return `the receiver asked to wait: ${hold.reason}${capped}`;
    case 'retry':
      return `waiting for the next attempt after: ${hold.reason}${capped}`;
    case 'error':
      return `fleetwatch's own trouble: ${hold.reason}`;
  }
}
