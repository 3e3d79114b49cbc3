import { isRecord } from '../events/detectors/define.js';
import { vehiclePowerDetector } from '../events/detectors/vehicle-power.js';
import { durationField } from '../lib/fields.js';
import { defineEntityPoller, type EntityTarget } from './entity-poller.js';
import { batchSettings } from './settings.js';

function lastPolledMs(target: EntityTarget): number {
  const times = [target.record.observedAt, target.record.lastPolledAt]
    .map((iso) => (iso === undefined ? Number.NaN : Date.parse(iso)))
    .filter(Number.isFinite);
  return times.length > 0 ? Math.max(...times) : Number.NEGATIVE_INFINITY;
}

/**
 * How long after its last poll a vehicle judged not power-capable is asked again: the time it had
 * been without power control at that poll, plus `firstMs`, at most `capMs`. So the first re-check
 * comes `firstMs` after the 404 that judged it and each later one twice as long after the one
 * before: with the defaults 1, 2, 4, 8, 16 and 32 minutes apart (1, 3, 7, 15, 31 and 63 minutes
 * after the 404), then every hour. Without the time it was judged (a snapshot written before it
 * was kept), the schedule starts over from its last poll.
 */
export function recheckDelay(
  unsupportedSince: number | undefined,
  lastPolled: number,
  firstMs: number,
  capMs: number,
): number {
  const since =
    unsupportedSince !== undefined && unsupportedSince <= lastPolled ? unsupportedSince : lastPolled;
  return Math.min(capMs, lastPolled - since + firstMs);
}

/**
 * `power`: `GET /v1/vehicles/{id}/power/status` per vehicle of the shard (→ power, command,
 * staleness, reachability and `vehicle.power.unsupported` / `supported` events), in batches of
 * `batch_size` vehicles per job. A failure is an observation error with the client's code and
 * status (a 502/503/504 or time-out feeds reachability; a 404 marks the vehicle not
 * power-capable). A vehicle whose snapshot says `powerCapable: false` is polled again only when
 * its re-check is due (`recheckDelay`: from `pollers.power.unsupported_recheck`, doubling, up to
 * `pollers.power.unsupported_interval`), counted from its last poll (the later of its last
 * commit and its last recorded poll).
 */
export const powerPoller = defineEntityPoller({
  name: 'power',
  settings: batchSettings(30_000, 200).extend({
    /** A vehicle that answered 404 (not power-capable) is asked again at most this far apart. */
    unsupported_interval: durationField(1_000, 7 * 86_400_000).default(3_600_000),
    /** ... and first this long after the 404, each later re-check waiting twice as long. */
    unsupported_recheck: durationField(1_000, 86_400_000).default(60_000),
  }),
  kind: 'vehicle',
  facet: 'power',
  detector: vehiclePowerDetector,
  options: (ctx) => ctx.detectors.vehiclePower,
  read: (ctx, id, signal) => ctx.upstream.fleet.getPowerStatus(id, { signal }),
  // A 404 says the vehicle has no power control (or left the list): what the detector is for.
  answers: ['not_found'],
  select: (ctx, targets, settings) => {
    const now = ctx.now();
    return targets.filter((target) => {
      const state = target.record.state;
      if (!isRecord(state) || state.powerCapable !== false) return true;
      const since = typeof state.unsupportedSince === 'number' ? state.unsupportedSince : undefined;
      const last = lastPolledMs(target);
      if (!Number.isFinite(last)) return true;
      const delay = recheckDelay(since, last, settings.unsupported_recheck, settings.unsupported_interval);
      return now - last >= delay;
    });
  },
});
