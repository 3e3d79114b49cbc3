import type { z } from 'zod';
import type { CallOptions, HttpMethod } from '../http.js';

/**
 * One upstream operation, described once: the clients, the simulator's routing and the OpenAPI
 * description of the robot gateway are all derived from rows of this shape. A row is plain data
 * (strings, flags, zod schemas); the few rows whose method returns part of the body name a
 * reader function.
 */
export interface Operation {
  /** The client method, e.g. `teleopStatus`. */
  readonly name: string;
  /** Names the operation in errors, logs and the `operation` label of the upstream metrics. */
  readonly id: string;
  readonly api: OperationApi;
  /** The spec's group, e.g. `Teleop Control`. */
  readonly group: OperationGroup;
  /** The spec's one-line purpose. */
  readonly summary: string;
  readonly method: HttpMethod;
  /** Path template below the API's base (`/v2/sites/{name}`); `{…}` are path parameters. */
  readonly path: string;
  /**
   * The caller's arguments besides the device id, in call order. A `body` parameter is a field of
   * the JSON body (the operation then takes no body argument).
   */
  readonly params: readonly OperationParam[];
  readonly body: BodyRule;
  /** The request body's schema, where the spec or robot-shapes.md gives one; absent: any JSON object. */
  readonly request?: z.ZodType;
  /** The status that means success: exactly this one, or any 2xx. */
  readonly success: number | 'any-2xx';
  /** The success body's schema, as it comes over the wire. */
  readonly response: z.ZodType;
  readonly answer: AnswerRule;
  /** What the method returns when it is not the parsed body: a part of it, or a view with the raw body. */
  readonly result?: (body: never, raw: unknown) => unknown;
  readonly retry: RetryRule;
  /** Undoes or stops something: deletes, a motion command (STOP), a forced lease release, clearing a zone set. */
  readonly destructive: boolean;
  /**
   * What the operation acts on within the robot, for error messages: what a `{name}` path
   * parameter names (`site "north" on robot "dev-1"`), or the one there is when nothing names it
   * (`realtime room on robot "dev-1"`), so a 404 does not read as a missing robot.
   */
  readonly resource?: 'site' | 'route' | 'zone set' | 'realtime room' | 'track';
  /**
   * What a 404 means, in the spec's words, where it says more than "not found": the error's
   * message, so the CLI and the API say the same.
   */
  readonly notFound?: string;
}

/**
 * Where an operation is sent:
 *
 * | api | base |
 * |---|---|
 * | `auth` | `{auth_url}`, the token issuer |
 * | `fleet` | `{base_url}`, the vehicle-fleet interface (`/v1`) |
 * | `robots` | `{robot_base_url}`, the robot listing |
 * | `gateway` | `{robot_base_url}/api/platform/{deviceId}`, one robot through the device gateway |
 */
export type OperationApi = 'auth' | 'fleet' | 'robots' | 'gateway';

/** The gateway's prefix: every `gateway` operation addresses one device. */
export const GATEWAY_PREFIX = '/api/platform/{deviceId}';

export type OperationGroup =
  | 'Authentication'
  | 'Vehicle Fleet'
  | 'Robot Listing'
  | 'Health Check'
  | 'Vehicle Autonomy'
  | 'Teleop Control'
  | 'Realtime'
  | 'Site Management'
  | 'Route Management'
  | 'Zone Set Management';

export interface OperationParam {
  readonly name: string;
  /**
   * `path`: fills `{name}` of the path template (URL-encoded). `query`: `?name=value`, sent only
   * when given (a boolean only when true). `body`: a field of the JSON body.
   */
  readonly in: 'path' | 'query' | 'body';
  readonly type: 'string' | 'boolean';
  readonly required: boolean;
  readonly description: string;
}

/** The device id of every `gateway` operation: the first argument of its method. */
export const DEVICE_ID_PARAM = {
  name: 'deviceId',
  in: 'path',
  type: 'string',
  required: true,
  description: 'Device ID issued by the operator of the service',
} as const satisfies OperationParam;

/** Whether a request carries a JSON body: never, when the caller gives one, or always. */
export type BodyRule = 'none' | 'optional' | 'required';

