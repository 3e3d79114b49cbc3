import { classifyExchange } from '../lib/http-answer.js';
import type { UpstreamConfig } from './config.js';
import type { ErrorContext } from './errors.js';
import type { CallOptions } from './http.js';
import {
  hasBodyParams,
  type Operation,
  type OperationApi,
  paramsOf,
  pathOf,
  resourceSubject,
} from './operations/types.js';

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
 * What `requestFor` needs of a row, worked out once per row: its parameters in argument order, the
 * path template cut at its parameters, which parameters go in the query and the body, and the
 * first path parameter (what errors name).
 */
interface RequestPlan {
  params: Operation['params'];
  /** Literal text, or the position (in `params`) of the parameter whose value goes there. */
  path: ReadonlyArray<string | number>;
  query: readonly number[];
  /** Positions of the body parameters; undefined when the body is not made of parameters. */
  body: readonly number[] | undefined;
  first: number;
  /** The position of the parameter called `name` (a resource's name), or -1. */
  named: number;
}

const plans = new WeakMap<Operation, RequestPlan>();

function planOf(operation: Operation): RequestPlan {
  let plan = plans.get(operation);
  if (plan) return plan;
  const params = paramsOf(operation);
  const positions = (where: string) => params.flatMap((param, index) => (param.in === where ? [index] : []));
  const path = pathOf(operation)
    .split(/\{(\w+)\}/)
    .map((part, index) => (index % 2 === 0 ? part : params.findIndex((param) => param.name === part)))
    .filter((part) => part !== '');
  plan = {
    params,
    path,
    query: positions('query'),
    body: hasBodyParams(operation) ? positions('body') : undefined,
    first: params.findIndex((param) => param.in === 'path'),
    named: params.findIndex((param) => param.name === 'name'),
  };
  plans.set(operation, plan);
  return plan;
}

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
  const plan = planOf(operation);
  const { params } = plan;
  for (let index = 0; index < params.length; index += 1) {
    const param = params[index]!;
    const value = args[index];
    if (value === undefined ? param.required : typeof value !== param.type) {
      throw new TypeError(`${operation.id}: ${param.name} must be a ${param.type} (got ${typeof value})`);
    }
  }
  let next = params.length;
  let json: unknown;
  if (plan.body) {
    const body: Record<string, unknown> = {};
    for (const index of plan.body) if (args[index] !== undefined) body[params[index]!.name] = args[index];
    json = body;
  } else if (operation.body !== 'none') {
    json = args[next++];
  }
  const opts = (args[next] ?? {}) as CallOptions;

  let url = operation.api === 'gateway' ? bases.robots : bases[operation.api];
  for (const part of plan.path)
    url += typeof part === 'string' ? part : encodeURIComponent(String(args[part]));
  let separator = '?';
  for (const index of plan.query) {
    const value = args[index];
    if (value === undefined || value === false) continue;
    url += `${separator}${params[index]!.name}=${encodeURIComponent(String(value))}`;
    separator = '&';
  }
  return { ctx: contextOf(operation, plan, args), url, json, signal: opts.signal };
}

function contextOf(operation: Operation, plan: RequestPlan, args: readonly unknown[]): ErrorContext {
  const target = plan.first < 0 ? undefined : String(args[plan.first]);
  const of = SUBJECTS[operation.api](target);
  const subject = of && resourceSubject(operation, of, plan.named < 0 ? undefined : args[plan.named]);
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
