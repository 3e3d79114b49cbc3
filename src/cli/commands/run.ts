import type { Command } from 'commander';
import { startDaemon } from '../../daemon/index.js';
import type { CliContext } from '../context.js';

/**
 * `fleetwatch run`: the monitoring daemon. Runs until SIGTERM or SIGINT (the context's
 * `io.signal`), then stops gracefully (in-flight polls get `worker.shutdown_grace`) and exits 0.
 */
export function registerRunCommand(program: Command, context: CliContext): void {
  program
    .command('run')
    .description('run the monitor: poll the fleet, snapshot it in Redis, emit one event per change')
    .addHelpText(
      'after',
      '\nRuns until SIGTERM or Ctrl-C, then lets polls under way finish (worker.shutdown_grace) and exits 0.\n' +
        'Start as many replicas as you like against one Redis.',
    )
    .action(async () => {
      // The config first: it sets the log level (info by default).
      const config = context.config();
      const logger = context.logger('long-running');
      const { signal } = context.io;
      const daemon = startDaemon(config, { logger, signal });
      await daemon.stopped;
    });
}
