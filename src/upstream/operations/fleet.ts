import { tokenRequestSchema, tokenResponseSchema } from '../schemas/token.js';
import {
  commandAcceptedResponseSchema,
  powerStatusResponseSchema,
  vehicleListOf,
  vehicleListResponseSchema,
} from '../schemas/v1.js';
import type { Operation } from './types.js';

/**
 * The vehicle-fleet interface (`/v1`, described by `openapi/fleet-v1.yaml`) and the token request
 * (`openapi/auth.yaml`). `HttpFleetClient` and the token provider take method, path, operation id,
 * success status and schema from these rows; their retry behaviour is their own (see each).
 */

const VEHICLE_ID = {
  name: 'vehicleId',
  in: 'path',
  type: 'string',
  required: true,
  description: 'Vehicle ID issued by the operator',
} as const;

/**
 * What the four operations share: one vehicle each (bar the list), no body, strict JSON answers,
 * and the spec's three meanings of a 404 (the list has none).
 */
const FLEET = {
  api: 'fleet',
  group: 'Vehicle Fleet',
  params: [VEHICLE_ID],
  body: 'none',
  answer: 'json',
  destructive: false,
  notFound: 'not found, not available to this client, or not power-capable',
} as const;

/** Reads: exactly 200, retried on transient failures. */
const READ = { ...FLEET, method: 'GET', success: 200, retry: 'transient' } as const;

/**
 * Power requests: exactly 202 (accepted, not carried out), retried and reconciled with the power
 * status (see `HttpFleetClient`).
 */
const POWER_REQUEST = {
  ...FLEET,
  method: 'POST',
  success: 202,
  response: commandAcceptedResponseSchema,
  retry: 'power',
} as const;

export const FLEET_OPERATIONS = [
  {
    ...READ,
    name: 'listVehicles',
    id: 'list_vehicles',
    summary: 'List the vehicles the calling API client may access',
    path: '/v1/vehicles',
    params: [],
    response: vehicleListResponseSchema,
    result: vehicleListOf,
  },
  {
    ...READ,
    name: 'getPowerStatus',
    id: 'get_vehicle_power_status',
    summary: 'Read the most recently reported power state and the pending power command',
    path: '/v1/vehicles/{vehicleId}/power/status',
    response: powerStatusResponseSchema,
  },
  {
    ...POWER_REQUEST,
    name: 'requestPowerOn',
    id: 'request_vehicle_power_on',
    summary: 'Request power on',
    path: '/v1/vehicles/{vehicleId}/power/on',
  },
  {
    ...POWER_REQUEST,
    name: 'requestPowerOff',
    id: 'request_vehicle_power_off',
    summary: 'Request power off',
    path: '/v1/vehicles/{vehicleId}/power/off',
  },
] as const satisfies readonly Operation[];

export type FleetOperation = (typeof FLEET_OPERATIONS)[number];

/** The client-credentials token request at `{auth_url}`. */
export const TOKEN_OPERATION = {
  name: 'getToken',
  id: 'oauth_token',
  api: 'auth',
  group: 'Authentication',
  summary: 'Obtain a bearer token with the client-credentials grant',
  method: 'POST',
  path: '/oauth/token',
  params: [],
  body: 'required',
  request: tokenRequestSchema,
  success: 'any-2xx',
  response: tokenResponseSchema,
  answer: 'json',
  retry: 'transient',
  destructive: false,
} as const satisfies Operation;
