import type { z } from 'zod';
import { parseRetryAfter } from '../lib/retry-after.js';
import {
  type ErrorContext,
  errorForStatus,
  InvalidPayloadError,
  oneLine,
  summarizeIssues,
  type UpstreamError,
} from './errors.js';
import type { AuthAttempt, HttpClient, HttpMethod, HttpResponse } from './http.js';
import type { TokenProvider } from './token-provider.js';

export interface ApiRequest extends ErrorContext {
  method: HttpMethod;
  url: string;
  /** A JSON body; `undefined` sends no body and no content-type. */
  json?: unknown;
  signal?: AbortSignal;
  /** A retry of a call whose first attempt failed. */
  retry?: boolean;
}

/**
 * Authenticated requests: every call carries `Authorization: Bearer <token>`. A 401 invalidates
 * the token that was used and the request is sent exactly once more with a fresh token; a second
 * 401 is returned to the caller (who turns it into `UnauthorizedError`). A request answered 401 was
 * not processed, so this applies to writes too.
 *
 * Each sending tells the HTTP observer which it is (`AuthAttempt`): the first one's 401 is not
 * final, the second one's answer is, so a 401 that a fresh token recovered is no authentication
 * failure. When the fresh token is accepted (any answer but 401 or a 5xx, which says nothing about
 * the token), the refused one had expired, and the token provider is told so.
 */
export class ApiTransport {
  readonly #http: HttpClient;
  readonly #tokens: TokenProvider;

  constructor(http: HttpClient, tokens: TokenProvider) {
    this.#http = http;
    this.#tokens = tokens;
  }

  async send(request: ApiRequest): Promise<HttpResponse> {
    const token = await this.#tokens.getToken({ signal: request.signal });
    const first = await this.#sendWith(token, request, 'first');
    if (first.status !== 401) return first;
    this.#tokens.invalidate(token);
    const fresh = await this.#tokens.getToken({ signal: request.signal });
    const second = await this.#sendWith(fresh, request, 'renewed');
    if (second.status !== 401 && second.status < 500 && fresh !== token) this.#tokens.expired(token);
    return second;
  }

  /** A call's success answer could not be read (`RequestObserver.unreadable`). */
  unreadable(ctx: ErrorContext): void {
    this.#http.unreadable(ctx);
  }

  #sendWith(token: string, request: ApiRequest, auth: AuthAttempt): Promise<HttpResponse> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    let body: string | undefined;
    if (request.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.json);
    }
    return this.#http.send({
      method: request.method,
      url: request.url,
      operation: request.operation,
      target: request.target,
      subject: request.subject,
      headers,
      body,
      signal: request.signal,
      auth,
      retry: request.retry ? true : undefined,
    });
  }
}

const MAX_DETAIL_ITEMS = 3;

function describeDetail(detail: unknown): string | undefined {
  if (typeof detail === 'string') return detail;
  if (!Array.isArray(detail)) return undefined;
  const items = detail.slice(0, MAX_DETAIL_ITEMS).map((item: unknown) => {
    if (typeof item !== 'object' || item === null) return String(item);
    const { loc, msg } = item as { loc?: unknown; msg?: unknown };
    const where = Array.isArray(loc) ? loc.map(String).join('.') : undefined;
    const what = typeof msg === 'string' ? msg : 'invalid';
    return where ? `${where}: ${what}` : what;
  });
  const more = detail.length > MAX_DETAIL_ITEMS ? `; +${detail.length - MAX_DETAIL_ITEMS} more` : '';
  return items.length ? `${items.join('; ')}${more}` : undefined;
}

/**
 * The human part of an error body, if there is one: `{message, error: {details}}`,
 * FastAPI-style `{detail: [...]}` (422) or `{detail: "..."}`, OAuth-style `{error, error_description}`,
 * or a short plain-text body. One line, bounded, secrets scrubbed.
 */
export function upstreamMessageOf(body: string): string | undefined {
  const text = body.trim();
  if (!text) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return text.includes('<') ? undefined : oneLine(text, 200);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  const record = json as Record<string, unknown>;
  const parts: string[] = [];
  if (typeof record.message === 'string' && record.message) parts.push(record.message);
  const error = record.error;
  if (typeof error === 'object' && error !== null) {
    const details = (error as { details?: unknown; message?: unknown }).details;
    const message = (error as { message?: unknown }).message;
    if (typeof details === 'string' && details) parts.push(details);
    else if (typeof message === 'string' && message) parts.push(message);
  } else if (typeof error === 'string' && error) {
    parts.push(error);
    if (typeof record.error_description === 'string') parts.push(record.error_description);
  }
  const detail = describeDetail(record.detail);
  if (detail) parts.push(detail);
  // A robot often puts the same words in its message and its details: said once.
  const said = parts.filter((part, index) => parts.findIndex((other) => sameWords(other, part)) === index);
  return said.length ? oneLine(said.join(': ')) : undefined;
}

function sameWords(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/** The typed error for a response whose status is not the expected success status. */
export function statusError(ctx: ErrorContext, response: HttpResponse): UpstreamError {
  return errorForStatus(ctx, response.status, {
    upstreamMessage: upstreamMessageOf(response.body),
    retryAfterMs: parseRetryAfter(response.headers['retry-after']),
  });
}

/** Parses a JSON body; an unparseable body is an `InvalidPayloadError` (never quoting the body). */
export function parseJson(ctx: ErrorContext, response: HttpResponse): unknown {
  try {
    return JSON.parse(response.body);
  } catch {
    const what = response.body.trim() === '' ? 'empty body' : 'body is not valid JSON';
    throw new InvalidPayloadError(ctx, what, response.status);
  }
}

/** Validates a decoded value; failures become `InvalidPayloadError` with a summary of the issues. */
export function validate<S extends z.ZodType>(
  ctx: ErrorContext,
  value: unknown,
  schema: S,
  status?: number,
): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new InvalidPayloadError(ctx, summarizeIssues(parsed.error.issues), status);
  return parsed.data;
}

/** Parses a JSON body against a zod schema (see `parseJson` and `validate`). */
export function parseBody<S extends z.ZodType>(
  ctx: ErrorContext,
  response: HttpResponse,
  schema: S,
): z.output<S> {
  return validate(ctx, parseJson(ctx, response), schema, response.status);
}
