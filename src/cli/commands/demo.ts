import type { Command } from 'commander';
import { createLogger } from '../../log/logger.js';
import { countOption, portArgument, SEED_RANGE } from '../arguments.js';
import type { CliContext } from '../context.js';
import { CommandError, listenError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';

interface DemoCommandOptions {
  port: number;
  vehicles: number;
  robots: number;
  seed: number;
  script: boolean;
}

/**
 * `fleetwatch demo`: a simulated fleet and the monitor in one process, notifications printed as
 * they are delivered. Needs no config file; needs a Redis (REDIS_URL, 127.0.0.1:6379, or a
 * `redis-server` it can start), else says how to get one and exits 2.
 */
export function registerDemoCommand(
  program: Command,
  context: CliContext,
  globals: () => { logLevel?: string },
): void {
  program
    .command('demo')
    .description('watch a simulated fleet: simulator, monitor and console receivers in one process')
    .option('--port <port>', 'simulator port (a free one when it is taken; 0 picks one)', portArgument, 8080)
    .addOption(countOption('--vehicles <n>', 'number of simulated vehicles', { min: 2, max: 1_000 }, 12))
    .addOption(countOption('--robots <n>', 'number of simulated robots', { min: 0, max: 1_000 }, 4))
    .addOption(countOption('--seed <n>', 'seed of the simulated fleet', SEED_RANGE, 7))
    .option('--no-script', 'skip the scripted power-on, robot outage and VPN flap at the start')
    .addHelpText(
      'after',
      '\nRedis: $REDIS_URL, else 127.0.0.1:6379, else a private redis-server on a free port (stopped on exit).\n' +
        'Keys live under a prefix of their own, {demo-<random>}, and are deleted on exit. Ctrl-C stops it.\n' +
        "fleetwatch's own log lines go to stderr, errors only unless --log-level says otherwise (e.g. --log-level warn).",
    )
    .action(async (options: DemoCommandOptions) => {
      if (options.script && options.robots < 1) {
        throw new CommandError(
          '--robots: the script takes a robot down; give 1 or more, or --no-script',
          ExitCode.usage,
        );
      }
      const { io } = context;
      const logLevel = globals().logLevel ?? 'error';
      // Imported here: the demo brings the simulator, which no other command needs.
      const { DemoRedisError, runDemo } = await import('../../demo/index.js');
      try {
        await runDemo({
          ...options,
          logLevel,
          env: io.env,
          stdout: io.stdout,
          logger: createLogger({ level: logLevel, format: 'auto' }),
          signal: io.signal,
        });
      } catch (error) {
        if (error instanceof DemoRedisError) throw new CommandError(error.message, ExitCode.usage);
        // A taken --port is replaced by a free one; one it may not listen on is said by name.
        throw listenError(error, { port: options.port }) ?? error;
      }
    });
}
