import type { Logger } from 'pino';
import type { UpstreamConfig } from '../config/schema.js';
import { type ApiTransport, parseBody, statusError } from './api.js';
import { type ErrorContext, GatewayTimeoutError, NetworkError, UpstreamTimeoutError } from './errors.js';
import type { CallOptions } from './http.js';
import { type RetryInfo, type RetryPolicy, withRetry } from './retry.js';
import {
  commandAcceptedResponseSchema,
  type PowerStatus,
  type PowerTarget,
  powerStatusResponseSchema,
  type VehicleSummary,
  vehicleListResponseSchema,
} from './schemas/v1.js';

/** The vehicle-fleet interface (`/v1`). */
export interface FleetClient {
  /** `GET /v1/vehicles`: the vehicles this client may access. */
  listVehicles(opts?: CallOptions): Promise<VehicleSummary[]>;
  /** `GET /v1/vehicles/{id}/power/status`: the last reported state and the pending command. */
  getPowerStatus(vehicleId: string, opts?: CallOptions): Promise<PowerStatus>;
  /** `POST /v1/vehicles/{id}/power/on`; resolves when the command is accepted (not carried out). */
  requestPowerOn(vehicleId: string, opts?: CallOptions): Promise<void>;
  /** `POST /v1/vehicles/{id}/power/off`; resolves when the command is accepted (not carried out). */
  requestPowerOff(vehicleId: string, opts?: CallOptions): Promise<void>;
  requestPower(vehicleId: string, target: PowerTarget, opts?: CallOptions): Promise<void>;
}

export interface FleetClientOptions {
  config: UpstreamConfig;
  api: ApiTransport;
  logger?: Logger;
}

/** Failures after which a power request may have reached the service and been accepted. */
function mayHaveBeenAccepted(error: unknown): boolean {
  return (
    error instanceof GatewayTimeoutError ||
    error instanceof UpstreamTimeoutError ||
    error instanceof NetworkError
  );
}

/** Whether a power status already shows the desired state, so asking again is pointless. */
export function powerReached(status: PowerStatus, target: PowerTarget): boolean {
  // A pending command decides what the vehicle will end up in; without one, the reported state does.
  return status.pendingCommand ? status.pendingCommand.state === target : status.state === target;
}

/**
 * Client of the vehicle-fleet interface, following the spec to the letter (zod schemas in
 * `schemas/v1.ts`; success is exactly 200 for reads and 202 for power requests).
 *
 * ## Retries
 *
 * - **Reads** (`listVehicles`, `getPowerStatus`) are retried on 502, 503, 504, time-outs and
 *   network errors, with exponential backoff and full jitter (`http.retries`,
 *   `http.retry_base_delay`, `http.retry_max_delay`); a `Retry-After` (seconds or HTTP-date) replaces
 *   the computed delay, capped at `retry_max_delay`. 500, 4xx and invalid payloads are final.
 * - **Power requests** are retried too, because a power command is a desired state, not a toggle:
 *   asking twice for `on` is harmless, and a 202 only means "accepted". On 502/503 the request was
 *   not processed, so it is simply sent again. After a 504, a time-out or a network error the
 *   request may have been accepted, so the client first reads the power status (one attempt) and
 *   stops, successfully, when the vehicle is already heading to the target: the pending command
 *   requests it, or no command is pending and the reported state equals it. (A pending command for
 *   the *opposite* state means ours is not the last word, so the request is sent again.) This check
 *   also runs after the last attempt, so a 504 whose command did get through is not reported as a
 *   failure. If the status read fails, the retry goes ahead as planned.
 * - **401**: the token is invalidated and the request sent once more with a fresh one (see
 *   `ApiTransport`); this does not count as a retry.
 */
export class HttpFleetClient implements FleetClient {
  readonly #base: string;
  readonly #api: ApiTransport;
  readonly #policy: RetryPolicy;
  readonly #logger: Logger | undefined;

