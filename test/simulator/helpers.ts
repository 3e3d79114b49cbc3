import { type Simulator, startSimulator } from '../../src/simulator/index.js';

export interface Res {
  status: number;
  /** Parsed JSON, or the raw text when the body does not parse. */
  body: unknown;
  text: string;
  headers: Headers;
}

export async function call(
  url: string,
  init: {
    method?: string;
    token?: string;
    json?: unknown;
    body?: string;
    headers?: Record<string, string>;
    signal?: AbortSignal;
  } = {},
): Promise<Res> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers['authorization'] = `Bearer ${init.token}`;
  let body = init.body;
  if (init.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(init.json);
  }
  const res = await fetch(url, { method: init.method ?? 'GET', headers, body, signal: init.signal });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed, text, headers: res.headers };
}

export function tokenRequest(sim: Simulator, fields: Record<string, unknown> = {}): Promise<Res> {
  return call(`${sim.url}/oauth/token`, {
    method: 'POST',
    json: {
      client_id: 'fleetwatch-demo',
      client_secret: 'demo-secret',
      audience: `${sim.url}/`,
      grant_type: 'client_credentials',
      ...fields,
    },
  });
}

export async function getToken(
  sim: Simulator,
  clientId = 'fleetwatch-demo',
  secret = 'demo-secret',
): Promise<string> {
  const res = await tokenRequest(sim, { client_id: clientId, client_secret: secret });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${res.text}`);
  return (res.body as { access_token: string }).access_token;
}

/** Polls until `check` returns a value other than undefined; fails after `timeoutMs`. */
export async function waitFor<T>(
  check: () => Promise<T | undefined> | T | undefined,
  { timeoutMs = 5000, intervalMs = 20, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export type Envelope<T = unknown> = { status: string; message?: string; data: T };
export const data = <T>(res: Res) => (res.body as Envelope<T>).data;

/** The simulator's three robot-test clients: the demo client, `operator-b` (only `otherRobots`) and one forbidden. */
export interface RobotTestTokens {
  token: string;
  other: string;
  forbidden: string;
}

/** Starts a simulator of `robots` robots (no vehicles) with the robot-test clients, and gets their tokens. */
export async function startRobotSimulator(
  seed: number,
  robots: number,
  otherRobots: string[],
): Promise<{ sim: Simulator; tokens: RobotTestTokens }> {
  const sim = await startSimulator({
    seed,
    vehicles: 0,
    robots,
    clients: [
      { id: 'fleetwatch-demo', secret: 'demo-secret' },
      { id: 'operator-b', secret: 's', robots: otherRobots },
      { id: 'banned', secret: 's', forbidden: true },
    ],
  });
  const tokens = {
    token: await getToken(sim),
    other: await getToken(sim, 'operator-b', 's'),
    forbidden: await getToken(sim, 'banned', 's'),
  };
  return { sim, tokens };
}
