import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ErrorContext } from '../../src/upstream/errors.js';
import { type ApiBases, type OperationRequest, requestFor } from '../../src/upstream/operation-request.js';
import { FLEET_OPERATIONS } from '../../src/upstream/operations/fleet.js';
import { ROBOT_OPERATIONS } from '../../src/upstream/operations/robot.js';
import {
  hasBodyParams,
  type Operation,
  type OperationApi,
  paramsOf,
  pathOf,
} from '../../src/upstream/operations/types.js';

const BASES: ApiBases = {
  auth: 'http://issuer.test/token',
  fleet: 'http://fleet.test/base',
  robots: 'http://robots.test',
};

const SUBJECTS: Record<OperationApi, (target: string | undefined) => string | undefined> = {
  auth: () => 'the token issuer',
  fleet: (target) => (target === undefined ? undefined : `vehicle "${target}"`),
  robots: () => undefined,
  gateway: (target) => (target === undefined ? undefined : `robot "${target}"`),
};

/** The request by definition: every parameter looked up by name, the path template filled in. */
function byDefinition(operation: Operation, args: readonly unknown[]): OperationRequest {
  const params = paramsOf(operation);
  const values = new Map(params.map((param, index) => [param.name, args[index]]));
  let next = params.length;
  let json: unknown;
  if (hasBodyParams(operation)) {
    const fields = params.filter((param) => param.in === 'body' && values.get(param.name) !== undefined);
    json = Object.fromEntries(fields.map((param) => [param.name, values.get(param.name)]));
  } else if (operation.body !== 'none') {
    json = args[next++];
  }
  const opts = (args[next] ?? {}) as { signal?: AbortSignal };
  const path = pathOf(operation).replace(/\{(\w+)\}/g, (_, key: string) =>
    encodeURIComponent(String(values.get(key))),
  );
  const query = params
    .filter((param) => param.in === 'query' && values.get(param.name) !== undefined)
    .filter((param) => values.get(param.name) !== false)
    .map((param) => `${param.name}=${encodeURIComponent(String(values.get(param.name)))}`);
  const base = operation.api === 'gateway' ? BASES.robots : BASES[operation.api];
  const url = `${base}${path}${query.length ? `?${query.join('&')}` : ''}`;
  const first = params.find((param) => param.in === 'path');
  const target = first === undefined ? undefined : String(values.get(first.name));
  let subject = SUBJECTS[operation.api](target);
  const name = values.get('name');
  if (operation.resource && subject) {
    subject =
      typeof name === 'string'
        ? `${operation.resource} "${name}" on ${subject}`
        : `${operation.resource} on ${subject}`;
  }
  const ctx: ErrorContext = { operation: operation.id };
  if (target !== undefined) ctx.target = target;
  if (subject !== undefined) ctx.subject = subject;
  if (operation.notFound !== undefined) ctx.notFound = operation.notFound;
  return { ctx, url, json, signal: opts.signal };
}

const OPERATIONS: readonly Operation[] = [...FLEET_OPERATIONS, ...ROBOT_OPERATIONS];

/** Arguments a caller may pass: each parameter of its type (optional ones may be left out), a body, options. */
function argsOf(operation: Operation): fc.Arbitrary<unknown[]> {
  const text = fc.string({ unit: 'binary', maxLength: 12 });
  const params = paramsOf(operation).map((param) => {
    const value: fc.Arbitrary<unknown> = param.type === 'boolean' ? fc.boolean() : text;
    return param.required ? value : fc.option(value, { nil: undefined });
  });
  const body = hasBodyParams(operation) || operation.body === 'none' ? [] : [fc.jsonValue()];
  return fc.tuple(...params, ...body, fc.constant({ signal: new AbortController().signal }));
}

describe('requestFor', () => {
  it('builds, for every row, the request its definition gives', () => {
    for (const operation of OPERATIONS) {
      fc.assert(
        fc.property(argsOf(operation), (args) => {
          expect(requestFor(operation, BASES, args)).toEqual(byDefinition(operation, args));
        }),
        { numRuns: 60 },
      );
    }
  });

  it('names the parameter and the type it expected', () => {
    const operation = OPERATIONS.find((row) => paramsOf(row).some((param) => param.required))!;
    const param = paramsOf(operation).find((each) => each.required)!;
    expect(() => requestFor(operation, BASES, [])).toThrow(
      `${operation.id}: ${param.name} must be a ${param.type} (got undefined)`,
    );
  });
});
