import type { OpenAPIBackend } from 'openapi-backend';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Upstream, UpstreamError } from '../../src/upstream/index.js';
import type { RobotOperation } from '../../src/upstream/operations/robot.js';
import { type ContractServer, type Received, startContractServer } from './contract-server.js';
import { loadRobotContract, ROBOT_OPERATIONS, sampleArgs } from './robots-contract.js';

/**
 * The robot client against the contract, not against our own simulator: a loopback server that
 * knows nothing but `openapi/robots-v2.yaml` validates every request the client sends and answers
 * with bodies generated from the document's schemas, or with an error status.
 */

let api: OpenAPIBackend;
let server: ContractServer;
let upstream: Upstream;
let received: Received[];
/** An error status to answer with, or undefined for the document's success mock. */
let failWith: number | undefined;

const ERROR_BODY = { status: 'error', message: 'refused by the contract server', error: { details: 'test' } };

beforeAll(async () => {
  api = await loadRobotContract();
  server = await startContractServer(api, 'contract-token-456', (operationId) => {
    if (failWith !== undefined) return { status: failWith, body: ERROR_BODY };
    const { status, mock } = api.mockResponseForOperation(operationId);
    return { status, body: mock };
  });
  ({ upstream, received } = server);
});

afterAll(() => server.close());

beforeEach(() => {
  received.length = 0;
  failWith = undefined;
});

/** Calls the client method of `operation` with `args`. */
function invoke(operation: RobotOperation, args: unknown[]): Promise<unknown> {
  // The rows are a union, so the method's type is a union of signatures no single call fits.
  const method = upstream.robots[operation.name] as (...args: unknown[]) => Promise<unknown>;
  return method.apply(upstream.robots, args);
}

describe('the robot client against openapi/robots-v2.yaml', () => {
  it('knows every operation of the document, and the document every row', () => {
    const documented = Object.values(api.definition.paths ?? {}).flatMap((item) =>
      Object.values(item ?? {}).flatMap((op) =>
        typeof op === 'object' && op !== null && 'operationId' in op ? [op.operationId] : [],
      ),
    );
    expect(documented.sort()).toEqual(ROBOT_OPERATIONS.map((operation) => operation.id).sort());
  });

  it.each(ROBOT_OPERATIONS.map((operation) => [operation.name, operation] as const))(
    '%s sends a request the document accepts and reads its success answer',
    async (_name, operation) => {
      await expect(invoke(operation, sampleArgs(operation))).resolves.toBeDefined();
      expect(received).toHaveLength(1);
      const [request] = received;
      expect(request?.operation).toBe(operation.id);
      expect(request?.errors ?? null).toBeNull();
      expect(request?.valid).toBe(true);
      expect(request?.authorization).toBe('Bearer contract-token-456');
      if (operation.body === 'none') {
        expect(request?.bodyLength).toBe(0);
        expect(request?.contentType).toBeUndefined();
      } else {
        expect(request?.contentType).toBe('application/json');
      }
    },
  );

  it.each(ROBOT_OPERATIONS.map((operation) => [operation.name, operation] as const))(
    '%s turns error answers into typed errors naming the operation',
    async (_name, operation) => {
      for (const status of [401, 403, 404, 409, 422, 500, 502, 503, 504]) {
        expect(api.validateResponse(ERROR_BODY, operation.id, status).errors).toBeNull();
        failWith = status;
        const error = await invoke(operation, sampleArgs(operation)).then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error, `status ${status}`).toBeInstanceOf(UpstreamError);
        expect((error as UpstreamError).status).toBe(status);
        expect((error as UpstreamError).operation).toBe(operation.id);
        expect((error as UpstreamError).message).not.toContain('contract-token-456');
      }
    },
  );
});
