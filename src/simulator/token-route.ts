import { type Ctx, parseJson, preflight, readBody, type SimDeps, sendJson } from './http.js';

function oauthError(status: number): { error: string; error_description: string } {
  if (status === 401) return { error: 'invalid_client', error_description: 'client authentication failed' };
  if (status === 403) return { error: 'access_denied', error_description: 'access denied' };
  if (status === 429) return { error: 'too_many_requests', error_description: 'slow down' };
  if (status === 503) return { error: 'temporarily_unavailable', error_description: 'try again later' };
  if (status >= 500) return { error: 'server_error', error_description: 'unexpected failure' };
  return { error: 'invalid_request', error_description: 'invalid request' };
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * `POST /oauth/token`, client-credentials grant with a JSON body (OAuth 2.0 error JSON on failure).
 * The audience must be the base URL with a trailing slash: the simulator's url, or the address
 * the caller reached it by (Host header), so `localhost` works too.
 */
export async function handleToken(ctx: Ctx, deps: SimDeps): Promise<void> {
  ctx.operation = 'token';
  if (ctx.method !== 'POST') {
    ctx.res.setHeader('allow', 'POST');
    sendJson(ctx, 405, { error: 'invalid_request', error_description: 'use POST' });
    return;
  }
  const body = await readBody(ctx.req);
  const decision = await preflight(ctx, deps, 'token', undefined, null, oauthError);
  if (!decision) return;
  const fail = (status: number, error: string, error_description: string) =>
    sendJson(ctx, status, { error, error_description });

  if (!/^application\/json\b/i.test(ctx.req.headers['content-type'] ?? '')) {
    deps.stats.violation('token', 'client', 'token request without content-type: application/json');
    return fail(400, 'invalid_request', 'content-type must be application/json');
  }
  const parsed = body.tooLarge ? { ok: false as const } : parseJson(body.text);
  if (!parsed.ok || !parsed.value || typeof parsed.value !== 'object' || Array.isArray(parsed.value)) {
    return fail(400, 'invalid_request', 'body must be a JSON object');
  }
  const fields = parsed.value as Record<string, unknown>;
  const grantType = str(fields['grant_type']);
  if (grantType === undefined) return fail(400, 'invalid_request', 'grant_type is required');
  if (grantType !== 'client_credentials') {
    return fail(400, 'unsupported_grant_type', 'only client_credentials is supported');
  }
  const clientId = str(fields['client_id']);
  const secret = str(fields['client_secret']);
  const client = clientId && secret !== undefined ? deps.tokens.authenticate(clientId, secret) : undefined;
  if (!client) return fail(401, 'invalid_client', 'unknown client or wrong secret');
  const audience = str(fields['audience']);
  if (audience === undefined) return fail(400, 'invalid_request', 'audience is required');
  const viaHost = ctx.req.headers.host ? `http://${ctx.req.headers.host}/` : undefined;
  if (audience !== `${deps.url}/` && audience !== viaHost) {
    return fail(403, 'access_denied', `unknown audience; expected ${deps.url}/`);
  }
  sendJson(ctx, 200, deps.tokens.issue(client, ctx.now), decision.malformed);
}
