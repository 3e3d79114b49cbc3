import { vehicleLinkDetector } from '../events/detectors/vehicle-link.js';
import { vehicleMembershipDetector } from '../events/detectors/vehicle-membership.js';
import { forgetRemoved } from './forget-removed.js';
import { mapObservation } from './observe.js';
import type { Poller } from './poller.js';
import { membershipRef } from './types.js';

/**
 * `vehicles`: one `GET /v1/vehicles` per tick. The list is the membership observation of the
 * `fleet` ref `vehicle/membership` (→ `vehicle.discovered` / `vehicle.removed`), and each listed
 * vehicle's entry is a `link` observation `{vpnConnected, ipAddress}` (→ VPN and IP events). A
 * failed list is an observation error on the membership ref only: it removes nothing and says
 * nothing about any vehicle's link.
 */
export const vehiclesPoller: Poller = {
  name: 'vehicles',
  async poll(ctx) {
    const list = await ctx.observe((signal) => ctx.upstream.fleet.listVehicles({ signal }));
    const membership = await ctx.commit(
      {
        poller: 'vehicles',
        detector: vehicleMembershipDetector,
        options: ctx.detectors.vehicleMembership,
      },
      [
        {
          ref: membershipRef('vehicle'),
          observation: mapObservation(list, (vehicles) => vehicles.map((v) => v.id)),
        },
      ],
    );
    await forgetRemoved(ctx, 'vehicle', membership.events);
    if (!list.ok) return;
    await ctx.commit(
      { poller: 'vehicles', detector: vehicleLinkDetector, options: ctx.detectors.vehicleLink },
      list.value.map((vehicle) => ({
        ref: { kind: 'vehicle' as const, id: vehicle.id, signal: 'link' },
        observation: {
          ok: true as const,
          at: list.at,
          value: { vpnConnected: vehicle.vpnConnected, ipAddress: vehicle.ipAddress },
        },
      })),
    );
  },
};
