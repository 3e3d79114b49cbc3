/**
 * The upstreams fleetwatch talks to, and which one an operation of the client goes to: `token`
 * (the OAuth token issuer), `fleet` (the `/v1` vehicle API) and `robots` (the `/v2` robot gateway).
 * Each has its own share of what a call holds while it waits (in-flight slots here, poll jobs in
 * the pollers), so an outage of one never starves the others; its health is counted and judged
 * on its own too (pollers/upstream-windows.ts).
 */
export const UPSTREAM_NAMES = ['token', 'fleet', 'robots'] as const;
export type UpstreamName = (typeof UPSTREAM_NAMES)[number];

/** Which upstream an operation of the client talks to. */
export function upstreamOf(operation: string): UpstreamName {
  if (operation === 'oauth_token') return 'token';
  if (operation.startsWith('robot.')) return 'robots';
  return 'fleet';
}
