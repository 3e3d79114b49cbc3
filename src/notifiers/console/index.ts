import type { NotifierFactory } from '../types.js';
import { type ConsoleReceiverConfig, consoleReceiverSchema, maskConsoleConfig } from './config.js';
import { ConsoleNotifier } from './console-notifier.js';

export { type ConsoleReceiverConfig, consoleReceiverSchema, maskConsoleConfig } from './config.js';
export { ConsoleNotifier, type ConsoleNotifierOptions, useColor } from './console-notifier.js';
export { type ConsoleFormatOptions, formatNotification } from './format.js';

/** The `console` receiver kind: readable lines on this process's standard output (or error). */
export const consoleNotifierFactory: NotifierFactory<ConsoleReceiverConfig> = {
  kind: 'console',
  configSchema: consoleReceiverSchema,
  create: (config, deps) => new ConsoleNotifier(config, deps),
  mask: maskConsoleConfig,
};
