import type { Redis } from 'ioredis';
import { type Config, loadConfig } from '../config/index.js';
import { maskUrlPassword } from '../config/mask.js';
import { createLogger, type Logger } from '../log/logger.js';
import { secrets } from '../log/secrets.js';
import { closeQuietly, createProducerConnection, waitForReady } from '../queues/connection.js';
import { createUpstream, type Upstream } from '../upstream/index.js';
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

  /** A Redis connection for the length of `use`, with a one-line error when Redis cannot be reached. */
  async withRedis<T>(use: (redis: Redis, config: Config) => Promise<T>): Promise<T> {
    const config = this.config();
    const redis = createProducerConnection(config.redis.url, {
      name: 'fleetwatch-cli',
      logger: this.logger(),
    });
    try {
      try {
        await waitForReady(redis, { timeoutMs: 5_000, signal: this.io.signal });
      } catch {
        throw new Error(
          `cannot reach Redis at ${maskUrlPassword(config.redis.url)} (redis.url); is it running?`,
        );
      }
      return await use(redis, config);
    } finally {
      await closeQuietly(redis);
    }
  }

  async close(): Promise<void> {
    await this.#upstream?.close();
    this.#upstream = undefined;
  }
}
