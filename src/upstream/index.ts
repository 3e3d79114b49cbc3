import type { Logger } from 'pino';
import { ApiTransport } from './api.js';
import type { UpstreamConfig } from './config.js';
import { type FleetClient, HttpFleetClient } from './fleet-client.js';
import { HttpClient, type RequestObserver } from './http.js';
import { HttpRobotClient, type RobotClient } from './robot-client.js';
import { ClientCredentialsTokenProvider, type TokenProvider } from './token-provider.js';

export { ApiTransport, statusError, upstreamMessageOf } from './api.js';
export * from './errors.js';
export { type FleetClient, HttpFleetClient, type PowerAcceptance, powerReached } from './fleet-client.js';
export {
  type AuthAttempt,
  type CallOptions,
  HttpClient,
  type HttpMethod,
  type HttpRequest,
  type HttpResponse,
  type RequestInfo,
  type RequestObserver,
  USER_AGENT,
} from './http.js';
export * from './list-elements.js';
export { UPSTREAM_NAMES, type UpstreamName, upstreamOf } from './names.js';
export { FLEET_OPERATIONS, type FleetOperation, TOKEN_OPERATION } from './operations/fleet.js';
export {
  type GatewayOperation,
  ROBOT_OPERATIONS,
  type RobotOperation,
  type RobotOperationName,
} from './operations/robot.js';
export * from './operations/types.js';
export {
  backoffDelay,
  RETRY_BUDGET_TOKENS,
  RetryBudget,
  type RetryPolicy,
  retryDelay,
  retryPolicyOf,
  withRetry,
} from './retry.js';
export { HttpRobotClient, type RobotClient } from './robot-client.js';
export * from './schemas/robot.js';
export * from './schemas/token.js';
export * from './schemas/v1.js';
export { Semaphore } from './semaphore.js';
export { ClientCredentialsTokenProvider, type TokenProvider } from './token-provider.js';

export interface UpstreamOptions {
  config: UpstreamConfig;
  logger?: Logger;
  /** Told about every HTTP exchange (operation, status or `timeout`/`network`, duration), for metrics. */
  observer?: RequestObserver;
  /** Clock for token lifetimes, in milliseconds; `Date.now` by default. */
  now?: () => number;
}

export interface Upstream {
  fleet: FleetClient;
  robots: RobotClient;
  tokens: TokenProvider;
  /** Closes the connection pools (waits for requests in flight). Safe to call twice. */
  close(): Promise<void>;
}

/** Wires the upstream client: one HTTP agent and in-flight cap, one token cache, both API clients. */
export function createUpstream(options: UpstreamOptions): Upstream {
  const { config } = options;
  const logger = options.logger?.child({ component: 'upstream' });
  const http = new HttpClient(config.http, { logger, observer: options.observer });
  const tokens = new ClientCredentialsTokenProvider({ config, http, logger, now: options.now });
  const api = new ApiTransport(http, tokens);
  let closing: Promise<void> | undefined;
  return {
    fleet: new HttpFleetClient({ config, api, logger }),
    robots: new HttpRobotClient({ config, api, logger }),
    tokens,
    close: () => {
      closing ??= http.close();
      return closing;
    },
  };
}
