import { z } from 'zod';
import { type ListReading, readElements } from '../list-elements.js';

/**
 * The vehicle-fleet interface (`/v1`), exactly as the spec describes it. Unknown fields are
 * dropped; a missing required field, a wrong type, a bad IPv4 address or an envelope whose
 * `status` is not `"success"` fails the parse (→ `InvalidPayloadError`). The vehicle list alone
 * is checked element by element (`vehicleListOf`): a malformed vehicle is rejected by itself.
 */

export const powerStateSchema = z.enum(['on', 'off', 'unknown']);
export type PowerState = z.output<typeof powerStateSchema>;

export const powerTargetSchema = z.enum(['on', 'off']);
export type PowerTarget = z.output<typeof powerTargetSchema>;

export const vehicleSummarySchema = z.object({
  id: z.string().min(1),
  /** Omitted when the vehicle has no VPN address. */
  ipAddress: z.ipv4().optional(),
  vpnConnected: z.boolean(),
});
export type VehicleSummary = z.output<typeof vehicleSummarySchema>;

export const pendingCommandSchema = z.object({ state: powerTargetSchema });
export type PendingCommand = z.output<typeof pendingCommandSchema>;

export const powerStatusSchema = z.object({
  state: powerStateSchema,
  /** Present; null when no command is pending. */
  pendingCommand: pendingCommandSchema.nullable(),
  /** Present; null when no state was ever reported. ISO 8601 date-time with `Z` or an offset. */
  updatedAt: z.iso.datetime({ offset: true }).nullable(),
});
export type PowerStatus = z.output<typeof powerStatusSchema>;

/** The list's envelope; its elements are checked one by one (`vehicleListOf`). */
export const vehicleListResponseSchema = z.object({
  status: z.literal('success'),
  data: z.array(z.unknown()),
});
export type VehicleListResponse = z.output<typeof vehicleListResponseSchema>;

/** What `listVehicles` returns: the vehicles that match the spec, and the elements that do not. */
export type VehicleList = ListReading<VehicleSummary>;

/** The id of a vehicle list element, when it has a readable one (a non-empty string `id`). */
export function vehicleIdOf(element: unknown): string | undefined {
  if (typeof element !== 'object' || element === null || Array.isArray(element)) return undefined;
  const { id } = element as { id?: unknown };
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** The vehicle list, element by element (see list-elements.ts). */
export function vehicleListOf(body: VehicleListResponse): VehicleList {
  return readElements(body.data, {
    operation: 'list_vehicles',
    schema: vehicleSummarySchema,
    noun: 'vehicle',
    idOf: vehicleIdOf,
  });
}

export const powerStatusResponseSchema = z.object({
  status: z.literal('success'),
  data: powerStatusSchema,
});
export type PowerStatusResponse = z.output<typeof powerStatusResponseSchema>;

export const commandAcceptedResponseSchema = z.object({
  status: z.literal('success'),
});
export type CommandAcceptedResponse = z.output<typeof commandAcceptedResponseSchema>;
