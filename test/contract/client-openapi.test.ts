import type { OpenAPIBackend } from 'openapi-backend';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Upstream, UpstreamError } from '../../src/upstream/index.js';
import { type FleetOperation, loadFleetContract } from '../support/openapi.js';
import { type ContractServer, type Received, startContractServer } from './contract-server.js';

/**
 * The client against the contract, not against our own simulator: a loopback server that knows
 * nothing but `openapi/fleet-v1.yaml` validates every request the client sends and answers with
 * the document's own examples, for every status the document lists.
 */

type Operation = FleetOperation;

let api: OpenAPIBackend;
let server: ContractServer;
let upstream: Upstream;
const documented = new Map<Operation, number[]>();
let received: Received[];
let answerWith = 200;

beforeAll(async () => {
  const contract = await loadFleetContract();
  api = contract.api;
  for (const [operation, statuses] of contract.documented) documented.set(operation, [...statuses]);
  server = await startContractServer(api, 'contract-token-123', (operationId) => {
    const { status, mock } = api.mockResponseForOperation(operationId, { code: answerWith });
    return { status, body: mock };
  });
  ({ upstream, received } = server);
});

afterAll(() => server.close());

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
    expect(vehicles.items.length).toBeGreaterThan(0);
    expect(vehicles.rejected).toEqual([]);
    const status = await upstream.fleet.getPowerStatus('veh-0001');
    expect(['on', 'off', 'unknown']).toContain(status.state);
    expect(status).toHaveProperty('pendingCommand');
    expect(status).toHaveProperty('updatedAt');
    answerWith = 202;
    await expect(upstream.fleet.requestPowerOn('veh-0001')).resolves.toEqual({ status: 202 });
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
