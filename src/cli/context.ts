import { type Config, loadConfig } from '../config/index.js';
import { describeRedisTarget } from '../config/mask.js';
import {
  closeQuietly,
  createProducerConnection,
  type RedisClient,
  redisEndpoint,
  waitForReady,
} from '../lib/redis-connection.js';
import { classifyRedisError, describeRefusal, isMissingDatabase } from '../lib/redis-health.js';
import { createLogger, type Logger } from '../log/logger.js';
import { secrets } from '../log/secrets.js';
import { createUpstream, type Upstream } from '../upstream/index.js';
import { CommandError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import type { CliIo } from './io.js';

export interface GlobalOptions {
  config?: string;
  logLevel?: string;
}

/** What a command needs, made on first use: a command that never talks upstream never reads the config. */
export class CliContext {
  readonly io: CliIo;
  /** Set by a command that finished without throwing but did not succeed (a --wait that timed out). */
  exitCode: number = ExitCode.ok;
  readonly #options: () => GlobalOptions;
  #config: Config | undefined;
  #logger: Logger | undefined;
  #upstream: Upstream | undefined;

  constructor(io: CliIo, options: () => GlobalOptions) {
    this.io = io;
    this.#options = options;
  }

  config(): Config {
    this.#config ??= loadConfig(this.#options().config, this.io.env, secrets);
    return this.#config;
  }

  /**
   * The config file read again, as `config()` first read it (the same path, the same environment),
   * for a reload of `run`; throws a `ConfigError` when it cannot be used now.
   */
  readConfigAgain(): Config {
    return loadConfig(this.#options().config, this.io.env, secrets);
  }

  /**
   * The logger. A long-running command (`run`, `simulate`) logs at the configured level; a
   * one-shot command reports through its own output and exit status, so it logs only errors
   * unless `--log-level` says otherwise.
   */
  logger(kind: 'one-shot' | 'long-running' = 'one-shot'): Logger {
    if (!this.#logger) {
      const fromConfig = this.#config?.log;
      const configured = kind === 'long-running' ? (fromConfig?.level ?? 'info') : 'error';
      this.#logger = createLogger({
        level: this.#options().logLevel ?? configured,
        format: fromConfig?.format ?? 'auto',
      });
    }
    return this.#logger;
  }

  upstream(): Upstream {
    if (!this.#upstream) {
      const config = this.config();
      this.#upstream = createUpstream({ config: config.upstream, logger: this.logger() });
    }
    return this.#upstream;
  }

  /**
   * A Redis connection for the length of `use`, with a one-line error when Redis cannot be reached,
   * and a configuration error (exit 2) when it refuses the credentials of `redis.url` (a wrong
   * password, none where one is needed, or an ACL that denies the user a command) or has no
   * database of its number.
   */
  async withRedis<T>(use: (redis: RedisClient, config: Config) => Promise<T>): Promise<T> {
    const config = this.config();
    const target = describeRedisTarget(config.redis);
    const refused = (error: unknown) =>
      classifyRedisError(error) === 'authentication' || isMissingDatabase(error);
    const redis = createProducerConnection(redisEndpoint(config.redis), {
      name: 'fleetwatch-cli',
      logger: this.logger(),
    });
    try {
      try {
        await waitForReady(redis, { timeoutMs: 5_000, signal: this.io.signal, failOn: refused });
      } catch (error) {
        if (refused(error)) throw new CommandError(describeRefusal(error, target), ExitCode.usage);
        throw new Error(
          `cannot reach Redis at ${target} (${config.redis.cluster ? 'redis.cluster' : 'redis.url'}); is it running?`,
        );
      }
      return await use(redis, config);
    } catch (error) {
      if (refused(error)) throw new CommandError(describeRefusal(error, target), ExitCode.usage);
      throw error;
    } finally {
      await closeQuietly(redis);
    }
  }

  async close(): Promise<void> {
    await this.#upstream?.close();
    this.#upstream = undefined;
  }
}
