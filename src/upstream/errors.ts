import { classifyExchange, type Exchange } from '../lib/http-answer.js';
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

/** Every code an `UpstreamError` carries: what observation errors, metrics and config name. */
export const UPSTREAM_ERROR_CODES = [
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'unprocessable',
  'internal_server_error',
  'bad_gateway',
  'service_unavailable',
  'gateway_timeout',
  'unexpected_status',
  'timeout',
  'network',
  'invalid_payload',
  'authentication_failed',
] as const;

export type UpstreamErrorCode = (typeof UPSTREAM_ERROR_CODES)[number];

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
  /**
   * What a 404 means for this operation, in the spec's words, when it says more than "not found"
   * (`/v1`: `not found, not available to this client, or not power-capable`).
   */
  notFound?: string;
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

const TOKEN_OPERATION_ID = 'oauth_token';
const ACCESS_CODES: ReadonlySet<UpstreamErrorCode> = new Set([
  'unauthorized',
  'forbidden',
  'authentication_failed',
]);

/**
 * True when the failure is fleetwatch's access, not the addressed entity: any failure to obtain a
 * token (whatever the issuer answered: 4xx, 5xx, a time-out, an unreadable body), a 401 that the
 * re-authentication did not cure, a 403. The one place this is decided.
 */
export function isAccessFailure(error: UpstreamError): boolean {
  return error.operation === TOKEN_OPERATION_ID || ACCESS_CODES.has(error.code);
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

/** What each status with a type of its own is called, and how its message reads. */
const STATUS_ERRORS = {
  401: {
    code: 'unauthorized',
    says: (ctx) => `the upstream service rejected the bearer token${forSubject(ctx)}`,
  },
  403: {
    code: 'forbidden',
    says: (ctx) => {
      const subject = subjectOf(ctx);
      return `${subject ? `access to ${subject} is forbidden` : 'access is forbidden'} for this client`;
    },
  },
  404: {
    code: 'not_found',
    says: (ctx) => `${subjectOf(ctx) ?? 'resource'} ${ctx.notFound ?? 'not found'}`,
  },
  409: {
    code: 'conflict',
    says: (ctx) => `${subjectOf(ctx) ?? 'the upstream service'}: refused in its current state`,
  },
  422: {
    code: 'unprocessable',
    says: (ctx) => `the request${forSubject(ctx)} was rejected as invalid`,
  },
  500: { code: 'internal_server_error', says: (ctx) => `upstream internal server error${forSubject(ctx)}` },
  502: {
    code: 'bad_gateway',
    says: (ctx) => `upstream bad gateway (another service failed)${forSubject(ctx)}`,
  },
  503: {
    code: 'service_unavailable',
    says: (ctx) => `upstream service temporarily unavailable${forSubject(ctx)}`,
  },
  504: {
    code: 'gateway_timeout',
    says: (ctx) => `upstream gateway timeout (no answer in time)${forSubject(ctx)}`,
  },
} as const satisfies Record<number, { code: UpstreamErrorCode; says: (ctx: ErrorContext) => string }>;

type TypedStatus = keyof typeof STATUS_ERRORS;

/**
 * Whether a failure may go away by asking again: gateway trouble (502/503/504), or no answer at
 * all. An answered 408 is not: the spec lists no such status, so it is not the kind of trouble
 * the service says passes.
 */
function transient(exchange: Exchange): boolean {
  const kind = classifyExchange(exchange);
  return kind === 'gateway' || kind === 'network' || exchange === 'timeout';
}

/** The base class of the error of one typed status (a class each, so callers can tell them apart). */
function statusErrorClass(status: TypedStatus) {
  const { code, says } = STATUS_ERRORS[status];
  return class extends UpstreamError {
    constructor(ctx: ErrorContext, details?: StatusDetails) {
      super(`${says(ctx)}${tail(ctx, status)}`, {
        ...base(ctx, details),
        status,
        retryable: transient(status),
        code,
      });
    }
  };
}

export class UnauthorizedError extends statusErrorClass(401) {}
export class ForbiddenError extends statusErrorClass(403) {}
export class NotFoundError extends statusErrorClass(404) {}
/** The addressed thing's state does not allow the request (a robot's site in use, a room that exists). */
export class ConflictError extends statusErrorClass(409) {}
/** The request's body or parameters were refused as invalid; the upstream's details name the fields. */
export class UnprocessableError extends statusErrorClass(422) {}
export class InternalServerError extends statusErrorClass(500) {}
export class BadGatewayError extends statusErrorClass(502) {}
export class ServiceUnavailableError extends statusErrorClass(503) {}
export class GatewayTimeoutError extends statusErrorClass(504) {}

export class UnexpectedStatusError extends UpstreamError {
  constructor(ctx: ErrorContext, status: number, details?: StatusDetails) {
    super(`unexpected HTTP status ${status}${forSubject(ctx)}${tail(ctx, status)}`, {
      ...base(ctx, details),
      status,
      retryable: transient(status),
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
      retryable: transient('timeout'),
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
      retryable: transient('network'),
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

/**
 * The token issuer refused the client credentials (400/401/403 from `/oauth/token`). A 403 names
 * the audience asked for: the credentials were fine, the audience (`base_url` + `/`) was not.
 */
export class AuthenticationError extends UpstreamError {
  readonly clientId: string;

  constructor(clientId: string, status: number, oauthError?: string, audience?: string) {
    const why = oauthError ? `${status} ${oauthError}` : String(status);
    const asked = status === 403 && audience !== undefined ? ` for audience "${audience}"` : '';
    super(`authentication failed: the token issuer rejected client "${clientId}"${asked} (${why})`, {
      operation: TOKEN_OPERATION_ID,
      status,
      retryable: false,
      code: 'authentication_failed',
    });
    this.clientId = clientId;
  }
}

const GATEWAY_ERRORS = { 502: BadGatewayError, 503: ServiceUnavailableError, 504: GatewayTimeoutError };

/**
 * Maps a non-success HTTP status to its typed error, by the status's class:
 *
 * | class | error | retryable |
 * |---|---|---|
 * | `auth` | `UnauthorizedError` (401), `ForbiddenError` (403) | no |
 * | `not_found` | `NotFoundError` | no |
 * | `client_error` 409, 422 | `ConflictError`, `UnprocessableError` | no |
 * | `gateway` | `BadGatewayError`, `ServiceUnavailableError`, `GatewayTimeoutError` | yes |
 * | `server_error` | `InternalServerError` (500), else `UnexpectedStatusError` | no |
 * | any other (3xx, 408, 410, 429, other 4xx) | `UnexpectedStatusError` | no |
 *
 * No answer at all is `UpstreamTimeoutError` or `NetworkError` (both retryable), raised by the
 * HTTP client.
 */
export function errorForStatus(ctx: ErrorContext, status: number, details?: StatusDetails): UpstreamError {
  switch (classifyExchange(status)) {
    case 'auth':
      return status === 401 ? new UnauthorizedError(ctx, details) : new ForbiddenError(ctx, details);
    case 'not_found':
      return new NotFoundError(ctx, details);
    case 'gateway':
      return new GATEWAY_ERRORS[status as keyof typeof GATEWAY_ERRORS](ctx, details);
    case 'server_error':
      if (status === 500) return new InternalServerError(ctx, details);
      return new UnexpectedStatusError(ctx, status, details);
    case 'client_error':
      if (status === 409) return new ConflictError(ctx, details);
      if (status === 422) return new UnprocessableError(ctx, details);
      return new UnexpectedStatusError(ctx, status, details);
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
