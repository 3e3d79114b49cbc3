import type { Writable } from 'node:stream';
import { colorAllowed } from '../../../log/logger.js';
import type {
  DeliveryOptions,
  DeliveryOutcome,
  Notification,
  Notifier,
  NotifierDeps,
} from '../../notifier.js';
import type { ConsoleReceiverConfig } from './config.js';
import { formatNotification } from './format.js';

export interface ConsoleNotifierOptions {
  /** Where lines go; by default the configured `stream` of this process. */
  output?: Writable & { isTTY?: boolean };
  /** Environment read for NO_COLOR / FORCE_COLOR; `process.env` by default. */
  env?: NodeJS.ProcessEnv;
}

/** Whether to colour: `always`/`never` as configured; `auto` on a terminal unless NO_COLOR is set. */
export function useColor(
  setting: ConsoleReceiverConfig['color'],
  output: { isTTY?: boolean },
  env: NodeJS.ProcessEnv,
): boolean {
  if (setting !== 'auto') return setting === 'always';
  return colorAllowed(output, env);
}

/**
 * Prints each notification as readable lines (see `format.ts`). Writing to a stream of this
 * process is the whole delivery, so it is delivered unless the stream is gone (then retried: the
 * console may come back, as a reattached terminal does).
 */
export class ConsoleNotifier implements Notifier {
  readonly kind = 'console';
  readonly name: string;
  readonly #output: Writable;
  readonly #color: boolean;
  readonly #maxEvents: number;

  constructor(config: ConsoleReceiverConfig, _deps: NotifierDeps, options: ConsoleNotifierOptions = {}) {
    this.name = config.name;
    const output = options.output ?? (config.stream === 'stderr' ? process.stderr : process.stdout);
    this.#output = output;
    this.#color = useColor(config.color, output, options.env ?? process.env);
    this.#maxEvents = config.max_events;
  }

  async deliver(notification: Notification, _options: DeliveryOptions): Promise<DeliveryOutcome> {
    const text = formatNotification(notification, { color: this.#color, maxEvents: this.#maxEvents });
    if (this.#output.destroyed || !this.#output.writable) {
      return { kind: 'retry', reason: `the ${this.name} console stream is closed` };
    }
    return new Promise<DeliveryOutcome>((resolve) => {
      this.#output.write(text, (error) => {
        resolve(
          error
            ? { kind: 'retry', reason: `writing to the console failed: ${error.message}` }
            : { kind: 'delivered' },
        );
      });
    });
  }
}
