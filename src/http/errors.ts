import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { secrets } from '../log/secrets.js';
import { DeadLetterError } from '../notifiers/delivery/dead-letters.js';
import { oneLine, UpstreamError } from '../upstream/errors.js';

/**
 * Every error the API answers is `{ "error": { "code", "message" } }` (sometimes with `details`),
 * with a status that says whose problem it is: 400 (the request; the message names the field), 401
 * / 403 (auth), 404, 409 (the state does not allow it), 502 / 504 (the upstream fleet service), 503
 * (fleetwatch cannot do it right now), 500 (a bug: a generic message, the details only in the log).
 * Messages pass through the secret registry, so a secret that slipped into one is masked.
 *
 * The same shape for what the HTTP stack refuses before a route runs: a path that is not valid
 * percent-encoding (400), a path segment longer than `MAX_PATH_SEGMENT` (414), no route for the
 * path (404) or not for this method (405, with `Allow`), a body too large (413), not JSON (415) or
 * not parsable (400), and requests node's parser refuses (`clientErrorHandler`: 431, 408, 400).
 */

/** The longest path segment (a dead-letter id, a vehicle id) the router takes; longer is a 414. */
export const MAX_PATH_SEGMENT = 1_024;

/** The largest request body taken; larger is a 413. */
export const MAX_BODY_BYTES = 64 * 1024;

/** Sent with every answer, errors the HTTP stack writes itself included. */
export const ANSWER_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};

export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    /** An array value is sent as one header line per element (`WWW-Authenticate` challenges). */
    readonly headers: Readonly<Record<string, string | readonly string[]>> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function badRequest(message: string, details?: unknown): ApiError {
  return new ApiError(400, 'bad_request', message, details);
}

export function notFound(message: string): ApiError {
  return new ApiError(404, 'not_found', message);
}

export function conflict(code: string, message: string, details?: unknown): ApiError {
  return new ApiError(409, code, message, details);
}

export function unavailable(message: string): ApiError {
  return new ApiError(503, 'unavailable', message);
}

/**
 * An upstream failure as this API's answer. The caller's request was fine; fleetwatch's call to the
 * fleet service was not, so credentials the upstream refused are a 502 (never a 401/403, which would
 * read as "your token for this API is wrong"). 404 stays a 404 (no such vehicle, or one without power
 * control); time-outs are 504; everything else 502. A `Retry-After` the upstream sent is passed on.
 */
export function fromUpstream(error: UpstreamError): ApiError {
  const status =
    error.code === 'not_found'
      ? 404
      : error.code === 'timeout' || error.code === 'gateway_timeout'
        ? 504
        : 502;
  const headers: Record<string, string> = {};
  if (error.retryAfterMs !== undefined && status !== 404) {
    headers['retry-after'] = String(Math.max(1, Math.ceil(error.retryAfterMs / 1000)));
  }
  return new ApiError(
    status,
    status === 404 ? 'not_found' : `upstream_${error.code}`,
    error.message,
    error.status === undefined ? undefined : { upstreamStatus: error.status },
    headers,
  );
}

/** How much of a robot's own error detail an answer passes on. */
export const MAX_ROBOT_DETAIL_CHARS = 300;

/**
 * A robot gateway failure as this API's answer. Unlike `fromUpstream`, what the robot says about
 * the request itself is passed on with its own status, since the caller's request is what the
 * robot judged:
 *
 * | upstream | answer | code |
 * |---|---|---|
 * | 404 | 404 | `not_found` (no such robot or document, or not available to this client) |
 * | 403 | 403 | `upstream_forbidden` (the robot refused: a lease held by someone else, a device not granted) |
 * | 400, 409, 422 | the same | `upstream_bad_request`, `upstream_conflict`, `upstream_unprocessable` |
 * | anything else | as `fromUpstream` | 502 / 504 |
 *
 * `details` carries `upstreamStatus` and the robot's own words (`upstreamMessage`, at most
 * `MAX_ROBOT_DETAIL_CHARS`, one line, secrets masked).
 */
export function fromRobotUpstream(error: UpstreamError): ApiError {
  const passed = error.status === undefined ? undefined : ROBOT_PASSED_ON[error.status];
  if (error.code === 'forbidden' || passed !== undefined) {
    const status = error.code === 'forbidden' ? 403 : error.status!;
    const code = error.code === 'forbidden' ? 'upstream_forbidden' : passed!;
    const words = error.upstreamMessage && oneLine(error.upstreamMessage, MAX_ROBOT_DETAIL_CHARS);
    return new ApiError(status, code, error.message, {
      upstreamStatus: error.status,
      ...(words ? { upstreamMessage: words } : {}),
    });
  }
  return fromUpstream(error);
}

const ROBOT_PASSED_ON: Readonly<Record<number, string>> = {
  400: 'upstream_bad_request',
  409: 'upstream_conflict',
  422: 'upstream_unprocessable',
};

