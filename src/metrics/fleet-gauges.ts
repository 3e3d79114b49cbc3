import type { Logger } from 'pino';
import type { Counter, Gauge } from 'prom-client';
import {
  COMMAND_STATUSES,
  type EntityGauges,
  type FleetReading,
  FleetReadModel,
  type FleetStore,
  HEALTH_STATUSES,
  POWER_LABELS,
  readThreshold,
  stateV1,
  VPN_STATUSES,
} from '../fleet/index.js';
import { LIST_UPSTREAMS, listRef } from '../pollers/list-ref.js';
import { paceRef } from '../pollers/pace.js';
import { upstreamRef } from '../pollers/upstream-windows.js';
import type { SnapshotRef } from '../store/snapshot-store.js';
import { UPSTREAM_NAMES } from '../upstream/names.js';
import { ScrapedGauges } from './cache.js';
import { Tally } from './tally.js';

/**
 * The fleet gauges, filled at scrape time (each gauge's `collect`) from one cached `FleetReading`
 * (`FleetReadModel.readFleet`, one model kept while bound): a scrape reads the fleet at most once
 * per `cacheMs`, however many gauges and however many scrapers. A reading is applied to all gauges
 * once; the per-entity gauges are reset first, so a vehicle or robot that left the fleet leaves
 * the exposition. When the store cannot be read, the gauges keep the last reading
 * (`fleetwatch_fleet_read_timestamp_seconds` shows its age) and
 * `fleetwatch_metrics_collect_errors_total{source="fleet"}` counts the failure; before the first
 * good reading they show nothing.
 *
 * The same reading holds the monitor's own incidents: each upstream's health
 * (`fleetwatch_upstream_degraded`, the `upstream` poller's snapshots, `fleet` ref
 * `upstream/<name>`) and each queued poller's pace (`fleetwatch_poller_behind`, `fleet` ref
 * `poller/<name>`) and each list's completeness (`fleetwatch_list_unreadable`, `fleet` ref
 * `list/<upstream>`), alerting exactly while their `monitor.upstream.degraded` /
 * `monitor.polling.behind` / `monitor.list.unreadable` incident is open, since the commit that
 * fires it also stores it.
 */

/**
 * A fleet reading plus the monitor's own incidents: per upstream whether it is degraded, per poller
 * whether it is behind, per list whether it holds elements not as the spec says.
 */
export interface FleetGaugeReading {
  fleet: FleetReading;
  degraded: ReadonlyMap<string, boolean>;
  behind: ReadonlyMap<string, boolean>;
  unreadable: ReadonlyMap<string, boolean>;
}

/** The names of one kind of the monitor's own threshold incidents, where each is kept and in which field. */
interface AlertingSpec<Name extends string> {
  names: readonly Name[];
  refOf(name: Name): SnapshotRef;
  field: string;
}

/**
 * Per spec, per name, whether the threshold incident kept in `field` of its snapshot is open: all
 * of them in one read.
 */
async function readAlerting(
  store: FleetStore,
  specs: readonly AlertingSpec<string>[],
): Promise<Map<string, boolean>[]> {
  const refs = specs.flatMap((spec) => spec.names.map((name) => spec.refOf(name)));
  const records = refs.length > 0 ? await store.read(refs) : [];
  let at = 0;
  return specs.map((spec) => {
    const out = new Map<string, boolean>();
    for (const name of spec.names) {
      const state = stateV1(records[at]?.state);
      at += 1;
      out.set(name, readThreshold(state?.[spec.field])?.alerting === true);
    }
    return out;
  });
}

export interface FleetGaugeSet {
  vehicles: Gauge<'vpn'>;
  vehiclesByPower: Gauge<'state'>;
  powerCommands: Gauge<'status'>;
  robots: Gauge<'health'>;
  upstreamDegraded: Gauge<'upstream'>;
  listUnreadable: Gauge<'upstream'>;
  pollerBehind: Gauge<'poller'>;
  readDuration: Gauge;
  readTimestamp: Gauge;
  /** Absent when per-entity series are off. */
  perEntity?: {
    vpnConnected: Gauge<'vehicle'>;
    powerOn: Gauge<'vehicle'>;
    powerState: Gauge<'vehicle' | 'state'>;
    robotUp: Gauge<'robot'>;
    autonomy: Gauge<'robot'>;
  };
}

