import { classifyExchange } from '../lib/http-answer.js';
import type { UpstreamConfig } from './config.js';
import type { ErrorContext } from './errors.js';
import type { CallOptions } from './http.js';
import { hasBodyParams, type Operation, type OperationApi, paramsOf, pathOf } from './operations/types.js';

/**
 * How a row of the operation table and a caller's arguments become a request: the URL, the JSON
 * body and the error context that names the operation and what it addressed.
 */

/** The base address of each API (without a trailing slash); the gateway is below `robots`. */
export interface ApiBases {
  auth: string;
  fleet: string;
  robots: string;
}

export function apiBases(config: UpstreamConfig): ApiBases {
  const bare = (url: string) => url.replace(/\/+$/, '');
  return { auth: config.auth_url, fleet: bare(config.base_url), robots: bare(config.robot_base_url) };
}

export interface OperationRequest {
  ctx: ErrorContext;
  url: string;
  /** The JSON body; undefined sends none. */
  json: unknown;
  signal: AbortSignal | undefined;
}

/** How errors name what an operation addressed, from its first path parameter. */
const SUBJECTS: Record<OperationApi, (target: string | undefined) => string | undefined> = {
  auth: () => 'the token issuer',
  fleet: (target) => (target === undefined ? undefined : `vehicle "${target}"`),
  robots: () => undefined,
  gateway: (target) => (target === undefined ? undefined : `robot "${target}"`),
};

/**
 * The request for `operation` called with `args`, positional as its method takes them: the
 * parameters (device id first on the gateway), the body unless it is made of parameters, then the
 * call options. Path parameters are URL-encoded; a query parameter is sent only when given (a
 * boolean only when true).
 */
export function requestFor(
  operation: Operation,
  bases: ApiBases,
  args: readonly unknown[],
): OperationRequest {
  const params = paramsOf(operation);
  const values = new Map<string, unknown>();
  params.forEach((param, index) => {
    const value = args[index];
    if (value === undefined ? param.required : typeof value !== param.type) {
      throw new TypeError(`${operation.id}: ${param.name} must be a ${param.type} (got ${typeof value})`);
    }
    values.set(param.name, value);
  });
  let next = params.length;
  let json: unknown;
  if (hasBodyParams(operation)) {
    const fields = params.filter((param) => param.in === 'body' && values.get(param.name) !== undefined);
    json = Object.fromEntries(fields.map((param) => [param.name, values.get(param.name)]));
  } else if (operation.body !== 'none') {
    json = args[next++];
  }
  const opts = (args[next] ?? {}) as CallOptions;

  const path = pathOf(operation).replace(/\{(\w+)\}/g, (_, key: string) =>
    encodeURIComponent(String(values.get(key))),
  );
  const query = params
    .filter((param) => param.in === 'query' && values.get(param.name) !== undefined)
    .filter((param) => values.get(param.name) !== false)
    .map((param) => `${param.name}=${encodeURIComponent(String(values.get(param.name)))}`);
  const base = operation.api === 'gateway' ? bases.robots : bases[operation.api];
  const url = `${base}${path}${query.length ? `?${query.join('&')}` : ''}`;
  return { ctx: contextOf(operation, params, values), url, json, signal: opts.signal };
}

function contextOf(
  operation: Operation,
  params: Operation['params'],
  values: ReadonlyMap<string, unknown>,
): ErrorContext {
  const first = params.find((param) => param.in === 'path');
  const target = first === undefined ? undefined : String(values.get(first.name));
  let subject = SUBJECTS[operation.api](target);
  const name = values.get('name');
  if (operation.resource && subject && typeof name === 'string') {
    subject = `${operation.resource} "${name}" on ${subject}`;
  }
  const ctx: ErrorContext = { operation: operation.id };
  if (target !== undefined) ctx.target = target;
  if (subject !== undefined) ctx.subject = subject;
  if (operation.notFound !== undefined) ctx.notFound = operation.notFound;
  return ctx;
}

/** Whether `status` is the row's success. */
export function succeeded(operation: Operation, status: number): boolean {
  return operation.success === 'any-2xx'
    ? classifyExchange(status) === 'success'
    : status === operation.success;
}
