import { type DestinationStream, type Logger, pino } from 'pino';
import pretty from 'pino-pretty';
import { secrets as processSecrets, type SecretRegistry } from './secrets.js';

export type { Logger } from 'pino';

export interface LoggerOptions {
  level?: string;
  /** `auto` is human-readable on a terminal and JSON everywhere else. */
  format?: 'auto' | 'json' | 'pretty';
  /** Where lines go; standard error by default so standard output stays for command results. */
  destination?: DestinationStream;
  secrets?: SecretRegistry;
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
  const usePretty = format === 'pretty' || (format === 'auto' && process.stderr.isTTY === true);
  const destination =
    options.destination ??
    (usePretty
      ? pretty({
          destination: 2,
          colorize: process.stderr.isTTY === true,
          translateTime: 'SYS:HH:MM:ss.l',
          sync: true,
        })
      : pino.destination({ dest: 2, sync: true }));
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
