import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import { Agent, type Dispatcher } from 'undici';
import { onAbort } from '../lib/abort-fanout.js';
import type { Exchange } from '../lib/http-answer.js';
import { formatSize } from '../lib/size.js';
import { VERSION } from '../version.js';
import type { HttpLimits } from './config.js';
import { type ErrorContext, InvalidPayloadError, NetworkError, UpstreamTimeoutError } from './errors.js';
import { UPSTREAM_NAMES, type UpstreamName, upstreamOf } from './names.js';
import { Semaphore } from './semaphore.js';

/** Options every client call accepts. */
export interface CallOptions {
  /** Aborts the call (waiting for a slot, the request, and any retry back-off). */
  signal?: AbortSignal;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Where an authenticated request stands in the 401 rule of `ApiTransport`: `first` carries the
 * cached token and is sent again with a fresh one when it is answered 401, so its 401 is not
 * final; `renewed` is that second sending, whose answer is.
 */
export type AuthAttempt = 'first' | 'renewed';

export interface HttpRequest extends ErrorContext {
  method: HttpMethod;
  /** Absolute URL, path parameters already encoded. */
  url: string;
  headers?: Record<string, string>;
  /** Request body, already serialised. No body means no content-type either. */
  body?: string;
  signal?: AbortSignal;
  /** Set on requests that carry a bearer token (none on the token request itself). */
  auth?: AuthAttempt;
  /** A retry of a call whose first attempt failed (told to the observer). */
  retry?: boolean;
}

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The whole body as text (always read, so the connection goes back to the pool). */
  body: string;
  durationMs: number;
}

/** What one HTTP exchange looked like, for metrics. */
export interface RequestInfo {
  operation: string;
  target?: string;
  method: HttpMethod;
  status: Exchange;
  durationMs: number;
  /** The request's place in the 401 rule, when it carried a token: a 401 to `first` is not final. */
  auth?: AuthAttempt;
  /** Another attempt of a call already reported once: its answer repeats what the call met. */
  retry?: boolean;
}

export interface RequestObserver {
  request(info: RequestInfo): void;
  /**
   * A call's answer had its success status but a body that is not what the spec says (not JSON,
   * or not its shape): told after `request` counted the exchange, which its status alone made a
   * good one. The first attempt's answer only, as `request` counts a call once.
   */
  unreadable?(info: Pick<RequestInfo, 'operation' | 'target'>): void;
}