/**
 * How a success answer's body is read:
 *
 * - `json`: it must be JSON matching `response`.
 * - `document`: the same, except that a JSON value that is not an object is kept as `{data: value}`
 *   (generic robot reads, whose shape the spec does not give).
 * - `acknowledgement`: the 2xx is what says a write happened; an empty body reads as `{}`, a body
 *   that is not JSON as `{message}` (its first line), anything else as a `document`.
 */
export type AnswerRule = 'json' | 'document' | 'acknowledgement';

/**
 * When a failed request is sent again:
 *
 * - `transient`: after 502/503/504, a time-out or a network error, with backoff and `Retry-After`
 *   (reads, and the token request).
 * - `never`: one attempt (robot writes: whether a second one would do something twice is not
 *   specified).
 * - `power`: like `transient`, but after a failure that may have been accepted the power status is
 *   read first (see `HttpFleetClient`).
 *
 * A 401 is always resent once with a fresh token (`ApiTransport`); that is not a retry.
 */
export type RetryRule = 'transient' | 'never' | 'power';

/** The parameters of an operation as the caller gives them: the device id first on the gateway. */
export function paramsOf(operation: Operation): readonly OperationParam[] {
  return operation.api === 'gateway' ? [DEVICE_ID_PARAM, ...operation.params] : operation.params;
}

/** The path template below the API's base address, gateway prefix included. */
export function pathOf(operation: Operation): string {
  return operation.api === 'gateway' ? `${GATEWAY_PREFIX}${operation.path}` : operation.path;
}

/** The row of `rows` named `name` (a typo does not compile). */
export function operationNamed<R extends Operation, N extends R['name']>(
  rows: readonly R[],
  name: N,
): Extract<R, { name: N }> {
  const found = rows.find((row) => row.name === name);
  if (!found) throw new Error(`no operation named ${name}`);
  return found as Extract<R, { name: N }>;
}

/**
 * What a call of `operation` addresses, in a sentence: its resource, named when it has a name,
 * on `of` (`robot "dev-1"`); `of` alone for an operation on the robot itself. The client's errors
 * and the CLI's confirmations word it alike.
 */
export function resourceSubject(operation: Operation, of: string, name: unknown): string {
  if (!operation.resource) return of;
  return typeof name === 'string'
    ? `${operation.resource} "${name}" on ${of}`
    : `${operation.resource} on ${of}`;
}

/** Whether the body is made of `body` parameters rather than passed whole by the caller. */
export function hasBodyParams(operation: Operation): boolean {
  return operation.params.some((param) => param.in === 'body');
}

// --- Method signatures derived from rows ------------------------------------------------------

type ValueOf<P> = P extends { readonly type: 'boolean' } ? boolean : string;

type ParamArgs<Ps> = Ps extends readonly [infer P, ...infer Rest]
  ? P extends { readonly required: true }
    ? [ValueOf<P>, ...ParamArgs<Rest>]
    : [ValueOf<P>?, ...ParamArgs<Rest>]
  : [];

type DeviceArg<R extends Operation> = R['api'] extends 'gateway' ? [deviceId: string] : [];

type BodyArg<R extends Operation> =
  Extract<R['params'][number], { readonly in: 'body' }> extends never
    ? R['body'] extends 'required'
      ? [body: unknown]
      : R['body'] extends 'optional'
        ? [body?: unknown]
        : []
    : [];

/** A method's arguments: device id (gateway), parameters, body (unless made of parameters), options. */
export type OperationArgs<R extends Operation> = [
  ...DeviceArg<R>,
  ...ParamArgs<R['params']>,
  ...BodyArg<R>,
  CallOptions?,
];

/** What a method resolves to: its reader's value, or the parsed body. */
export type OperationResult<R extends Operation> = R extends {
  readonly result: (body: never, raw: unknown) => infer T;
}
  ? T
  : z.output<R['response']>;

/** A client with one method per row, named and typed by the row. */
export type ClientOf<R extends Operation> = {
  [Row in R as Row['name']]: (...args: OperationArgs<Row>) => Promise<OperationResult<Row>>;
};
