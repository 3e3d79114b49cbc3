import { readFile } from 'node:fs/promises';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { FLEET_OPERATIONS } from '../../src/upstream/operations/fleet.js';
import { renderRobotsOpenApi } from '../../src/upstream/operations/openapi.js';
import { ROBOT_OPERATIONS } from '../../src/upstream/operations/robot.js';
import { pathOf } from '../../src/upstream/operations/types.js';

const text = (name: string) => readFile(new URL(`../../openapi/${name}`, import.meta.url), 'utf8');
const load = async (name: string) => parse(await text(name)) as Record<string, unknown>;

/** `METHOD path operationId` of every operation of a document. */
const operationsOf = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
  );

type Doc = {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, { operationId: string; requestBody?: unknown; responses: object }>>;
  components: { securitySchemes: Record<string, { type: string; scheme: string }> };
};

describe.each(['fleet-v1.yaml', 'auth.yaml', 'robots-v2.yaml'])('openapi/%s', (name) => {
  it('is a valid OpenAPI 3.0.3 document', async () => {
    const result = await new Validator().validate(await load(name));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });
});

describe('openapi/fleet-v1.yaml', () => {
  it('describes exactly the four /v1 operations with the spec error statuses', async () => {
    const doc = (await load('fleet-v1.yaml')) as unknown as Doc;
    expect(doc.openapi).toBe('3.0.3');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.components.securitySchemes['bearerAuth']).toEqual(
      expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    );
    const ops: Record<string, string[]> = {};
    for (const [path, item] of Object.entries(doc.paths)) {
      expect(path.startsWith('/v1/')).toBe(true);
      for (const op of Object.values(item)) {
        expect(op.requestBody).toBeUndefined();
        ops[op.operationId] = Object.keys(op.responses).sort();
      }
    }
    const vehicleOp = ['401', '403', '404', '500', '502', '503', '504'];
    expect(ops).toEqual({
      list_vehicles: ['200', '401', '403', '500'],
      get_vehicle_power_status: ['200', ...vehicleOp],
      request_vehicle_power_on: ['202', ...vehicleOp],
      request_vehicle_power_off: ['202', ...vehicleOp],
    });
  });
});

describe('openapi/fleet-v1.yaml and the /v1 rows of the operation table', () => {
  it('agree on every operation: method, path and operation id', async () => {
    const doc = (await load('fleet-v1.yaml')) as unknown as Doc;
    expect(operationsOf(doc).sort()).toEqual(
      FLEET_OPERATIONS.map((op) => `${op.method} ${pathOf(op)} ${op.id}`).sort(),
    );
  });
});

describe('openapi/robots-v2.yaml', () => {
  it('is what the operation table renders (npm run generate:openapi)', async () => {
    expect(await text('robots-v2.yaml')).toBe(renderRobotsOpenApi());
  });

  it('has exactly one operation per robot row, at its method and path', async () => {
    const doc = (await load('robots-v2.yaml')) as unknown as Doc;
    expect(doc.openapi).toBe('3.0.3');
    expect(operationsOf(doc).sort()).toEqual(
      ROBOT_OPERATIONS.map((op) => `${op.method} ${pathOf(op)} ${op.id}`).sort(),
    );
  });
});
