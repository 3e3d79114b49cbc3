import type { Logger } from 'pino';
import type { FleetState } from './fleet-state.js';
import { Prng } from './prng.js';
import { completeHead, currentLease, LEASE_TTL_MS, VEHICLE_STATES } from './robot-model.js';
import { vpnAddress } from './seed.js';
import type { BehaviourOptions, PowerState } from './types.js';

export const DEFAULT_BEHAVIOURS: Required<BehaviourOptions> = {
  intervalMs: 1000,
  vpnFlapRate: 0.002,
  vpnOutageMs: [2000, 15_000],
  ipChangeRate: 0.3,
  ipLossRate: 0.3,
  powerChangeRate: 0.0005,
  stuckCommandRate: 0.05,
  robotOutageRate: 0.005,
  robotOutageMs: [3000, 20_000],
  leaseChangeRate: 0.01,
  feedbackChangeRate: 0.03,
  routeChangeRate: 0.005,
  commandProgressRate: 0.2,
};

const OPERATORS = ['teleop-station-1', 'teleop-station-2', 'field-operator-7'];
const NAV_CHANGES = [1, 2, 4, 5, 6];

/**
 * Autonomous fleet changes on a timer (unref'd, so it never keeps a process alive). Each tick
 * draws the expected number of events (rate × fleet size) and applies them to random entities,
 * so a tick costs O(events), not O(fleet).
 */
export class Behaviours {
  private options: Required<BehaviourOptions> | false = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly prng: Prng;
  private vpnRestores: Array<{ id: string; at: number; ip: string | null }> = [];
  private robotRestores: Array<{ id: string; at: number }> = [];

  constructor(
    private readonly fleet: FleetState,
    seed: number,
    private readonly logger: Logger,
  ) {
    this.prng = new Prng(seed);
  }

  configure(value: boolean | BehaviourOptions): Required<BehaviourOptions> | false {
    this.stop();
    this.options = value === false ? false : { ...DEFAULT_BEHAVIOURS, ...(value === true ? {} : value) };
    if (this.options) {
      this.timer = setInterval(() => this.tick(Date.now()), this.options.intervalMs);
      this.timer.unref();
    }
    return this.get();
  }

  get(): Required<BehaviourOptions> | false {
    return this.options ? structuredClone(this.options) : false;
  }

  /** Whether a newly accepted power command should never complete. */
  decideStuck(): boolean {
    return this.options !== false && this.prng.chance(this.options.stuckCommandRate);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Forgets scheduled recoveries (after a reset the entities are new). */
  forget(): void {
    this.vpnRestores = [];
    this.robotRestores = [];
  }

  tick(now: number): void {
    const o = this.options;
    if (!o) return;
    const { fleet, prng } = this;
    const between = ([min, max]: [number, number]) => prng.int(min, Math.max(min, max));
    let changes = 0;

    this.vpnRestores = this.vpnRestores.filter((r) => {
      if (r.at > now) return true;
      const v = fleet.vehicles.get(r.id);
      if (v && !v.vpnConnected) {
        fleet.setVpn(v, true, now);
        const ip = r.ip === null || prng.chance(o.ipChangeRate) ? vpnAddress(prng.int(1, 0x3fffff)) : r.ip;
        fleet.setIp(v, ip);
        changes++;
      }
      return false;
    });
    for (let k = prng.count(o.vpnFlapRate * fleet.vehicles.size); k > 0; k--) {
      const v = fleet.randomVehicle(prng);
      if (!v?.vpnConnected) continue;
      const ip = v.ipAddress;
      fleet.setVpn(v, false, now);
      if (prng.chance(o.ipLossRate)) fleet.setIp(v, null);
      this.vpnRestores.push({ id: v.id, at: now + between(o.vpnOutageMs), ip });
      changes++;
    }
    for (let k = prng.count(o.powerChangeRate * fleet.vehicles.size); k > 0; k--) {
      const v = fleet.randomVehicle(prng);
      if (!v || v.pending) continue;
      const next: PowerState = prng.chance(0.1) ? 'unknown' : v.state === 'on' ? 'off' : 'on';
      v.state = next;
      v.updatedAt = now;
      changes++;
    }

    this.robotRestores = this.robotRestores.filter((r) => {
      if (r.at > now) return true;
      const robot = fleet.robots.get(r.id);
      if (robot) robot.healthy = true;
      return false;
    });
    const robots = fleet.robots.size;
    for (let k = prng.count(o.robotOutageRate * robots); k > 0; k--) {
      const r = fleet.randomRobot(prng);
      if (!r?.healthy) continue;
      r.healthy = false;
      r.unhealthyMode = prng.chance(0.3) ? 'timeout' : 'error';
      this.robotRestores.push({ id: r.deviceId, at: now + between(o.robotOutageMs) });
      changes++;
    }
    for (let k = prng.count(o.leaseChangeRate * robots); k > 0; k--) {
      const r = fleet.randomRobot(prng);
      if (!r) continue;
      const lease = currentLease(r, now);
      if (lease && prng.chance(0.5)) r.lease = null;
      else r.lease = { holderId: prng.pick(OPERATORS), expiresAt: now + LEASE_TTL_MS };
      changes++;
    }
    for (let k = prng.count(o.feedbackChangeRate * robots); k > 0; k--) {
      const r = fleet.randomRobot(prng);
      if (!r) continue;
      const which = prng.int(0, 2);
      if (which === 0) r.cortexStatus = prng.int(0, 4);
      else if (which === 1) {
        r.navStatus = prng.pick(NAV_CHANGES);
        r.navStartedAt = now;
      } else r.vehicleState = prng.pick(VEHICLE_STATES);
      r.latitude = Number((r.latitude + (prng.next() - 0.5) * 0.0005).toFixed(6));
      r.longitude = Number((r.longitude + (prng.next() - 0.5) * 0.0005).toFixed(6));
      changes++;
    }
    for (let k = prng.count(o.routeChangeRate * robots); k > 0; k--) {
      const r = fleet.randomRobot(prng);
      if (!r || r.routes.size === 0) continue;
      r.loadedRoute = prng.chance(0.1) ? null : prng.pick([...r.routes.keys()]);
      changes++;
    }
    for (let k = prng.count(o.commandProgressRate * robots); k > 0; k--) {
      const r = fleet.randomRobot(prng);
      if (r && completeHead(r, now)) changes++;
    }
    if (changes > 0) this.logger.debug({ changes }, 'simulator behaviours applied');
  }
}
