import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ClientGrant, TokenIssuer } from './auth.js';
import type { Behaviours } from './behaviours.js';
import type { FaultDecision, FaultInjector, Surface } from './faults.js';
import type { FleetState } from './fleet-state.js';
import type { Stats } from './stats.js';

/** One request in flight. `operation` names it in the stats. */
export interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  path: string;
  /** Raw query string without '?', '' when none. */
  query: string;
  now: number;
  operation: string;
  /** A slow-body fault drawn for this request: its answer's body takes this long (ms) to send. */
  slowBodyMs?: number;
}

/** What the route modules share. */
export interface SimDeps {
  readonly url: string;
  fleet: FleetState;
  tokens: TokenIssuer;
  faults: FaultInjector;
  stats: Stats;
  behaviours: Behaviours;
  logger: Logger;
  /** Never answer this request (a time-out fault or a hanging robot). */
  hold(ctx: Ctx): void;
  /** Resolves false when the server closed meanwhile. */
  sleep(ms: number): Promise<boolean>;
}

const MAX_BODY = 1 << 20;

export function sendJson(ctx: Ctx, status: number, body: unknown, malformed = false): void {
  sendRaw(ctx, status, typeof body === 'string' ? body : JSON.stringify(body), malformed);
}

/** `text` is already JSON. A malformed answer cuts it in half, which never parses. */
export function sendRaw(ctx: Ctx, status: number, text: string, malformed = false): void {
  const { res } = ctx;
  if (res.headersSent || res.destroyed) return;
  const out = malformed ? text.slice(0, Math.max(1, Math.floor(text.length / 2))) : text;
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(out),
    'cache-control': 'no-store',
  });
  if (ctx.slowBodyMs) trickle(res, Buffer.from(out), ctx.slowBodyMs);
  else res.end(out);
}

/** Pieces a slow body is cut into: each gap stays well under a client's idle (between-chunks) timer. */
const SLOW_BODY_PIECES = 20;

/**
 * Writes `body` in even pieces spread over `totalMs`, the last one at the end. A client that gives
 * up closes the socket, which stops the trickle.
 */
function trickle(res: ServerResponse, body: Buffer, totalMs: number): void {
  const pieces = Math.max(1, Math.min(SLOW_BODY_PIECES, body.length));
  const size = Math.ceil(body.length / pieces);
  const gapMs = totalMs / pieces;
  let sent = 0;
  res.flushHeaders();
  const next = () => {
    if (res.destroyed) return;
    const piece = body.subarray(sent, sent + size);
    sent += piece.length;
    if (sent >= body.length) {
      res.end(piece);
      return;
    }
    res.write(piece);
    timer = setTimeout(next, gapMs);
  };
  let timer = setTimeout(next, gapMs);
  res.once('close', () => clearTimeout(timer));
}

export interface Body {
  bytes: number;
  text: string;
  /** Over the size limit; the rest was drained unread. */
  tooLarge: boolean;
}

export function hasBody(req: IncomingMessage): boolean {
  const len = req.headers['content-length'];
  return (len !== undefined && len !== '0') || req.headers['transfer-encoding'] !== undefined;
}

export function readBody(req: IncomingMessage, limit = MAX_BODY): Promise<Body> {
  if (!hasBody(req)) return Promise.resolve({ bytes: 0, text: '', tooLarge: false });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= limit) chunks.push(chunk);
    });
    req.on('end', () =>
      resolve({ bytes, text: Buffer.concat(chunks).toString('utf8'), tooLarge: bytes > limit }),
    );
    req.on('error', reject);
  });
}

export type JsonResult = { ok: true; value: unknown } | { ok: false };

export function parseJson(text: string): JsonResult {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

export function bearerToken(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (!h || h.length < 8 || h.slice(0, 7).toLowerCase() !== 'bearer ') return undefined;
  const token = h.slice(7).trim();
  return token === '' ? undefined : token;
}

/** 401 (no or bad token), 403 (forbidden client) or the caller's grant. */
export function authorise(ctx: Ctx, deps: SimDeps): ClientGrant | 401 | 403 {
  const token = bearerToken(ctx.req);
  const client = token === undefined ? undefined : deps.tokens.verify(token, ctx.now);
  if (!client) return 401;
  return client.forbidden ? 403 : client;
}

/**
 * Applies latency and the drawn fault. Returns the decision when the operation should run, or
 * undefined when the request has been answered (error status) or is being held (time-out).
 */
export async function preflight(
  ctx: Ctx,
  deps: SimDeps,
  surface: Surface,
  target: string | undefined,
  allowed: ReadonlySet<number> | null,
  errorBody: (status: number) => unknown,
): Promise<FaultDecision | undefined> {
  const decision = deps.faults.decide(surface, target, allowed);
  if (decision.delayMs > 0) {
    deps.stats.fault('delayed');
    if (!(await deps.sleep(decision.delayMs))) return undefined;
    ctx.now = Date.now();
  }
  if (decision.outcome === 'timeout') {
    deps.stats.fault('timeout');
    deps.hold(ctx);
    return undefined;
  }
  if (typeof decision.outcome === 'number') {
    deps.stats.fault('status');
    sendJson(ctx, decision.outcome, errorBody(decision.outcome));
    return undefined;
  }
  if (decision.malformed) deps.stats.fault('malformed');
  if (decision.slowBodyMs > 0) {
    deps.stats.fault('slowBody');
    ctx.slowBodyMs = decision.slowBodyMs;
  }
  return decision;
}

export function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
