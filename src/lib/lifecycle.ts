import type { Logger } from 'pino';

/**
 * One part of a long-running process (a worker, a server, a set of connections). Parts are
 * started in the order they are listed and stopped in the reverse order, so a part is listed
 * after everything it uses and stops before any of it.
 */
export interface Component {
  readonly name: string;
  /** Sets the part running; does not wait for it to finish (a worker's loop runs until stopped). */
  start?(): void;
  /**
   * When given, `start` waits for it (a Redis connection's first `ready`: a part that reads Redis
   * on its own timer would otherwise fail its first read and warn about nothing). A part stopped
   * before then never starts; one whose wait fails never starts either. Its `stop` is called
   * either way, so it must be safe on a part that never ran.
   */
  after?: Promise<unknown>;
  /**
   * Stops the part. `remainingMs` is what is left of the shutdown grace when its turn comes (0 once
   * spent); a part that could hang bounds its own wait (`settlesWithin`, `closeWorker`).
   */
  stop?(remainingMs: number): unknown;
}

export interface LifecycleOptions {
  /** The shutdown grace: shared by the parts in stop order. */
  graceMs: number;
  logger?: Logger;
  /** Clock for the grace; `Date.now` by default. */
  now?: () => number;
}

export interface Lifecycle {
  /**
   * Starts every part in order. When one throws, the parts already started are stopped (in the
   * background, reverse order) and the error is passed on.
   */
  start(): void;
  /** Stops the started parts in reverse order; once (every call returns the same promise). */
  stop(): Promise<void>;
}

export function lifecycle(components: readonly Component[], options: LifecycleOptions): Lifecycle {
  const now = options.now ?? Date.now;
  const started: Component[] = [];
  let begun = false;
  let stopping: Promise<void> | undefined;

  async function stopAll(): Promise<void> {
    const from = now();
    const remaining = () => Math.max(0, options.graceMs - (now() - from));
    for (const component of [...started].reverse()) {
      const at = now();
      try {
        await component.stop?.(remaining());
        options.logger?.debug({ component: component.name, durationMs: now() - at }, 'stopped');
      } catch (error) {
        // One part failing to stop must not keep the others (connections above all) open.
        options.logger?.error(
          { component: component.name, err: error instanceof Error ? error.message : String(error) },
          'error while stopping',
        );
      }
    }
  }

  /** A part that waited: nothing is left to throw at, so a failing start is logged and stops all. */
  function startLater(component: Component): void {
    try {
      component.start?.();
    } catch (error) {
      options.logger?.error(
        { component: component.name, err: error instanceof Error ? error.message : String(error) },
        'could not start',
      );
      void stop();
    }
  }

  const stop = (): Promise<void> => {
    stopping ??= stopAll();
    return stopping;
  };

  return {
    start() {
      if (begun || stopping) throw new Error('a lifecycle is started once, and not after stopping');
      begun = true;
      for (const component of components) {
        if (component.after) {
          started.push(component);
          component.after.then(
            () => {
              if (!stopping) startLater(component);
            },
            () => {},
          );
          continue;
        }
        try {
          component.start?.();
        } catch (error) {
          void stop();
          throw error;
        }
        started.push(component);
      }
    },
    stop,
  };
}
