import { Command, Option } from 'commander';
import { VERSION } from '../version.js';
import { registerConfigCommand } from './commands/config.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerDlqCommand } from './commands/dlq.js';
import { registerEventsCommand } from './commands/events.js';
import { registerPowerCommand } from './commands/power.js';
import { registerReceiverCommand } from './commands/receivers.js';
import { registerRobotCommands } from './commands/robots.js';
import { registerRunCommand } from './commands/run.js';
import { registerSilenceCommand } from './commands/silence.js';
import { registerSimulateCommand } from './commands/simulate.js';
import { registerVehiclesCommand } from './commands/vehicles.js';
import { CliContext, type GlobalOptions } from './context.js';
import { reportError } from './errors.js';
import type { CliIo } from './io.js';

/** Builds the command tree; exported so tests can read the help of every command. */
export function buildProgram(context: CliContext): Command {
  const program = new Command('fleetwatch')
    .description('Watch a fleet of vehicles and robots; act on their power.')
    .version(VERSION, '-V, --version')
    .option('-c, --config <path>', 'config file (default: $FLEETWATCH_CONFIG, else ./fleetwatch.yaml)')
    .addOption(
      new Option('--log-level <level>', 'log level').choices([
        'trace',
        'debug',
        'info',
        'warn',
        'error',
        'silent',
      ]),
    )
    .showHelpAfterError('(add --help for usage)')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => context.io.stdout.write(text),
      writeErr: (text) => context.io.stderr.write(text),
    });
  const globals = () => program.opts<GlobalOptions>();
  registerVehiclesCommand(program, context);
  registerPowerCommand(program, context);
  registerRobotCommands(program, context);
  registerRunCommand(program, context);
  registerEventsCommand(program, context);
  registerDlqCommand(program, context);
  registerReceiverCommand(program, context);
  registerSilenceCommand(program, context);
  registerSimulateCommand(program, context);
  registerConfigCommand(program, context, globals);
  registerDemoCommand(program, context, globals);
  // Every subcommand inherits the exit override and output, so usage errors everywhere exit 2.
  const inherit = (command: Command) => {
    for (const sub of command.commands) {
      sub
        .exitOverride()
        .configureOutput(program.configureOutput())
        .showHelpAfterError('(add --help for usage)');
      inherit(sub);
    }
  };
  inherit(program);
  return program;
}

/** Runs the CLI with `argv` as node gives it (`[node, script, ...args]`); resolves to the exit status. */
export async function main(argv: string[], io: Partial<CliIo> = {}): Promise<number> {
  const controller = new AbortController();
  const fullIo: CliIo = {
    stdout: io.stdout ?? process.stdout,
    stderr: io.stderr ?? process.stderr,
    env: io.env ?? process.env,
    signal: io.signal ?? controller.signal,
  };
  const context = new CliContext(fullIo, () => program.opts<GlobalOptions>());
  const program = buildProgram(context);
  const stop = () => controller.abort();
  const listen = !io.signal;
  if (listen) {
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }
  try {
    await program.parseAsync(argv);
    return context.exitCode;
  } catch (error) {
    return reportError(error, fullIo);
  } finally {
    if (listen) {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
    await context.close();
  }
}
