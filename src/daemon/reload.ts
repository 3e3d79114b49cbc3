import type { Logger } from 'pino';
import { type ConfigDiff, configProblems, planReload, type ReloadResult } from '../config/reload.js';
import type { Config } from '../config/schema.js';
import type { PreparedReload } from '../lib/reload.js';

/**
 * Reloading the configuration of a running daemon (SIGHUP, `POST /-/reload`): the one way a new
 * config reaches the parts built from the old one.
 *
 * 1. `load` reads the file the daemon was started with again (same path, same `${ENV}`
 *    interpolation, full validation). A file that cannot be used is refused with the lines
 *    `fleetwatch config check` prints; nothing changes.
 * 2. `planReload` (config/reload.ts) compares it with the config in force: the live sections
 *    (routes, receivers, muting, entity tags, detector thresholds, `console.url`) are taken, every
 *    other section keeps its value in force and a change there is logged as needing a restart.
 * 3. Every part prepares its change (compiles routes, builds notifiers); if one cannot, what was
 *    built is discarded and nothing changes. Then each part commits, in the order given: delivery
 *    first (a new receiver's worker exists before anything is routed to it), then the
 *    notification step (routes, muting and queues, swapped between two events), the poll runner's
 *    thresholds, the metrics' queue list. The config in force (what the HTTP API reads) follows.
 *
 * One reload at a time: a second request waits for the first and then reads the file itself.
 * Once the daemon stops, reloads are refused.
 */

export type ReloadTrigger = 'signal' | 'api';

/** One part that takes a new config live. */
export interface ReloadPart {
  readonly name: string;
  prepare(config: Config, diff: ConfigDiff): PreparedReload;
}

export interface ConfigReloaderOptions {
  /** The config the daemon started with. */
  config: Config;
  /** Reads and validates the config file again; throws a `ConfigError` when it cannot be used. */
  load: () => Config;
  /** In commit order. */
  parts: readonly ReloadPart[];
  logger: Logger;
  /** Told the outcome of every reload (the reload metrics). */
  onResult?: (ok: boolean) => void;
}

export class ConfigReloader {
  readonly #options: ConfigReloaderOptions;
  readonly #logger: Logger;
  #config: Config;
  #last: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(options: ConfigReloaderOptions) {
    this.#options = options;
    this.#config = options.config;
    this.#logger = options.logger.child({ component: 'reload' });
  }

  /** The config in force: the one started with, with the live sections of the last reload. */
  get config(): Config {
    return this.#config;
  }

  /** Reloads after any reload under way; resolves with what it did (never rejects). */
  reload(trigger: ReloadTrigger): Promise<ReloadResult> {
    const next = this.#last.then(() => this.#reload(trigger));
    this.#last = next;
    return next;
  }

  /** Refuses further reloads and waits for the one under way. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#last;
  }

  async #reload(trigger: ReloadTrigger): Promise<ReloadResult> {
    if (this.#closed) return this.#report(refused('failed', ['fleetwatch is stopping; not reloaded']));
    this.#logger.info({ trigger }, 'reloading the configuration');
    let loaded: Config;
    try {
      loaded = this.#options.load();
    } catch (error) {
      return this.#report(refused('invalid', configProblems(error)));
    }
    const { diff, config } = planReload(this.#config, loaded);
    if (diff.restart.length > 0) {
      this.#logger.warn(
        { needsRestart: diff.restart },
        `needs a restart: ${diff.restart.join(', ')} (the values in force are kept until then)`,
      );
    }
    if (diff.live.length === 0) {
      return this.#report({
        ok: true,
        status: 'unchanged',
        changed: [],
        receivers: diff.receivers,
        needsRestart: diff.restart,
      });
    }

    const prepared: PreparedReload[] = [];
    for (const part of this.#options.parts) {
      try {
        prepared.push(part.prepare(config, diff));
      } catch (error) {
        await Promise.allSettled(prepared.map((change) => change.discard?.()));
        return this.#report(refused('failed', [`${part.name}: ${(error as Error).message}`]));
      }
    }
    const failures: string[] = [];
    for (const [index, change] of prepared.entries()) {
      try {
        await change.commit();
      } catch (error) {
        failures.push(`${this.#options.parts[index]?.name}: ${(error as Error).message}`);
      }
    }
    // Committed parts run the new config even when another failed: that is what is in force now.
    this.#config = config;
    if (failures.length > 0) return this.#report(refused('failed', failures));
    return this.#report({
      ok: true,
      status: 'reloaded',
      changed: diff.live,
      receivers: diff.receivers,
      needsRestart: diff.restart,
    });
  }

  #report(result: ReloadResult): ReloadResult {
    try {
      this.#options.onResult?.(result.ok);
    } catch (error) {
      this.#logger.debug({ err: (error as Error).message }, 'reload hook failed');
    }
    if (!result.ok) {
      this.#logger.error(
        { problems: result.problems },
        result.reason === 'invalid'
          ? 'config reload refused: the file is invalid; the config in force is kept'
          : 'config reload failed',
      );
    } else if (result.status === 'unchanged') {
      this.#logger.info({ needsRestart: result.needsRestart }, 'configuration reloaded: nothing to change');
    } else {
      this.#logger.info(
        { changed: result.changed, receivers: result.receivers, needsRestart: result.needsRestart },
        'configuration reloaded',
      );
    }
    return result;
  }
}

function refused(reason: 'invalid' | 'failed', problems: string[]): ReloadResult {
  return { ok: false, reason, problems };
}
