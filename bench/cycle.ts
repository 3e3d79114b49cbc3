import { request } from 'undici';
import { CLIENT_ID, CLIENT_SECRET } from './simulator.js';

/**
 * What one poll cycle asks the fleet service, as plain paths: the same requests fleetwatch makes
 * with every poller on the cycle interval. The references replay exactly these.
 */

export const ROBOT_SIGNALS = [
  'health',
  'platform-feedback',
  'teleop-control/status',
  'active_site',
  'loaded_route',
  'loaded_zone_set',
] as const;

export interface FleetIds {
  vehicles: string[];
  robots: string[];
}

/** A bearer token from the simulator's issuer, the way fleetwatch asks for one. */
export async function fetchToken(baseUrl: string): Promise<string> {
  const res = await request(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      audience: `${baseUrl}/`,
      grant_type: 'client_credentials',
    }),
  });
  const body = (await res.body.json()) as { access_token?: string };
  if (res.statusCode !== 200 || !body.access_token)
    throw new Error(`token request answered ${res.statusCode}`);
  return body.access_token;
}

async function getJson(url: string, token: string): Promise<unknown> {
  const res = await request(url, { headers: { authorization: `Bearer ${token}` } });
  if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}`);
  return res.body.json();
}

export async function listIds(baseUrl: string, token: string): Promise<FleetIds> {
  const vehicles = (await getJson(`${baseUrl}/v1/vehicles`, token)) as { data: Array<{ id: string }> };
  const robots = (await getJson(`${baseUrl}/api/robots`, token)) as { data: Array<{ device_id: string }> };
  return { vehicles: vehicles.data.map((v) => v.id), robots: robots.data.map((r) => r.device_id) };
}

export function robotSignalPath(deviceId: string, signal: string): string {
  return `/api/platform/${encodeURIComponent(deviceId)}/v2/${signal}`;
}

/** Every path of one cycle, in the order fleetwatch's pollers would ask them. */
export function cyclePaths(ids: FleetIds): string[] {
  const paths = ['/v1/vehicles', '/api/robots'];
  for (const id of ids.vehicles) paths.push(`/v1/vehicles/${encodeURIComponent(id)}/power/status`);
  for (const signal of ROBOT_SIGNALS) {
    for (const deviceId of ids.robots) paths.push(robotSignalPath(deviceId, signal));
  }
  return paths;
}