  constructor(options: FleetClientOptions) {
    this.#base = options.config.base_url.replace(/\/+$/, '');
    this.#api = options.api;
    this.#logger = options.logger;
    const http = options.config.http;
    this.#policy = {
      retries: http.retries,
      baseDelayMs: http.retry_base_delay,
      maxDelayMs: http.retry_max_delay,
    };
  }

  listVehicles(opts: CallOptions = {}): Promise<VehicleSummary[]> {
    const ctx: ErrorContext = { operation: 'list_vehicles' };
    return withRetry(
      async () => {
        const response = await this.#api.send({
          ...ctx,
          method: 'GET',
          url: `${this.#base}/v1/vehicles`,
          signal: opts.signal,
        });
        if (response.status !== 200) throw statusError(ctx, response);
        return parseBody(ctx, response, vehicleListResponseSchema).data;
      },
      { policy: this.#policy, signal: opts.signal, onRetry: this.#onRetry(ctx) },
    );
  }

  getPowerStatus(vehicleId: string, opts: CallOptions = {}): Promise<PowerStatus> {
    return withRetry(() => this.#readPowerStatus(vehicleId, opts.signal), {
      policy: this.#policy,
      signal: opts.signal,
      onRetry: this.#onRetry(this.#vehicleCtx('get_vehicle_power_status', vehicleId)),
    });
  }

  requestPowerOn(vehicleId: string, opts: CallOptions = {}): Promise<void> {
    return this.requestPower(vehicleId, 'on', opts);
  }

  requestPowerOff(vehicleId: string, opts: CallOptions = {}): Promise<void> {
    return this.requestPower(vehicleId, 'off', opts);
  }

  requestPower(vehicleId: string, target: PowerTarget, opts: CallOptions = {}): Promise<void> {
    if (target !== 'on' && target !== 'off') {
      return Promise.reject(
        new TypeError(`power target must be "on" or "off" (got ${JSON.stringify(target)})`),
      );
    }
    const ctx = this.#vehicleCtx(`request_vehicle_power_${target}`, vehicleId);
    const url = `${this.#vehicleUrl(vehicleId)}/power/${target}`;
    return withRetry(
      async () => {
        // No body and no content-type: the spec says no body must be sent.
        const response = await this.#api.send({ ...ctx, method: 'POST', url, signal: opts.signal });
        if (response.status !== 202) throw statusError(ctx, response);
        parseBody(ctx, response, commandAcceptedResponseSchema);
      },
      {
        policy: this.#policy,
        signal: opts.signal,
        onRetry: this.#onRetry(ctx),
        reconcile: async (error) => {
          if (!mayHaveBeenAccepted(error)) return undefined;
          try {
            const status = await this.#readPowerStatus(vehicleId, opts.signal);
            if (powerReached(status, target)) {
              this.#logger?.debug(
                {
                  operation: ctx.operation,
                  target: vehicleId,
                  state: status.state,
                  pending: status.pendingCommand,
                },
                'power request already in effect after an uncertain failure',
              );
              return { value: undefined };
            }
          } catch (statusError) {
            if (opts.signal?.aborted) throw statusError;
            this.#logger?.debug(
              { err: statusError, operation: ctx.operation, target: vehicleId },
              'power status check after an uncertain failure failed',
            );
          }
          return undefined;
        },
      },
    );
  }

  /** One attempt at reading the power status (no retries). */
  async #readPowerStatus(vehicleId: string, signal: AbortSignal | undefined): Promise<PowerStatus> {
    const ctx = this.#vehicleCtx('get_vehicle_power_status', vehicleId);
    const url = `${this.#vehicleUrl(vehicleId)}/power/status`;
    const response = await this.#api.send({ ...ctx, method: 'GET', url, signal });
    if (response.status !== 200) throw statusError(ctx, response);
    return parseBody(ctx, response, powerStatusResponseSchema).data;
  }

  #vehicleUrl(vehicleId: string): string {
    return `${this.#base}/v1/vehicles/${encodeURIComponent(vehicleId)}`;
  }

  #vehicleCtx(operation: string, vehicleId: string): ErrorContext {
    return { operation, target: vehicleId, subject: `vehicle "${vehicleId}"` };
  }

  #onRetry(ctx: ErrorContext): (info: RetryInfo) => void {
    return ({ error, attempt, delayMs }) =>
      this.#logger?.debug(
        { err: error, operation: ctx.operation, target: ctx.target, attempt, delayMs },
        'retrying upstream request',
      );
  }
}
