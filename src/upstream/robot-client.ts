import type { z } from 'zod';
import { type OperationClientOptions, OperationRunner } from './operation-call.js';
import { ROBOT_OPERATIONS, type RobotOperation, type RobotOperationName } from './operations/robot.js';
import type { ClientOf, OperationArgs } from './operations/types.js';

/**
 * The robot-level interface: one method per row of `ROBOT_OPERATIONS`, named and typed by the row
 * (`teleopStatus(deviceId, opts?)`, `getSite(deviceId, name, opts?)`,
 * `createSite(deviceId, name, body, opts?)`, `teleopRelease(deviceId, force?, opts?)`,
 * `teleopTransfer(deviceId, to, opts?)`, ...). A row without a method cannot exist.
 */
export type RobotClient = ClientOf<RobotOperation> & RobotPassThrough;

type RowNamed<N extends RobotOperationName> = Extract<RobotOperation, { name: N }>;

/** Any row by name, answering with the robot's whole body (what an API passing it on shows). */
export interface RobotPassThrough {
  /**
   * Calls the row `name` as its method would (same arguments, same retry rule, same errors) and
   * resolves with the body as the row reads it, before the method picks its part
   * (`platformFeedback` returns `data.platform_feedback`; this returns the envelope around it).
   */
  answer<N extends RobotOperationName>(
    name: N,
    ...args: OperationArgs<RowNamed<N>>
  ): Promise<z.output<RowNamed<N>['response']>>;
}

export type RobotClientOptions = OperationClientOptions;

/**
 * Robot-level client: every method is `OperationRunner.run` driven by its row.
 *
 * Reads (GET) are retried like `/v1` reads: 502/503/504, time-outs and network errors, with
 * backoff, jitter and `Retry-After`. Writes (POST/PUT/PATCH/DELETE) are **never** retried
 * automatically: their semantics (is a waypoint list appended? is a lease acquired twice?) are not
 * specified, so a second attempt could do something twice. Only a 401 is resent once with a fresh
 * token, since a request rejected as unauthenticated was not processed. Success is any 2xx.
 *
 * Error bodies (`{status: "error", message, error: {details}}`, 422 `{detail: [...]}`) become the
 * `upstreamMessage` of the typed error and the tail of its message.
 */
export interface HttpRobotClient extends RobotClient {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the methods of the interface are installed on the prototype from the rows (static block)
export class HttpRobotClient {
  readonly #runner: OperationRunner;

  constructor(options: RobotClientOptions) {
    this.#runner = new OperationRunner(options);
  }

  answer<N extends RobotOperationName>(
    name: N,
    ...args: OperationArgs<RowNamed<N>>
  ): Promise<z.output<RowNamed<N>['response']>> {
    const operation = ROBOT_OPERATIONS.find((row) => row.name === name);
    if (!operation) return Promise.reject(new TypeError(`no robot operation named ${name}`));
    return this.#runner.run(operation, args, true) as Promise<z.output<RowNamed<N>['response']>>;
  }

  static {
    for (const operation of ROBOT_OPERATIONS) {
      Object.defineProperty(HttpRobotClient.prototype, operation.name, {
        value(this: HttpRobotClient, ...args: unknown[]) {
          return this.#runner.run(operation, args);
        },
        writable: true,
        configurable: true,
      });
    }
  }
}
