import { Command, Option } from 'commander';
import { LOG_LEVELS } from '../config/schema.js';
import { VERSION } from '../version.js';
import { registerConfigCommand } from './commands/config.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerDlqCommand } from './commands/dlq.js';
import { registerEventsCommand } from './commands/events.js';
import { registerIncidentCommands } from './commands/incidents.js';
import { registerPowerCommand } from './commands/power.js';
import { registerReceiverCommand } from './commands/receivers.js';
import { registerRobotCommands } from './commands/robots.js';
import { registerRunCommand } from './commands/run.js';
import { registerSilenceCommand } from './commands/silence.js';
import { registerSimulateCommand } from './commands/simulate.js';
import { registerVehiclesCommand } from './commands/vehicles.js';
import { CliContext, type GlobalOptions } from './context.js';
import { reportError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import { type CliIo, USAGE_HINT } from './io.js';

/**
 * A usage error as one line, like every other error of the CLI: `fleetwatch: option '--from <id>'
 * argument 'x' is invalid. expected a stream id such as 1767225600000-0. (add --help for usage)`.
 * Commander's suggestion (`Did you mean …?`) joins the line.
 */
function usageLine(text: string): string {
  const message = text
    .trim()
    .replace(/^error: /, '')
    .replace(/\s*\n\s*/g, ' ');
  return `fleetwatch: ${message} ${USAGE_HINT}\n`;
}

/** Builds the command tree; exported so tests can read the help of every command. */
export function buildProgram(context: CliContext): Command {
  const program = new Command('fleetwatch')
    .description(
      'Watch a fleet of vehicles and robots, tell people when something changes, and act on the fleet.',
    )
    .version(VERSION, '-V, --version')
    .option('-c, --config <path>', 'config file (default: $FLEETWATCH_CONFIG, else ./fleetwatch.yaml)')
    .addOption(new Option('--log-level <level>', 'log level').choices(LOG_LEVELS))
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => context.io.stdout.write(text),
      writeErr: (text) => context.io.stderr.write(text),
      outputError: (text, write) => write(usageLine(text)),
    });
  const globals = () => program.opts<GlobalOptions>();
  registerVehiclesCommand(program, context);
  registerPowerCommand(program, context);
  registerRobotCommands(program, context);
  registerRunCommand(program, context);
  registerEventsCommand(program, context);
  registerIncidentCommands(program, context);
  registerDlqCommand(program, context);
  registerReceiverCommand(program, context);
  registerSilenceCommand(program, context);
  registerSimulateCommand(program, context);
  registerConfigCommand(program, context, globals);
  registerDemoCommand(program, context, globals);
  // Every subcommand inherits the exit override and output, so usage errors everywhere exit 2.
  const inherit = (command: Command) => {
    for (const sub of command.commands) {
      sub.exitOverride().configureOutput(program.configureOutput());
      inherit(sub);
    }
  };
  inherit(program);
  return program;
}

/**
 * Watches the output streams for the life of the process (a write that fails after the command
 * returned must not crash it either). stdout closed by its reader (`fleetwatch events list | head
 * -1`: EPIPE) ends the command quietly, exit 0; another write failure ends it with one line on
 * stderr, exit 1. A failing stderr is ignored: there is nowhere left to say anything.
 */
function watchOutput(io: Pick<CliIo, 'stdout' | 'stderr'>) {
  const closed = new AbortController();
  let failure: Error | undefined;
  io.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (!CLOSED_OUTPUT.has(error.code ?? '')) failure ??= error;
    closed.abort();
  });
  io.stderr.on('error', () => {});
  return {
    closed: closed.signal,
    /** The exit status when the output failed, else undefined. */
    status(): number | undefined {
      if (!closed.signal.aborted) return undefined;
      if (!failure) return ExitCode.ok;
      io.stderr.write(`fleetwatch: cannot write the output: ${failure.message}\n`);
      return ExitCode.failed;
    },
  };
}

/** Write errors that mean the reader went away. */
const CLOSED_OUTPUT = new Set(['EPIPE', 'ECONNRESET', 'ERR_STREAM_DESTROYED']);

/** Runs the CLI with `argv` as node gives it (`[node, script, ...args]`); resolves to the exit status. */
export async function main(argv: string[], io: Partial<CliIo> = {}): Promise<number> {
  const controller = new AbortController();
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const output = watchOutput({ stdout, stderr });
  const fullIo: CliIo = {
    stdin: io.stdin ?? process.stdin,
    stdout,
    stderr,
    env: io.env ?? process.env,
    // A closed stdout stops a long command (`events tail`) as Ctrl-C would.
    signal: AbortSignal.any([io.signal ?? controller.signal, output.closed]),
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
    return output.status() ?? context.exitCode;
  } catch (error) {
    return output.status() ?? reportError(error, fullIo);
  } finally {
    if (listen) {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
    await context.close();
  }
}
