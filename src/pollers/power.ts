import { isRecord } from '../events/detectors/define.js';
import { vehiclePowerDetector } from '../events/detectors/vehicle-power.js';
import { defineEntityPoller, type EntityTarget } from './entity-poller.js';

function lastPolledMs(target: EntityTarget): number {
  const times = [target.record.observedAt, target.record.lastPolledAt]
    .map((iso) => (iso === undefined ? Number.NaN : Date.parse(iso)))
    .filter(Number.isFinite);
  return times.length > 0 ? Math.max(...times) : Number.NEGATIVE_INFINITY;
}

/**
 * `power`: `GET /v1/vehicles/{id}/power/status` per vehicle of the shard (→ power, command,
 * staleness, reachability and `vehicle.power.unsupported` events). A failure is an observation
 * error with the client's code and status (a 502/503/504 or time-out feeds reachability; a 404
 * marks the vehicle not power-capable). A vehicle whose snapshot says `powerCapable: false` is
 * polled again only once `pollers.power.unsupported_interval` has passed since its last poll
 * (the later of its last commit and its last recorded poll).
 */
export const powerPoller = defineEntityPoller({
  name: 'power',
  kind: 'vehicle',
  signal: 'power',
  detector: vehiclePowerDetector,
  options: (ctx) => ctx.detectors.vehiclePower,
  read: (ctx, id, signal) => ctx.upstream.fleet.getPowerStatus(id, { signal }),
  select: (ctx, targets) => {
    const now = ctx.now();
    const every = ctx.config.pollers.power.unsupported_interval;
    return targets.filter((target) => {
      const state = target.record.state;
      if (!isRecord(state) || state.powerCapable !== false) return true;
      return now - lastPolledMs(target) >= every;
    });
  },
});