export interface FleetGaugesOptions {
  gauges: FleetGaugeSet;
  errors: Counter<'source'>;
  cacheMs: number;
  /** The pollers whose pace is judged (the scheduled, queued ones): `fleetwatch_poller_behind`. */
  pollers?: readonly string[];
  /** How long a scrape waits for a read (see `ScrapedGauges`). */
  timeoutMs?: number;
  now?: () => number;
  logger?: Logger;
}

export class FleetGauges extends ScrapedGauges<FleetGaugeReading> {
  readonly #options: FleetGaugesOptions;
  readonly #vpn = new Tally<EntityGauges<'vehicle'>>(VPN_STATUSES, (vehicle) => vehicle.vpn);
  readonly #power = new Tally<EntityGauges<'vehicle'>>(POWER_LABELS, (vehicle) => vehicle.power);
  readonly #commands = new Tally<EntityGauges<'vehicle'>>(COMMAND_STATUSES, (vehicle) => vehicle.command);
  readonly #health = new Tally<EntityGauges<'robot'>>(HEALTH_STATUSES, (robot) => robot.health);

  constructor(options: FleetGaugesOptions) {
    super({
      ...options,
      source: 'fleet',
      failure: 'could not read the fleet for the metrics; showing the last reading',
    });
    this.#options = options;
  }

  /** Where readings come from; `undefined` detaches (the gauges keep what they show). */
  bind(store: FleetStore | undefined): void {
    const now = this.#options.now;
    // One model per store, kept between scrapes: it decodes only the snapshots that changed.
    const model = store ? new FleetReadModel(store, { reuse: true, ...(now ? { now } : {}) }) : undefined;
    this.readFrom(
      store && model
        ? async () => {
            const [fleet, [degraded = new Map(), behind = new Map(), unreadable = new Map()]] =
              await Promise.all([
                model.readFleet(),
                readAlerting(store, [
                  { names: UPSTREAM_NAMES, refOf: upstreamRef, field: 'health' },
                  { names: this.#options.pollers ?? [], refOf: paceRef, field: 'pace' },
                  { names: LIST_UPSTREAMS, refOf: listRef, field: 'list' },
                ]),
              ]);
            return { fleet, degraded, behind, unreadable };
          }
        : undefined,
    );
  }

  protected apply({ fleet: reading, degraded, behind, unreadable }: FleetGaugeReading): void {
    const { gauges } = this.#options;
    for (const [upstream, is] of degraded) gauges.upstreamDegraded.set({ upstream }, is ? 1 : 0);
    for (const [upstream, is] of unreadable) gauges.listUnreadable.set({ upstream }, is ? 1 : 0);
    for (const [poller, is] of behind) gauges.pollerBehind.set({ poller }, is ? 1 : 0);
    for (const tally of [this.#vpn, this.#power, this.#commands]) tally.update(reading.vehicles);
    this.#health.update(reading.robots);
    for (const [label, count] of this.#vpn.counts) gauges.vehicles.set({ vpn: label }, count);
    for (const [label, count] of this.#power.counts) gauges.vehiclesByPower.set({ state: label }, count);
    for (const [label, count] of this.#commands.counts) gauges.powerCommands.set({ status: label }, count);
    for (const [label, count] of this.#health.counts) gauges.robots.set({ health: label }, count);
    gauges.readDuration.set(reading.durationMs / 1000);
    gauges.readTimestamp.set(Math.floor(reading.at / 1000));

    const each = gauges.perEntity;
    if (!each) return;
    for (const gauge of Object.values(each)) gauge.reset();
    for (const vehicle of reading.vehicles) {
      const labels = { vehicle: vehicle.id };
      if (vehicle.vpn) each.vpnConnected.set(labels, vehicle.vpn === 'connected' ? 1 : 0);
      if (vehicle.power !== 'unknown') each.powerOn.set(labels, vehicle.power === 'on' ? 1 : 0);
      each.powerState.set({ vehicle: vehicle.id, state: vehicle.power }, 1);
    }
    for (const robot of reading.robots) {
      const labels = { robot: robot.id };
      if (robot.health) each.robotUp.set(labels, robot.health === 'up' ? 1 : 0);
      if (robot.autonomy !== undefined) each.autonomy.set(labels, robot.autonomy);
    }
  }
}
