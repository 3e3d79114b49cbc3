import { draft, EVENT } from '../catalogue.js';
import { createMembershipDetector } from './membership.js';

/**
 * `vehicle.discovered` / `vehicle.removed` from GET /v1/vehicles (value: the list's ids). See
 * membership.ts for the rules; the drafts carry `data.vehicleId`, which is the event's subject.
 */
export const vehicleMembershipDetector = createMembershipDetector({
  discovered: (vehicleId) => draft(EVENT.vehicleDiscovered, { vehicleId }),
  removed: (vehicleId, detail) => draft(EVENT.vehicleRemoved, { vehicleId, ...detail }),
});
