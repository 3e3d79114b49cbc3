import { describe, expect, it } from 'vitest';
import type { UpstreamWindow } from '../../src/events/detectors/upstream-health.js';
import { countExchange } from '../../src/pollers/upstream-windows.js';
import type { RequestInfo } from '../../src/upstream/http.js';

/** The upstream windows' counting rule for the 401 that re-authentication recovers. */

type Exchange = Pick<RequestInfo, 'operation' | 'status' | 'auth'>;

function count(exchanges: Exchange[]): UpstreamWindow {
  const counts = { requests: 0, authFailures: 0, serverErrors: 0, timeouts: 0 };
  for (const exchange of exchanges) countExchange(counts, exchange);
  return counts;
}

describe('countExchange and the 401 rule', () => {
  it('a 401 that a fresh token recovered is a request, not an authentication failure', () => {
    expect(
      count([
        { operation: 'list_vehicles', status: 401, auth: 'first' },
        { operation: 'oauth_token', status: 200 },
        { operation: 'list_vehicles', status: 200, auth: 'renewed' },
      ]),
    ).toEqual({ requests: 3, authFailures: 0, serverErrors: 0, timeouts: 0 });
  });

  it('a 401 the fresh token did not recover counts once', () => {
    expect(
      count([
        { operation: 'robot.health', status: 401, auth: 'first' },
        { operation: 'oauth_token', status: 200 },
        { operation: 'robot.health', status: 401, auth: 'renewed' },
      ]),
    ).toEqual({ requests: 3, authFailures: 1, serverErrors: 0, timeouts: 0 });
  });

  it('403, and 401 from a caller that does not say which sending it was, still count', () => {
    expect(
      count([
        { operation: 'list_vehicles', status: 403, auth: 'first' },
        { operation: 'list_vehicles', status: 401 },
        { operation: 'oauth_token', status: 400 },
      ]),
    ).toEqual({ requests: 3, authFailures: 3, serverErrors: 0, timeouts: 0 });
  });
});
