import { createRequire } from 'node:module';
import { type DestinationStream, type Logger, pino } from 'pino';
import type PinoPretty from 'pino-pretty';
import { secrets as processSecrets, type SecretRegistry } from './secrets.js';

export type { Logger } from 'pino';

/**
 * pino-pretty, required (it is CommonJS, so synchronously) only by a logger that prints for a
 * person: a daemon logging JSON never loads it (several MB of a small installation's memory).
 */
function prettyStream(): typeof PinoPretty {
  return createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
}

export interface LoggerOptions {
  level?: string;
  /** `auto` is human-readable on a terminal and JSON everywhere else. */
  format?: 'auto' | 'json' | 'pretty';
  /** Where lines go; standard error by default so standard output stays for command results. */
  destination?: DestinationStream;
  secrets?: SecretRegistry;
  /** Read for `NO_COLOR`; `process.env` by default. */
  env?: NodeJS.ProcessEnv;
}

/**
 * Whether lines to `stream` may be coloured: on a terminal, unless `NO_COLOR` asks for none
 * (no-color.org: set and not empty). The daemon's pretty log and the console receiver both ask here.
 */
export function colorAllowed(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return stream.isTTY === true;
}

/** Field names that hold a secret wherever they appear in a logged object. */
const SECRET_FIELDS = [
  'client_secret',
  'clientSecret',
  'access_token',
  'accessToken',
  'token',
  'authorization',
  'Authorization',
  'secret',
  'secrets',
  'webhook_url',
  'webhookUrl',
];
const REDACT_PATHS = SECRET_FIELDS.flatMap((field) => [field, `*.${field}`, `*.headers.${field}`]);

export function createLogger(options: LoggerOptions = {}): Logger {
  const registry = options.secrets ?? processSecrets;
  const format = options.format ?? 'auto';
  const env = options.env ?? process.env;
  // Where lines go, and whether that is a terminal: standard error unless a destination is given.
  const terminal = (options.destination ?? process.stderr) as { isTTY?: boolean };
  const usePretty = format === 'pretty' || (format === 'auto' && terminal.isTTY === true);
  const destination = usePretty
    ? prettyStream()({
        destination: options.destination ?? 2,
        colorize: colorAllowed(terminal, env),
        translateTime: 'SYS:HH:MM:ss.l',
        sync: true,
      })
    : (options.destination ?? pino.destination({ dest: 2, sync: true }));
  return pino(
    {
      name: 'fleetwatch',
      level: options.level ?? 'info',
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      // A secret can also travel inside free text (an error message, a URL); scrub the whole line.
      hooks: { streamWrite: (line) => registry.scrub(line) },
    },
    destination,
  );
}
