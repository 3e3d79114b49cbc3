import { REDACTED, type SecretRegistry } from '../log/secrets.js';
import { maskReceivers, receiverSecrets } from '../notifiers/receivers/kinds.js';
import type { Config } from './schema.js';

/** The effective config as `config check` prints it: every secret replaced, everything else as used. */
export function maskConfig(config: Config): Config {
  return {
    ...config,
    upstream: { ...config.upstream, client_secret: REDACTED },
    redis: {
      ...config.redis,
      url: maskUrlPassword(config.redis.url),
      ...(config.redis.cluster
        ? { cluster: { nodes: config.redis.cluster.nodes.map(maskUrlPassword) } }
        : {}),
    },
    receivers: maskReceivers(config.receivers),
    http: {
      ...config.http,
      ...(config.http.api_token === undefined ? {} : { api_token: REDACTED }),
      tokens: config.http.tokens.map((entry) => ({ ...entry, token: REDACTED })),
    },
  };
}

/**
 * Hands every secret in the config to the registry that scrubs logs and error messages: the
 * upstream client secret, the Redis password, the API tokens, and each receiver's (its kind says
 * which values those are).
 */
export function registerConfigSecrets(config: Config, registry: SecretRegistry): void {
  registry.add(config.upstream.client_secret);
  registry.add(urlPassword(config.redis.url));
  for (const node of config.redis.cluster?.nodes ?? []) registry.add(urlPassword(node));
  registry.add(config.http.api_token);
  for (const entry of config.http.tokens) registry.add(entry.token);
  for (const secret of receiverSecrets(config.receivers)) registry.add(secret);
}

function urlPassword(url: string): string | undefined {
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}

/** Where Redis is, for people: the URL, or `cluster <url>, <url>, …`; passwords masked. */
export function describeRedisTarget(redis: {
  url: string;
  cluster?: { nodes: readonly string[] } | undefined;
}): string {
  return redis.cluster
    ? `cluster ${redis.cluster.nodes.map(maskUrlPassword).join(', ')}`
    : maskUrlPassword(redis.url);
}

export function maskUrlPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = REDACTED;
    // The URL encodes the brackets; people read `[REDACTED]`.
    return parsed.toString().replace(encodeURIComponent(REDACTED), REDACTED);
  } catch {
    return url;
  }
}
