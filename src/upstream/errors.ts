import { secrets } from '../log/secrets.js';

/**
 * Typed failures of the upstream client. Every error names the operation (`list_vehicles`,
 * `robot.health`, ...) and, when there is one, the vehicle or device it addressed. Messages are a
 * single human line and never contain a header, a token or the client secret (they are scrubbed
 * through the secret registry as a last line of defence).
 *
 * `retryable` describes the failure, not the operation: a 502/503/504, a time-out or a network
 * error is transient, everything else (4xx, 500, unparseable payloads) will not get better by
 * asking again. Whether a particular call is retried automatically is decided by its client.
 */

export type UpstreamErrorCode =
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'internal_server_error'
  | 'bad_gateway'
  | 'service_unavailable'
  | 'gateway_timeout'
  | 'unexpected_status'
  | 'timeout'
  | 'network'
  | 'invalid_payload'
  | 'authentication_failed';

/** What a request was about: used to build error messages and to label logs and metrics. */
export interface ErrorContext {
  /** Stable operation name, e.g. `get_vehicle_power_status` or `robot.health`. */
  operation: string;
  /** The vehicle id or device id the request addressed, when there is one. */
  target?: string;
  /**
   * How to name what the request addressed in a sentence, e.g. `vehicle "v-9"` or
   * `site "north" on robot "dev/1"`. Falls back to the target.
   */
  subject?: string;
}

export interface UpstreamErrorInit extends ErrorContext {
  status?: number;
  retryable: boolean;
  code: UpstreamErrorCode;
  /** The message the upstream service put in its error body, already shortened. */
  upstreamMessage?: string;
  /** Milliseconds the upstream asked us to wait (Retry-After), when it said so. */
  retryAfterMs?: number;
  cause?: unknown;
}

const MAX_UPSTREAM_MESSAGE = 300;

