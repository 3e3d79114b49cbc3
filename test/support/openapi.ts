import { readFile } from 'node:fs/promises';
import { OpenAPIBackend } from 'openapi-backend';
import { parse } from 'yaml';

export type FleetOperation =
  | 'list_vehicles'
  | 'get_vehicle_power_status'
  | 'request_vehicle_power_on'
  | 'request_vehicle_power_off';

type Document = {
  paths: Record<string, Record<string, { operationId: FleetOperation; responses: Record<string, unknown> }>>;
};

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i;

/** `openapi/fleet-v1.yaml` as a validator, plus the statuses it documents per operation. */
export async function loadFleetContract(): Promise<{
  api: OpenAPIBackend;
  documented: Map<FleetOperation, Set<number>>;
}> {
  const definition = parse(
    await readFile(new URL('../../openapi/fleet-v1.yaml', import.meta.url), 'utf8'),
  ) as Document;
  const documented = new Map<FleetOperation, Set<number>>();
  for (const item of Object.values(definition.paths)) {
    for (const operation of Object.values(item)) {
      documented.set(operation.operationId, new Set(Object.keys(operation.responses).map(Number)));
    }
  }
  const api = new OpenAPIBackend({
    definition: definition as unknown as ConstructorParameters<typeof OpenAPIBackend>[0]['definition'],
    // openapi-backend ignores formats it does not know; check the two the document uses.
    customizeAjv: (ajv) => {
      ajv.addFormat('ipv4', IPV4);
      ajv.addFormat('date-time', DATE_TIME);
      return ajv;
    },
  });
  await api.init();
  return { api, documented };
}
