import type { Command } from 'commander';
import { type Daemon, startDaemon } from '../../daemon/index.js';
import { limitHeapGrowth } from '../../lib/heap-growth.js';
import { loadNodemailer } from '../../notifiers/receivers/email/index.js';
import type { CliContext } from '../context.js';
import { ExitCode } from '../exit-codes.js';

/**
 * `fleetwatch run`: the monitoring daemon. Runs until SIGTERM or SIGINT (the context's
 * `io.signal`), then stops gracefully (in-flight polls get `worker.shutdown_grace`) and exits 0.
 * SIGHUP re-reads the config file and applies what can change live (daemon/reload.ts), as
 * `POST /-/reload` does; an invalid file is refused and the daemon runs on unchanged.
 */
export function registerRunCommand(program: Command, context: CliContext): void {
  program
    .command('run')
    .description('run the monitor: poll the fleet, snapshot it in Redis, emit one event per change')
    .addHelpText(
      'after',
      '\nRuns until SIGTERM or Ctrl-C, then lets polls under way finish (worker.shutdown_grace) and exits 0.\n' +
        'SIGHUP (or POST /-/reload with an admin token) re-reads the config file: routes, receivers,\n' +
        'muting, entity tags, detector thresholds and console.url change live; other settings are logged\n' +
        'as needing a restart; an invalid file is refused and the config in force is kept.\n' +
        'Start as many replicas as you like against one Redis (send each its own SIGHUP).',
    )
    .action(async () => {
      // Installed before anything else: the "fleetwatch running" line can reach a supervisor (or
      // a test) that answers with SIGHUP before startDaemon returns, and without a handler SIGHUP
      // ends the process (status 129). A SIGHUP before the daemon exists reloads once it does.
      let daemon: Daemon | undefined;
      let hungUpEarly = false;
      const onHangUp = () => {
        if (daemon) void daemon.reload('signal');
        else hungUpEarly = true;
      };
      process.on('SIGHUP', onHangUp);
      limitHeapGrowth();
      try {
        // The config first: it sets the log level (info by default).
        const config = context.config();
        const logger = context.logger('long-running');
        const { signal } = context.io;
        // Loaded at first use; with an email receiver now, so a missing module stops the start.
        if (config.receivers.some((receiver) => receiver.kind === 'email')) await loadNodemailer();
        daemon = startDaemon(config, {
          logger,
          signal,
          configSource: () => context.readConfigAgain(),
        });
        if (hungUpEarly) void daemon.reload('signal');
        await daemon.stopped;
        // Refused the store (redis.shards): said in one line already; a configuration mistake.
        if (daemon.refused !== undefined) context.exitCode = ExitCode.usage;
        // Its poll thread ended: said in one line already; a restart may help.
        else if (daemon.failed !== undefined) context.exitCode = ExitCode.failed;
      } finally {
        process.off('SIGHUP', onHangUp);
      }
    });
}