/** Dead-letter problems: unknown id or receiver → 404; no longer dead, ambiguous, disabled → 409. */
export function fromDeadLetter(error: DeadLetterError): ApiError {
  // The store's hints name CLI flags; say the same in this API's terms.
  const message = error.message
    .replace('name one with --receiver', 'name one with ?receiver=<name>')
    .replace(/`fleetwatch receiver enable ([^`]+)` first/, 'enable it first (fleetwatch receiver enable $1)');
  if (error.problem === 'not_found') return new ApiError(404, 'not_found', message);
  return new ApiError(409, error.problem, message);
}

/** Fastify's own client errors (body parsing, media type, size) keep their status. */
function fromFastify(error: FastifyError): ApiError | undefined {
  const status = error.statusCode;
  if (status === undefined || status < 400 || status >= 500) return undefined;
  if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') return badRequest('body: is not valid JSON');
  if (error instanceof SyntaxError) return badRequest(`body: is not valid JSON (${error.message})`);
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new ApiError(
      413,
      'payload_too_large',
      `body: is larger than ${MAX_BODY_BYTES / 1024} KiB, the most this API accepts`,
    );
  }
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return new ApiError(415, 'unsupported_media_type', 'body: send it as application/json');
  }
  if (error.code === 'FST_ERR_BAD_URL') {
    return badRequest('path: is not valid percent-encoding (encode each segment with encodeURIComponent)');
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return new ApiError(414, 'uri_too_long', `path: a segment is longer than ${MAX_PATH_SEGMENT} characters`);
  }
  return new ApiError(status, status === 400 ? 'bad_request' : `http_${status}`, error.message);
}

/** Maps anything thrown by a handler to the answer; undefined for an unexpected error (a 500). */
export function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof UpstreamError) return fromUpstream(error);
  if (error instanceof DeadLetterError) return fromDeadLetter(error);
  if (error !== null && typeof error === 'object' && 'statusCode' in error) {
    return fromFastify(error as FastifyError);
  }
  return undefined;
}

export function errorBody(code: string, message: string, details?: unknown): ErrorBody {
  return {
    error: { code, message: secrets.scrub(message), ...(details === undefined ? {} : { details }) },
  };
}

export function sendApiError(reply: FastifyReply, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.statusCode).send(errorBody(error.code, error.message, error.details));
}

/** The answer to a request node's HTTP parser refused: no route, no reply object, only the socket. */
function clientErrorAnswer(error: ConnectionError): ApiError {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return new ApiError(
      431,
      'headers_too_large',
      `the request line and headers are larger than ${maxHeaderSize} bytes (a long URL counts too)`,
    );
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new ApiError(408, 'request_timeout', 'the request did not arrive in time');
  }
  return badRequest(`the request is not valid HTTP/1.1 (${error.code ?? 'unreadable'})`);
}

/** fastify's `clientErrorHandler`: answers a refused request in the API's shape, then closes. */
export function clientErrorHandler(logger: Logger) {
  return (error: ConnectionError, socket: Socket): void => {
    // A reset connection has nobody left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const answer = clientErrorAnswer(error);
    logger.debug({ status: answer.statusCode, err: error.message }, 'http request refused');
    if (socket.writable) {
      const body = JSON.stringify(errorBody(answer.code, answer.message));
      const headers = {
        'content-type': 'application/json; charset=utf-8',
        ...ANSWER_HEADERS,
        connection: 'close',
        'content-length': String(Buffer.byteLength(body)),
      };
      socket.write(
        `HTTP/1.1 ${answer.statusCode} ${STATUS_CODES[answer.statusCode]}\r\n` +
          Object.entries(headers)
            .map(([name, value]) => `${name}: ${value}\r\n`)
            .join('') +
          `\r\n${body}`,
      );
    }
    socket.destroy(error);
  };
}

/**
 * fastify's `frameworkErrors`: a path it cannot decode, a segment too long. The reply does not go
 * through the server's hooks, so the headers every answer carries are set here.
 */
export function frameworkErrorHandler(logger: Logger) {
  const handle = errorHandler(logger);
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply =>
    handle(error, request, reply.headers(ANSWER_HEADERS));
}

/** The server's error handler: known errors as their answer, the rest as a 500 without the stack. */
export function errorHandler(logger: Logger) {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const known = toApiError(error);
    if (known) {
      if (known.statusCode >= 500) {
        logger.warn(
          {
            method: request.method,
            route: request.routeOptions.url,
            status: known.statusCode,
            err: known.message,
          },
          'API request failed',
        );
      }
      return sendApiError(reply, known);
    }
    logger.error(
      {
        method: request.method,
        route: request.routeOptions.url,
        err: error instanceof Error ? { message: error.message, stack: error.stack } : String(error),
      },
      'API request failed unexpectedly',
    );
    return reply
      .code(500)
      .send(errorBody('internal', 'fleetwatch could not answer this request; the error is in its log'));
  };
}
