import type { Logger } from 'pino';
import { type ApiTransport, parseJson, statusError, validate } from './api.js';
import type { UpstreamConfig } from './config.js';
import { type ErrorContext, InvalidPayloadError, oneLine } from './errors.js';
import type { HttpResponse } from './http.js';
import {
  type ApiBases,
  apiBases,
  type OperationRequest,
  requestFor,
  succeeded,
} from './operation-request.js';
import type { Operation, OperationResult } from './operations/types.js';
import { RetryBudget, type RetryPolicy, retryLog, retryPolicyOf, withRetry } from './retry.js';

/**
 * The one call path of the operation table: a row and the caller's arguments become a request
 * (`requestFor`), one attempt sends it and reads the answer (`exchange`), and `OperationRunner.run`
 * retries by the row's rule.
 */

/**
 * Generic robot bodies: an object is an envelope; any other JSON value (a bare list, say) is kept
 * as `{data: value}` so nothing the robot said is lost.
 */
function toEnvelope(json: unknown): unknown {
  return typeof json === 'object' && json !== null && !Array.isArray(json) ? json : { data: json };
}

/**
 * The body of a success answer, read by the row's `answer` rule and checked against `response`,
 * then given to the row's `result` reader unless `whole` asks for the body itself.
 */
function readAnswer(
  operation: Operation,
  ctx: ErrorContext,
  response: HttpResponse,
  whole: boolean,
): unknown {
  let raw: unknown;
  if (operation.answer === 'acknowledgement') {
    // The 2xx is what says the write happened; the body is informational.
    const text = response.body.trim();
    if (text === '') return {};
    try {
      raw = JSON.parse(text);
    } catch {
      return { message: oneLine(text, 200) };
    }
  } else {
    raw = parseJson(ctx, response);
  }
  const value = operation.answer === 'json' ? raw : toEnvelope(raw);
  const body = validate(ctx, value, operation.response, response.status);
  return operation.result && !whole ? operation.result(body as never, raw) : body;
}

/** One attempt: sends the request, turns a status other than the row's success into its typed error, reads the body. */
async function exchange<R extends Operation>(
  api: ApiTransport,
  operation: R,
  request: OperationRequest,
  attempt: number,
  whole = false,
): Promise<OperationResult<R>> {
  const { ctx } = request;
  // Written out field by field: one object shape for every request (a spread of contexts of
  // several shapes was a measurable share of each request's CPU).
  const response = await api.send({
    operation: ctx.operation,
    target: ctx.target,
    subject: ctx.subject,
    method: operation.method,
    url: request.url,
    json: request.json,
    signal: request.signal,
    retry: attempt > 1 ? true : undefined,
  });
  if (!succeeded(operation, response.status)) throw statusError(ctx, response);
  try {
    return readAnswer(operation, ctx, response, whole) as OperationResult<R>;
  } catch (error) {
    // A success status with a body not as the spec says is an upstream failing as surely as a
    // 5xx: its health windows count it (a call once, by its first attempt, as they count calls).
    if (error instanceof InvalidPayloadError && attempt === 1) api.unreadable(ctx);
    throw error;
  }
}

export interface OperationClientOptions {
  config: UpstreamConfig;
  api: ApiTransport;
  logger?: Logger;
}

/** What a client of the operation table holds: base addresses, transport, retry policy, logger. */
export class OperationRunner {
  readonly policy: RetryPolicy;
  readonly logger: Logger | undefined;
  /** One per client, so per upstream: the fleet API's failures do not spend the gateway's. */
  readonly budget = new RetryBudget();
  readonly #bases: ApiBases;
  readonly #api: ApiTransport;
  /** Whether the last retry decision was cut by the budget (logged when that changes). */
  #throttled = false;

  constructor(options: OperationClientOptions) {
    this.#bases = apiBases(options.config);
    this.#api = options.api;
    this.logger = options.logger;
    this.policy = retryPolicyOf(options.config.http);
  }

  /** The request of `operation` called with `args` (see `requestFor`). */
  request(operation: Operation, args: readonly unknown[]): OperationRequest {
    return requestFor(operation, this.#bases, args);
  }

  /** One attempt (see `exchange`); `attempt` counts from 1, later ones are retries. */
  once<R extends Operation>(
    operation: R,
    request: OperationRequest,
    attempt = 1,
    whole = false,
  ): Promise<OperationResult<R>> {
    return exchange(this.#api, operation, request, attempt, whole);
  }

  /**
   * Runs the operation: one attempt for a `never` row, else retried by the policy. It resolves
   * with what the row's method returns, or with the whole body as read (`whole`: a pass-through
   * that shows what the upstream answered, whatever part the method picks).
   */
  async run<R extends Operation>(
    operation: R,
    args: readonly unknown[],
    whole = false,
  ): Promise<OperationResult<R>> {
    const request = this.request(operation, args);
    if (operation.retry === 'never') return this.once(operation, request, 1, whole);
    // Nearly every call is answered at once: what a retry needs (its closures, the loop) is made
    // only after a first attempt failed. This runs once per poll.
    try {
      const value = await this.once(operation, request, 1, whole);
      this.budget.answered();
      return value;
    } catch (error) {
      return this.#retried(operation, request, whole, error);
    }
  }

  /** The rest of `run` after its first attempt failed with `error`: decided and retried by the policy. */
  #retried<R extends Operation>(
    operation: R,
    request: OperationRequest,
    whole: boolean,
    error: unknown,
  ): Promise<OperationResult<R>> {
    const attempt = (n: number) => this.once(operation, request, n, whole);
    const logRetry = retryLog(this.logger, request.ctx);
    return withRetry(attempt, {
      firstFailure: { error },
      policy: this.policy,
      budget: this.budget,
      signal: request.signal,
      onRetry: (info) => {
        if (this.#throttled) {
          this.#throttled = false;
          this.logger?.info(
            { operation: operation.id },
            'upstream answering most calls again: failed calls are retried again',
          );
        }
        logRetry(info);
      },
      onThrottled: ({ error }) => {
        if (this.#throttled) return;
        this.#throttled = true;
        this.logger?.warn(
          { operation: operation.id, err: (error as Error).message },
          'upstream failing for most calls: failed calls are not retried until it answers again',
        );
      },
    });
  }
}
