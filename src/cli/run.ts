import { main } from './main.js';

/**
 * Once a command has finished, the process ends within this long even if a library left a handle
 * open (a reconnect timer, a socket): a daemon told to stop must not hang until its supervisor's
 * kill. It says so on stderr when it has to, since that is a bug to report.
 */
const EXIT_AFTER_MS = 5_000;

process.exitCode = await main(process.argv);
setTimeout(() => {
  process.stderr.write(
    `fleetwatch: finished, but something still held the process ${EXIT_AFTER_MS / 1000} s later; exiting\n`,
  );
  process.exit();
}, EXIT_AFTER_MS).unref();
