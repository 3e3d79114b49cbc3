import { classifyExchange } from '../lib/http-answer.js';
import { GatewayTimeoutError, NetworkError, UnexpectedStatusError, UpstreamTimeoutError } from './errors.js';
import type { CallOptions } from './http.js';
import { type OperationClientOptions, OperationRunner } from './operation-call.js';
import { FLEET_OPERATIONS, type FleetOperation } from './operations/fleet.js';
import { operationNamed } from './operations/types.js';
import { retryLog, withRetry } from './retry.js';
import type { PowerStatus, PowerTarget, VehicleList } from './schemas/v1.js';

const LIST_VEHICLES = operationNamed(FLEET_OPERATIONS, 'listVehicles');
const GET_POWER_STATUS = operationNamed(FLEET_OPERATIONS, 'getPowerStatus');
const POWER_REQUESTS = {
  on: operationNamed(FLEET_OPERATIONS, 'requestPowerOn'),
  off: operationNamed(FLEET_OPERATIONS, 'requestPowerOff'),
};

/**
 * The vehicle-fleet interface (`/v1`): a method per row of `FLEET_OPERATIONS` (the `Record` makes
 * `HttpFleetClient` fail to compile when a row has none), plus `requestPower` for either target.
 */
export interface FleetClient extends Record<FleetOperation['name'], (...args: never[]) => Promise<unknown>> {
  /**
   * `GET /v1/vehicles`: the vehicles this client may access, and the elements of the list that
   * do not match the spec (each rejected by itself; see list-elements.ts).
   */
  listVehicles(opts?: CallOptions): Promise<VehicleList>;
  /** `GET /v1/vehicles/{id}/power/status`: the last reported state and the pending command. */
  getPowerStatus(vehicleId: string, opts?: CallOptions): Promise<PowerStatus>;
  /** `POST /v1/vehicles/{id}/power/on`; resolves when the command is accepted (not carried out). */
  requestPowerOn(vehicleId: string, opts?: CallOptions): Promise<PowerAcceptance>;
  /** `POST /v1/vehicles/{id}/power/off`; resolves when the command is accepted (not carried out). */
  requestPowerOff(vehicleId: string, opts?: CallOptions): Promise<PowerAcceptance>;
  requestPower(vehicleId: string, target: PowerTarget, opts?: CallOptions): Promise<PowerAcceptance>;
}

/**
 * How a power request was accepted. The spec says 202; another 2xx still says the service took
 * the command, so it is accepted too, with a warning: reporting it as a failure would invite a
 * second request for a command that stands.
 */
export interface PowerAcceptance {
  /**
   * The status of the answer that accepted it (202, or the other 2xx); absent when, after an
   * answer that may have been lost, the power status showed the command in effect.
   */
  status?: number;
  /** Set when the status was not the spec's 202: one line for the operator. */
  warning?: string;
}

/** The 2xx other than 202 that a power request was answered with, if that is what `error` is. */
function otherSuccess(error: unknown): number | undefined {
  if (!(error instanceof UnexpectedStatusError) || error.status === undefined) return undefined;
  return classifyExchange(error.status) === 'success' ? error.status : undefined;
}

export type FleetClientOptions = OperationClientOptions;

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
 * Client of the vehicle-fleet interface, following the spec to the letter: method, path, operation
 * id, success status (exactly 200 for reads, 202 for power requests) and schema come from
 * `FLEET_OPERATIONS`.
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
 *
 * A power request answered with a 2xx other than 202 is accepted with a warning
 * (`PowerAcceptance`), never retried: the service took the command.
 */
export class HttpFleetClient implements FleetClient {
  readonly #runner: OperationRunner;

  constructor(options: FleetClientOptions) {
    this.#runner = new OperationRunner(options);
  }

  listVehicles(opts: CallOptions = {}): Promise<VehicleList> {
    return this.#runner.run(LIST_VEHICLES, [opts]);
  }

  async getPowerStatus(vehicleId: string, opts: CallOptions = {}): Promise<PowerStatus> {
    return (await this.#runner.run(GET_POWER_STATUS, [vehicleId, opts])).data;
  }

  requestPowerOn(vehicleId: string, opts: CallOptions = {}): Promise<PowerAcceptance> {
    return this.requestPower(vehicleId, 'on', opts);
  }

  requestPowerOff(vehicleId: string, opts: CallOptions = {}): Promise<PowerAcceptance> {
    return this.requestPower(vehicleId, 'off', opts);
  }

  async requestPower(
    vehicleId: string,
    target: PowerTarget,
    opts: CallOptions = {},
  ): Promise<PowerAcceptance> {
    if (target !== 'on' && target !== 'off') {
      throw new TypeError(`power target must be "on" or "off" (got ${JSON.stringify(target)})`);
    }
    const operation = POWER_REQUESTS[target];
    const runner = this.#runner;
    // No body and no content-type: the spec says no body must be sent.
    const request = runner.request(operation, [vehicleId, opts]);
    const { ctx } = request;
    const accepted: PowerAcceptance = { status: operation.success };
    return withRetry<PowerAcceptance>(
      async (attempt) => {
        try {
          await runner.once(operation, request, attempt);
          return accepted;
        } catch (error) {
          const status = otherSuccess(error);
          if (status === undefined) throw error;
          return {
            status,
            warning: `the fleet service answered power ${target} for vehicle "${vehicleId}" with ${status}, not ${operation.success} as the spec says; taken as accepted (do not send it again; follow it with the power status)`,
          };
        }
      },
      {
        policy: runner.policy,
        signal: opts.signal,
        onRetry: retryLog(runner.logger, ctx),
        reconcile: async (error) => {
          if (!mayHaveBeenAccepted(error)) return undefined;
          try {
            const status = await this.#readPowerStatus(vehicleId, opts.signal);
            if (powerReached(status, target)) {
              runner.logger?.debug(
                {
                  operation: ctx.operation,
                  target: vehicleId,
                  state: status.state,
                  pending: status.pendingCommand,
                },
                'power request already in effect after an uncertain failure',
              );
              return { value: {} };
            }
          } catch (statusError) {
            if (opts.signal?.aborted) throw statusError;
            runner.logger?.debug(
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
    const request = this.#runner.request(GET_POWER_STATUS, [vehicleId, { signal }]);
    return (await this.#runner.once(GET_POWER_STATUS, request)).data;
  }
}
