import { readFile } from 'node:fs/promises';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const load = async (name: string) =>
  parse(await readFile(new URL(`../../openapi/${name}`, import.meta.url), 'utf8')) as Record<string, unknown>;

type Doc = {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, { operationId: string; requestBody?: unknown; responses: object }>>;
  components: { securitySchemes: Record<string, { type: string; scheme: string }> };
};

describe('openapi/fleet-v1.yaml', () => {
  it('is a valid OpenAPI 3.0.3 document', async () => {
    const result = await new Validator().validate(await load('fleet-v1.yaml'));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

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

describe('openapi/auth.yaml', () => {
  it('is a valid OpenAPI 3.0.3 document', async () => {
    const result = await new Validator().validate(await load('auth.yaml'));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });
});