/** Makes any text safe for a one-line error message: no line breaks, bounded, no secrets. */
export function oneLine(text: string, max = MAX_UPSTREAM_MESSAGE): string {
  const flat = secrets.scrub(text).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** True when every word of `extra` already stands in `message`. */
function repeats(message: string, extra: string): boolean {
  const words = message.toLowerCase();
  return extra
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .every((word) => word === '' || words.includes(word));
}

export class UpstreamError extends Error {
  readonly operation: string;
  readonly target: string | undefined;
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly code: UpstreamErrorCode;
  readonly upstreamMessage: string | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, init: UpstreamErrorInit) {
    // The upstream's own words add to ours unless they only repeat them ("vehicle not found").
    const upstream = init.upstreamMessage;
    const detail = upstream && !repeats(message, upstream) ? `: ${upstream}` : '';
    super(oneLine(`${message}${detail}`, 600), init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.operation = init.operation;
    this.target = init.target;
    this.status = init.status;
    this.retryable = init.retryable;
    this.code = init.code;
    this.upstreamMessage = init.upstreamMessage;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** Extra details a status error may carry. */
export interface StatusDetails {
  upstreamMessage?: string;
  retryAfterMs?: number;
}

function subjectOf(ctx: ErrorContext): string | undefined {
  return ctx.subject ?? (ctx.target === undefined ? undefined : `"${ctx.target}"`);
}

/** `for vehicle "v-9" ` style suffix, or nothing. */
function forSubject(ctx: ErrorContext): string {
  const subject = subjectOf(ctx);
  return subject ? ` for ${subject}` : '';
}

function tail(ctx: ErrorContext, what: string | number): string {
  return ` (${ctx.operation}: ${what})`;
}

function base(ctx: ErrorContext, details: StatusDetails | undefined) {
  return {
    operation: ctx.operation,
    target: ctx.target,
    upstreamMessage: details?.upstreamMessage,
    retryAfterMs: details?.retryAfterMs,
  };
}

export class UnauthorizedError extends UpstreamError {
  constructor(ctx: ErrorContext, details?: StatusDetails) {
    super(`the upstream service rejected the bearer token${forSubject(ctx)}${tail(ctx, 401)}`, {
      ...base(ctx, details),
      status: 401,
      retryable: false,
      code: 'unauthorized',
    });
  }
}

export class ForbiddenError extends UpstreamError {
  constructor(ctx: ErrorContext, details?: StatusDetails) {
    const subject = subjectOf(ctx);
    const what = subject ? `access to ${subject} is forbidden` : 'access is forbidden';
    super(`${what} for this client${tail(ctx, 403)}`, {
      ...base(ctx, details),
      status: 403,
      retryable: false,
      code: 'forbidden',
    });
  }
}

export class NotFoundError extends UpstreamError {
  constructor(ctx: ErrorContext, details?: StatusDetails) {
    const subject = subjectOf(ctx);
    super(`${subject ?? 'resource'} not found${tail(ctx, 404)}`, {
      ...base(ctx, details),
      status: 404,
      retryable: false,
      code: 'not_found',
    });
  }
}

export class InternalServerError extends UpstreamError {
  constructor(ctx: ErrorContext, details?: StatusDetails) {
    super(`upstream internal server error${forSubject(ctx)}${tail(ctx, 500)}`, {
      ...base(ctx, details),
      status: 500,
      retryable: false,
      code: 'internal_server_error',
    });
  }
}

export class BadGatewayError extends UpstreamError {
  constructor(ctx: ErrorContext, details?: StatusDetails) {
    super(`upstream bad gateway (another service failed)${forSubject(ctx)}${tail(ctx, 502)}`, {
      ...base(ctx, details),
      status: 502,
      retryable: true,
      code: 'bad_gateway',
    });
  }
}

export class ServiceUnavailableError extends UpstreamError {
  constructor(ctx: ErrorContext, details?: StatusDetails) {
    super(`upstream service temporarily unavailable${forSubject(ctx)}${tail(ctx, 503)}`, {
      ...base(ctx, details),
      status: 503,
      retryable: true,
      code: 'service_unavailable',
    });
  }
}

export class GatewayTimeoutError extends UpstreamError {
  constructor(ctx: ErrorContext, details?: StatusDetails) {
    super(`upstream gateway timeout (no answer in time)${forSubject(ctx)}${tail(ctx, 504)}`, {
      ...base(ctx, details),
      status: 504,
      retryable: true,
      code: 'gateway_timeout',
    });
  }
}

export class UnexpectedStatusError extends UpstreamError {
  constructor(ctx: ErrorContext, status: number, details?: StatusDetails) {
    super(`unexpected HTTP status ${status}${forSubject(ctx)}${tail(ctx, status)}`, {
      ...base(ctx, details),
      status,
      retryable: false,
      code: 'unexpected_status',
    });
  }
}

export class UpstreamTimeoutError extends UpstreamError {
  readonly timeoutMs: number | undefined;

  constructor(ctx: ErrorContext, timeoutMs?: number, cause?: unknown) {
    const within = timeoutMs === undefined ? 'in time' : `within ${timeoutMs} ms`;
    super(`no response${forSubject(ctx)} ${within}${tail(ctx, 'timeout')}`, {
      operation: ctx.operation,
      target: ctx.target,
      retryable: true,
      code: 'timeout',
      cause,
    });
    this.timeoutMs = timeoutMs;
  }
}

export class NetworkError extends UpstreamError {
  constructor(ctx: ErrorContext, reason: string, cause?: unknown) {
    super(`network error${forSubject(ctx)}: ${reason}${tail(ctx, 'network')}`, {
      operation: ctx.operation,
      target: ctx.target,
      retryable: true,
      code: 'network',
      cause,
    });
  }
}

export class InvalidPayloadError extends UpstreamError {
  /** A short description of what was wrong (zod issues, or "not JSON"); never the body itself. */
  readonly summary: string;

  constructor(ctx: ErrorContext, summary: string, status?: number) {
    const short = oneLine(summary, 300);
    super(`invalid response payload${forSubject(ctx)}${tail(ctx, status ?? 'payload')}: ${short}`, {
      operation: ctx.operation,
      target: ctx.target,
      status,
      retryable: false,
      code: 'invalid_payload',
    });
    this.summary = short;
  }
}

/** The token issuer refused the client credentials (400/401/403 from `/oauth/token`). */
export class AuthenticationError extends UpstreamError {
  readonly clientId: string;

  constructor(clientId: string, status: number, oauthError?: string) {
    const why = oauthError ? `${status} ${oauthError}` : String(status);
    super(`authentication failed: the token issuer rejected client "${clientId}" (${why})`, {
      operation: 'oauth_token',
      status,
      retryable: false,
      code: 'authentication_failed',
    });
    this.clientId = clientId;
  }
}

/** Maps a non-success HTTP status to its typed error. */
export function errorForStatus(ctx: ErrorContext, status: number, details?: StatusDetails): UpstreamError {
  switch (status) {
    case 401:
      return new UnauthorizedError(ctx, details);
    case 403:
      return new ForbiddenError(ctx, details);
    case 404:
      return new NotFoundError(ctx, details);
    case 500:
      return new InternalServerError(ctx, details);
    case 502:
      return new BadGatewayError(ctx, details);
    case 503:
      return new ServiceUnavailableError(ctx, details);
    case 504:
      return new GatewayTimeoutError(ctx, details);
    default:
      return new UnexpectedStatusError(ctx, status, details);
  }
}

/** Formats zod-style issues as `path: message; path: message; +N more`. */
export function summarizeIssues(
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>,
  max = 3,
): string {
  const shown = issues.slice(0, max).map((issue) => {
    const path = issue.path.map((part) => String(part)).join('.');
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  const more = issues.length > max ? `; +${issues.length - max} more` : '';
  return `${shown.join('; ')}${more}`;
}
