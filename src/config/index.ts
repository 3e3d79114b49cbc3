import type { SecretRegistry } from '../log/secrets.js';
import { CONFIG_ENV, ConfigError, loadConfigFile, parseConfig } from './load.js';
import { registerConfigSecrets } from './mask.js';
import type { Config } from './schema.js';

export { maskConfig } from './mask.js';
export type { Config, HttpLimits, RedisConfig, UpstreamConfig } from './schema.js';
export { configSchema } from './schema.js';
export { CONFIG_ENV, ConfigError, parseConfig };

/** The config path from `--config`, else FLEETWATCH_CONFIG, else `fleetwatch.yaml` in the working folder. */
export function configPath(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return flag ?? env[CONFIG_ENV] ?? 'fleetwatch.yaml';
}

/** Reads, interpolates and validates the config, and registers its secrets for scrubbing. */
export function loadConfig(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  registry: SecretRegistry,
): Config {
  const config = loadConfigFile(configPath(flag, env), env);
  registerConfigSecrets(config, registry);
  return config;
}
