import { backoffPolicy, type ExponentialBackoff } from '../../../lib/retry-policy.js';
import type { NotifierFactory } from '../../notifier.js';
import { type ConsoleReceiverConfig, consoleReceiverSchema, maskConsoleConfig } from './config.js';
import { ConsoleNotifier } from './console-notifier.js';

export { type ConsoleReceiverConfig, consoleReceiverSchema, maskConsoleConfig } from './config.js';
export { ConsoleNotifier, type ConsoleNotifierOptions, useColor } from './console-notifier.js';
export { type ConsoleFormatOptions, formatNotification } from './format.js';

/**
 * A console write fails only while the stream is gone (a detached terminal may come back):
 * exponential back-off with full jitter, base 1 s, doubling, capped at 5 min, 8 attempts.
 */
export const CONSOLE_BACKOFF: Readonly<ExponentialBackoff> = {
  baseMs: 1_000,
  capMs: 5 * 60_000,
  attempts: 8,
};

/** The `console` receiver kind: readable lines on this process's standard output (or error). */
export const consoleNotifierFactory: NotifierFactory<ConsoleReceiverConfig> = {
  kind: 'console',
  configSchema: consoleReceiverSchema,
  create: (config, deps) => new ConsoleNotifier(config, deps),
  mask: maskConsoleConfig,
  // It holds no secret.
  secrets: () => [],
  retryPolicy: (_config, overrides) => backoffPolicy(CONSOLE_BACKOFF, overrides),
};
