import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OpenAPIBackend } from 'openapi-backend';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { createUpstream, type Upstream, UpstreamError } from '../../src/upstream/index.js';
import { type FleetOperation, loadFleetContract } from '../support/openapi.js';

/**
 * The client against the contract, not against our own simulator: a loopback server that knows
 * nothing but `openapi/fleet-v1.yaml` validates every request the client sends and answers with
 * the document's own examples, for every status the document lists.
 */

type Operation = FleetOperation;

interface Received {
  operation: string;
  valid: boolean;
  errors: unknown;
  authorization?: string;
  contentType?: string;
  bodyLength: number;
}

let api: OpenAPIBackend;
let server: Server;
let upstream: Upstream;
const documented = new Map<Operation, number[]>();
const received: Received[] = [];
let answerWith = 200;

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

beforeAll(async () => {
  const contract = await loadFleetContract();
  api = contract.api;
  for (const [operation, statuses] of contract.documented) documented.set(operation, [...statuses]);

  server = createServer(async (request, response) => {
    const body = await readBody(request);
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname === '/oauth/token') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ access_token: 'contract-token-123', token_type: 'Bearer', expires_in: 3600 }),
      );
      return;
    }
    const openapiRequest = {
      method: request.method ?? 'GET',
      path: url.pathname,
      headers: request.headers as Record<string, string>,
      query: Object.fromEntries(url.searchParams),
      body: body === '' ? undefined : body,
    };
    const operation = api.matchOperation(openapiRequest);
    if (!operation) {
      response.writeHead(404).end();
      return;
    }
    const validation = api.validateRequest(openapiRequest, operation);
    received.push({
      operation: operation.operationId ?? '?',
      valid: validation.valid,
      errors: validation.errors,
      authorization: request.headers.authorization,
      contentType: request.headers['content-type'],
      bodyLength: body.length,
    });
    const { status, mock } = api.mockResponseForOperation(operation.operationId ?? '', { code: answerWith });
    response.writeHead(status, mock === undefined ? {} : { 'content-type': 'application/json' });
    response.end(mock === undefined ? undefined : JSON.stringify(mock));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const config = configSchema.parse({
    upstream: {
      base_url: url,
      robot_base_url: url,
      auth_url: url,
      client_id: 'contract',
      client_secret: 'contract-secret',
      http: { retries: 0 },
    },
  });
  upstream = createUpstream({ config: config.upstream });
});

afterAll(async () => {
  await upstream.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  received.length = 0;
  answerWith = 200;
});

const calls: Record<Operation, () => Promise<unknown>> = {
  list_vehicles: () => upstream.fleet.listVehicles(),
  get_vehicle_power_status: () => upstream.fleet.getPowerStatus('veh/00 1'),
  request_vehicle_power_on: () => upstream.fleet.requestPowerOn('veh/00 1'),
  request_vehicle_power_off: () => upstream.fleet.requestPowerOff('veh/00 1'),
};

describe('the client against openapi/fleet-v1.yaml', () => {
  it('knows every operation of the document', () => {
    expect([...documented.keys()].sort()).toEqual(Object.keys(calls).sort());
  });

  it.each(Object.keys(calls) as Operation[])('%s sends a request the document accepts', async (operation) => {
    answerWith = operation.startsWith('request_') ? 202 : 200;
    await calls[operation]();
    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request?.operation).toBe(operation);
    expect(request?.errors ?? null).toBeNull();
    expect(request?.valid).toBe(true);
    expect(request?.authorization).toBe('Bearer contract-token-123');
    if (operation.startsWith('request_')) {
      // The spec: "no body must be sent".
      expect(request?.bodyLength).toBe(0);
      expect(request?.contentType).toBeUndefined();
    }
  });

  it("parses the document's success examples", async () => {
    answerWith = 200;
    const vehicles = await upstream.fleet.listVehicles();
    expect(vehicles.length).toBeGreaterThan(0);
    const status = await upstream.fleet.getPowerStatus('veh-0001');
    expect(['on', 'off', 'unknown']).toContain(status.state);
    expect(status).toHaveProperty('pendingCommand');
    expect(status).toHaveProperty('updatedAt');
    answerWith = 202;
    await expect(upstream.fleet.requestPowerOn('veh-0001')).resolves.toBeUndefined();
  });

  for (const operation of [
    'list_vehicles',
    'get_vehicle_power_status',
    'request_vehicle_power_on',
    'request_vehicle_power_off',
  ] as const) {
    it(`${operation} turns every documented error status into a typed error carrying it`, async () => {
      const statuses = (documented.get(operation) ?? []).filter((status) => status >= 400);
      expect(statuses.length).toBeGreaterThan(0);
      for (const status of statuses) {
        answerWith = status;
        const error = await calls[operation]().then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error, `status ${status}`).toBeInstanceOf(UpstreamError);
        expect((error as UpstreamError).status, `status ${status}`).toBe(status);
        expect((error as UpstreamError).operation).toBe(operation);
        expect((error as UpstreamError).message).not.toContain('contract-token-123');
      }
    });
  }
});
