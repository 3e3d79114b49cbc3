import { CommanderError } from 'commander';
import { ConfigError } from '../config/index.js';
import { secrets } from '../log/secrets.js';
import {
  AuthenticationError,
  ForbiddenError,
  NotFoundError,
  UnauthorizedError,
  UnprocessableError,
  UpstreamError,
} from '../upstream/errors.js';
import { ExitCode } from './exit-codes.js';
import type { CliIo } from './io.js';

/** A command that cannot do what was asked, with the exit status that says why (e.g. 4: no such dead letter). */
export class CommandError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = 'CommandError';
  }
}

/** What a failed `listen` or host-name lookup carries, beside its code. */
interface ListenFailure extends NodeJS.ErrnoException {
  port?: number;
  hostname?: string;
}

/**
 * A server of the command's own that cannot listen where its options say, as a usage error naming
 * the option (`--port 8080 is in use; pick another or --port 0 for a free one`) instead of the raw
 * `listen EADDRINUSE …`. Undefined for any other error, and for one about another port or host.
 */
export function listenError(
  error: unknown,
  given: { host?: string; port: number },
): CommandError | undefined {
  const failure = (error ?? {}) as ListenFailure;
  const free = 'pick another, or --port 0 for a free one';
  const local = 'give an address of this machine, such as 127.0.0.1 or 0.0.0.0';
  let message: string | undefined;
  if (failure.syscall === 'listen' && failure.port === given.port) {
    if (failure.code === 'EADDRINUSE') message = `--port ${given.port} is in use; ${free}`;
    if (failure.code === 'EACCES') message = `--port ${given.port} needs privileges to listen on; ${free}`;
  } else if (given.host !== undefined) {
    if (failure.syscall === 'getaddrinfo' && failure.hostname === given.host) {
      message = `--host ${given.host}: no such host (${failure.code}); ${local}`;
    }
    if (failure.syscall === 'listen' && failure.code === 'EADDRNOTAVAIL') {
      message = `--host ${given.host} is not an address of this machine; ${local}`;
    }
  }
  return message === undefined ? undefined : new CommandError(message, ExitCode.usage);
}

/**
 * Turns anything a command threw into lines on stderr and an exit status. User mistakes and
 * upstream answers get one line each; only a fault in fleetwatch itself shows a stack, and only
 * with FLEETWATCH_DEBUG set.
 */
export function reportError(error: unknown, io: CliIo): number {
  const say = (text: string) => io.stderr.write(`fleetwatch: ${secrets.scrub(text)}\n`);
  if (error instanceof CommanderError) {
    // Commander has already printed its message (or the help text).
    return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  }
  if (error instanceof ConfigError) {
    for (const problem of error.problems) say(`${error.source}: ${problem}`);
    return ExitCode.usage;
  }
  if (error instanceof CommandError) {
    say(error.message);
    return error.exitCode;
  }
  if (error instanceof AuthenticationError || error instanceof UnauthorizedError) {
    say(error.message);
    return ExitCode.auth;
  }
  if (error instanceof ForbiddenError) {
    say(error.message);
    return ExitCode.forbidden;
  }
  if (error instanceof NotFoundError) {
    say(error.message);
    return ExitCode.notFound;
  }
  if (error instanceof UnprocessableError) {
    say(error.message);
    return ExitCode.usage;
  }
  if (error instanceof UpstreamError) {
    say(error.message);
    return ExitCode.failed;
  }
  if (io.signal.aborted) {
    say('interrupted');
    return ExitCode.interrupted;
  }
  const message = error instanceof Error ? error.message : String(error);
  say(message);
  if (io.env.FLEETWATCH_DEBUG && error instanceof Error && error.stack) {
    io.stderr.write(`${secrets.scrub(error.stack)}\n`);
  }
  return ExitCode.failed;
}
