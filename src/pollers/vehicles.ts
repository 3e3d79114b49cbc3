import { vehicleLinkDetector } from '../events/detectors/vehicle-link.js';
import { vehicleMembershipDetector } from '../events/detectors/vehicle-membership.js';
import { commitList } from './list-poll.js';
import { toObservationError } from './observe.js';
import { definePoller } from './poller.js';
import { listSettings } from './settings.js';

/** Each listed vehicle's VPN state and address: the vehicle's `link` facet. */
const LINK = { kind: 'vehicle', facet: 'link' } as const;

/**
 * `vehicles`: one `GET /v1/vehicles` per tick. The list is the membership observation of the
 * `fleet` ref `vehicle/membership` (→ `vehicle.discovered` / `vehicle.removed`), and each listed
 * vehicle's entry is a `link` observation `{vpnConnected, ipAddress}` (→ VPN and IP events). A
 * failed list is an observation error on the membership ref only: it removes nothing and says
 * nothing about any vehicle's link. An element that does not match the spec but names its
 * vehicle is that vehicle's `link` observation error (its last error in the API), and the vehicle
 * stays listed; see list-poll.ts.
 */
export const vehiclesPoller = definePoller({
  name: 'vehicles',
  settings: listSettings(30_000),
  reads: 'fleet',
  writes: LINK,
  async poll(ctx) {
    const list = await ctx.observe((signal) => ctx.upstream.fleet.listVehicles({ signal }));
    await commitList(ctx, list, {
      poller: 'vehicles',
      kind: 'vehicle',
      upstream: 'fleet',
      detector: vehicleMembershipDetector,
      options: ctx.detectors.vehicleMembership,
      idOf: (vehicle) => vehicle.id,
      facetKeepsNamed: true,
    });
    if (!list.ok) return;
    const refOf = (id: string) => ({ kind: LINK.kind, id, facet: LINK.facet });
    await ctx.commit(
      // list-poll.ts logs malformed elements once per change, not on every poll.
      { poller: 'vehicles', detector: vehicleLinkDetector, options: ctx.detectors.vehicleLink, quiet: true },
      [
        ...list.value.rejected.flatMap((element) =>
          element.id === undefined
            ? []
            : [
                {
                  ref: refOf(element.id),
                  observation: { ok: false as const, at: list.at, error: toObservationError(element.error) },
                },
              ],
        ),
        ...list.value.items.map((vehicle) => ({
          ref: refOf(vehicle.id),
          observation: {
            ok: true as const,
            at: list.at,
            value: { vpnConnected: vehicle.vpnConnected, ipAddress: vehicle.ipAddress },
          },
        })),
      ],
    );
  },
});