export interface HttpClientOptions {
  logger?: Logger;
  observer?: RequestObserver;
  userAgent?: string;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export const USER_AGENT = `fleetwatch/${VERSION}`;

/**
 * `url` as undici's dispatcher takes it: the origin (normalised by `URL`, once per distinct one)
 * and the path with its query. Every request URL is a configured base plus encoded path
 * parameters; one with anything `URL` would rewrite (a character it encodes, a dot segment) goes
 * through `URL` whole.
 */
const origins = new Map<string, string>();
const MAX_ORIGINS = 64;
const PLAIN_PATH = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*$/;

export function splitUrl(url: string): { origin: string; path: string } {
  const scheme = url.indexOf('://');
  const slash = scheme < 0 ? -1 : url.indexOf('/', scheme + 3);
  const rawOrigin = slash < 0 ? url : url.slice(0, slash);
  const path = slash < 0 ? '/' : url.slice(slash);
  const origin = origins.get(rawOrigin);
  if (origin === undefined || !PLAIN_PATH.test(path) || path.includes('/.')) {
    const parsed = new URL(url);
    if (origins.size < MAX_ORIGINS) origins.set(rawOrigin, parsed.origin);
    return { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
  }
  return { origin, path };
}

const BOM = 0xfeff;

interface Exchanged {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One exchange through undici's dispatcher, the body gathered as it arrives: `Agent.request`
 * would wrap it in a stream and an `AbortSignal` per request (about 13 µs a request more in a
 * loopback micro-benchmark).
 * An abort before undici has started the request (still waiting for a connection) ends the
 * exchange at once and is applied when it starts.
 */
class Dispatched implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | undefined;
  #reason: Error | undefined;
  #resolve: ((exchanged: Exchanged) => void) | undefined;
  #reject: ((reason: Error) => void) | undefined;
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  readonly #chunks: Buffer[] = [];

  abort(reason: unknown): void {
    const error = reason instanceof Error ? reason : new Error(String(reason));
    if (this.#controller) {
      this.#controller.abort(error);
      return;
    }
    this.#reason ??= error;
    this.#reject?.(error);
  }

  run(agent: Agent, options: Dispatcher.DispatchOptions): Promise<Exchanged> {
    return new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
      // The exchange is its own handler: no closures per request.
      agent.dispatch(options, this);
    });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#reason) controller.abort(this.#reason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: unknown): void {
    this.#status = statusCode;
    this.#headers = headers as IncomingHttpHeaders;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    const chunks = this.#chunks;
    const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const text = bytes.toString('utf8');
    const resolve = this.#resolve;
    this.#letGo();
    resolve?.({
      status: this.#status,
      headers: this.#headers,
      body: text.charCodeAt(0) === BOM ? text.slice(1) : text,
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    const reject = this.#reject;
    this.#letGo();
    reject?.(error);
  }

  /**
   * Once the exchange has ended, it lets go of undici's controller (which keeps the raw header
   * buffers and the request), the body chunks and its promise's settlers. A finished handler can
   * still be reachable from an object the collector has already moved to the old generation, and
   * all it holds is then moved there too: on the poll path at 40k, 3.6 MB of every 23 MB the polls
   * allocated went to the old generation with them held, 1.3 MB without (BENCHMARKS.md).
   */
  #letGo(): void {
    this.#controller = undefined;
    // Emptied, not replaced: no new array per request.
    this.#chunks.length = 0;
    this.#resolve = undefined;
    this.#reject = undefined;
  }
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function networkReason(error: unknown): string {
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  if (!message) return code ?? 'connection failed';
  return code && !message.includes(code) ? `${code} ${message}` : message;
}

/**
 * One undici Agent (a connection pool per origin: token issuer, /v1, robot gateway) with
 * keep-alive, connect/headers/body time-outs and an overall deadline per request, behind a cap on
 * requests in flight per upstream (`max_in_flight` each for the token issuer, the fleet API and the
 * robot gateway): when one of them hangs, its calls wait out their time-outs in its own slots, and
 * the others' calls still go. Returns every response, whatever its status; throws
 * only `UpstreamTimeoutError`, `NetworkError`, `InvalidPayloadError` (oversized body) or the
 * caller's abort reason.
 */
export class HttpClient {
  readonly #agent: Agent;
  readonly #slots: Readonly<Record<UpstreamName, Semaphore>>;
  readonly #limits: HttpLimits;
  readonly #logger: Logger | undefined;
  readonly #observer: RequestObserver | undefined;
  readonly #userAgent: string;

  constructor(limits: HttpLimits, options: HttpClientOptions = {}) {
    this.#limits = limits;
    this.#logger = options.logger;
    this.#observer = options.observer;
    this.#userAgent = options.userAgent ?? USER_AGENT;
    this.#slots = {
      token: new Semaphore(limits.max_in_flight),
      fleet: new Semaphore(limits.max_in_flight),
      robots: new Semaphore(limits.max_in_flight),
    };
    this.#agent = new Agent({
      connections: limits.max_connections,
      connect: { timeout: limits.connect_timeout },
      headersTimeout: limits.request_timeout,
      bodyTimeout: limits.request_timeout,
      // A body beyond `upstream.http.max_response_size` is refused as it arrives, never buffered whole.
      maxResponseSize: limits.max_response_size,
    });
  }

  /** Requests in flight right now to `upstream` (at most `max_in_flight`), or to all of them. */
  inFlight(upstream?: UpstreamName): number {
    if (upstream) return this.#slots[upstream].active;
    return UPSTREAM_NAMES.reduce((sum, name) => sum + this.#slots[name].active, 0);
  }

  async send(request: HttpRequest): Promise<HttpResponse> {
    const { origin, path } = splitUrl(request.url);
    const release = await this.#slots[upstreamOf(request.operation)].acquire(request.signal);
    const started = performance.now();
    const timeoutMs = this.#limits.request_timeout;
    const exchange = new Dispatched();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      exchange.abort(new Error('request deadline exceeded'));
    }, timeoutMs);
    const unlink = request.signal ? onAbort(request.signal, (reason) => exchange.abort(reason)) : undefined;
    try {
      const response = await exchange.run(this.#agent, {
        origin,
        path,
        method: request.method,
        headers: {
          'user-agent': this.#userAgent,
          accept: 'application/json',
          ...request.headers,
        },
        body: request.body ?? null,
      });
      const durationMs = Math.round(performance.now() - started);
      this.#report(request, path, response.status, durationMs);
      return { status: response.status, headers: response.headers, body: response.body, durationMs };
    } catch (error) {
      const durationMs = Math.round(performance.now() - started);
      if (request.signal?.aborted) throw request.signal.reason;
      const ctx: ErrorContext = {
        operation: request.operation,
        target: request.target,
        subject: request.subject,
      };
      const code = errorCode(error);
      if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
        this.#report(request, path, 'network', durationMs);
        const limit = formatSize(this.#limits.max_response_size);
        throw new InvalidPayloadError(
          ctx,
          `response body larger than ${limit} (upstream.http.max_response_size)`,
        );
      }
      if (timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
        this.#report(request, path, 'timeout', durationMs);
        const limit = code === 'UND_ERR_CONNECT_TIMEOUT' ? this.#limits.connect_timeout : timeoutMs;
        throw new UpstreamTimeoutError(ctx, limit, error);
      }
      this.#report(request, path, 'network', durationMs);
      throw new NetworkError(ctx, networkReason(error), error);
    } finally {
      clearTimeout(timer);
      unlink?.();
      release();
    }
  }

  /** Tells the observer that a call's answer could not be read (see `RequestObserver.unreadable`). */
  unreadable(ctx: Pick<ErrorContext, 'operation' | 'target'>): void {
    try {
      this.#observer?.unreadable?.({ operation: ctx.operation, target: ctx.target });
    } catch (error) {
      this.#logger?.warn({ err: error, operation: ctx.operation }, 'upstream request observer failed');
    }
  }

  #report(request: HttpRequest, path: string, status: RequestInfo['status'], durationMs: number): void {
    // Built only when it is written: this runs for every upstream request.
    if (this.#logger?.isLevelEnabled('debug')) {
      this.#logger.debug(
        {
          method: request.method,
          operation: request.operation,
          target: request.target,
          path: path.split('?')[0],
          status,
          durationMs,
        },
        'upstream request',
      );
    }
    try {
      this.#observer?.request({
        operation: request.operation,
        target: request.target,
        method: request.method,
        status,
        durationMs,
        auth: request.auth,
        retry: request.retry ? true : undefined,
      });
    } catch (error) {
      this.#logger?.warn({ err: error, operation: request.operation }, 'upstream request observer failed');
    }
  }

  /** Closes every pooled connection; waits for requests in flight. */
  async close(): Promise<void> {
    await this.#agent.close();
  }
}
