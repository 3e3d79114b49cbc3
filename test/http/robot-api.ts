import type { LightMyRequestResponse } from 'fastify';
import type { HarnessOptions } from '../pollers/harness.js';
import { type AppHarness, appHarness, bearer, captureLogs, TOKEN } from './helpers.js';

/**
 * The API on the simulator with an API token, for the robot routes' tests: requests as a caller
 * sends them, the audit lines the server wrote, and how many requests reached the robots.
 */

export interface RobotApi {
  a: AppHarness;
  /** The first simulated robot. */
  robot: string;
  request(
    method: string,
    path: string,
    options?: { body?: unknown; token?: string | null; query?: Record<string, string> },
  ): Promise<LightMyRequestResponse>;
  /** Audit lines written since the previous call. */
  audits(): Array<Record<string, unknown>>;
  /** Requests the simulator's robot gateway answered since the previous call. */
  sent(): number;
  close(): Promise<void>;
}

export async function robotApi(harness: HarnessOptions = {}): Promise<RobotApi> {
  const logs = captureLogs();
  const a = await appHarness({ token: TOKEN, logger: logs.logger, harness });
  const robot = a.h.sim.control.state().robots[0]!.deviceId;
  let seen = 0;
  const sent = () => {
    const requests = a.h.sim.control.stats().requests;
    const count = Object.entries(requests)
      .filter(([operation]) => operation.startsWith('robot:'))
      .reduce((sum, [, byStatus]) => sum + Object.values(byStatus).reduce((n, m) => n + m, 0), 0);
    a.h.sim.control.resetStats();
    return count;
  };
  sent();
  return {
    a,
    robot,
    request(method, path, options = {}) {
      const token = options.token === undefined ? TOKEN : options.token;
      const body = options.body;
      return a.app.inject({
        method: method as 'GET',
        url: path,
        ...(options.query ? { query: options.query } : {}),
        headers: {
          ...(token === null ? {} : bearer(token)),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
    },
    audits() {
      const lines = logs.lines.slice(seen).map((line) => JSON.parse(line) as Record<string, unknown>);
      seen = logs.lines.length;
      return lines.filter((line) => line['audit'] === true);
    },
    sent,
    close: () => a.close(),
  };
}
