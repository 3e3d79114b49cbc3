import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { CommandError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { renderTable, writeJson, writeLine } from '../io.js';
import { withDelivery } from './dlq.js';

/**
 * `fleetwatch receiver`: the receivers' delivery state. A receiver that answered that it is gone
 * (webhook 410, Slack `channel_is_archived`) is disabled: nothing is sent to it, its notifications
 * go to the dead letters. `receiver enable` turns it back on once it is fixed.
 */
export function registerReceiverCommand(program: Command, context: CliContext): void {
  const receiver = program.command('receiver').description('see and re-enable notification receivers');

  receiver
    .command('list')
    .description('the configured receivers: enabled or disabled (and why), dead letters')
    .option('--json', 'a JSON array')
    .action(async (options: { json?: boolean }) => {
      await withDelivery(context, async ({ deadLetters, switches, configured }) => {
        const rows = [];
        for (const { name, kind } of configured) {
          const disabled = await switches.status(name);
          const deadLetterCount = await deadLetters.count({ receiver: name });
          rows.push({ name, kind, disabled: disabled ?? null, deadLetters: deadLetterCount });
        }
        if (options.json) {
          writeJson(context.io.stdout, rows);
          return;
        }
        if (rows.length === 0) {
          writeLine(context.io.stdout, 'no receivers in the config');
          return;
        }
        writeLine(
          context.io.stdout,
          renderTable(
            ['NAME', 'KIND', 'STATE', 'DEAD LETTERS'],
            rows.map((row) => [
              row.name,
              row.kind,
              row.disabled ? `disabled since ${row.disabled.at}: ${row.disabled.reason}` : 'enabled',
              String(row.deadLetters),
            ]),
          ),
        );
      });
    });

  receiver
    .command('enable')
    .description('turn a disabled receiver back on (its dead letters stay; replay them with dlq replay)')
    .argument('<name>', 'the receiver name from the config')
    .action(async (name: string) => {
      await withDelivery(context, async ({ switches, configured }) => {
        const cleared = await switches.enable(name);
        const known = configured.some((entry) => entry.name === name);
        if (!cleared) {
          if (!known) throw new CommandError(`no receiver named "${name}" in the config`, ExitCode.notFound);
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
}
