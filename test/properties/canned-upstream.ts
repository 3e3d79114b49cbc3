import { ApiTransport } from '../../src/upstream/api.js';
import { upstreamSchema } from '../../src/upstream/config.js';
import { HttpFleetClient } from '../../src/upstream/fleet-client.js';
import { HttpClient, type HttpResponse } from '../../src/upstream/http.js';
import { HttpRobotClient } from '../../src/upstream/robot-client.js';

/**
 * The real /v1 and robot clients over a transport that answers every request with a canned
 * response, so a property can feed them thousands of bodies without a socket: everything from the
 * status check to the schema runs as in production. No retries, so a failure is the first answer's.
 */

class CannedTransport extends ApiTransport {
  response: HttpResponse = { status: 200, headers: {}, body: '', durationMs: 0 };

  override async send(): Promise<HttpResponse> {
    return this.response;
  }
}

const config = upstreamSchema.parse({
  base_url: 'http://fleet.invalid',
  robot_base_url: 'http://robots.invalid',
  auth_url: 'http://auth.invalid',
  client_id: 'properties',
  client_secret: 'not-a-secret',
  http: { retries: 0 },
});

export function cannedUpstream() {
  // Never sends anything: the transport above answers instead.
  const http = new HttpClient(config.http);
  const api = new CannedTransport(http, {
    getToken: async () => 'token',
    invalidate: () => {},
    expired: () => {},
  });
  return {
    fleet: new HttpFleetClient({ config, api }),
    robots: new HttpRobotClient({ config, api }),
    /** Sets what every request gets back. */
    answer(body: string, status = 200, headers: HttpResponse['headers'] = {}): void {
      api.response = { status, headers, body, durationMs: 0 };
    },
    close: () => http.close(),
  };
}

export type CannedUpstream = ReturnType<typeof cannedUpstream>;

/** The call's value, or what it rejected with (never thrown synchronously past this point). */
export async function settle<T>(
  call: () => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await call() };
  } catch (error) {
    return { ok: false, error };
  }
}
