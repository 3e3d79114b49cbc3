import type { Prng } from './prng.js';
import { type RobotRecord, robotView } from './robot-model.js';
import type { CommandState, PowerState, RobotView, VehiclePatch, VehicleView } from './types.js';

export interface VehicleRecord {
  id: string;
  ipAddress: string | null;
  vpnConnected: boolean;
  state: PowerState;
  /** ms since epoch; null: never reported. */
  updatedAt: number | null;
  pending: { state: CommandState; completeAt: number; stuck: boolean } | null;
  powerCapable: boolean;
  stuck: boolean;
  /** Last VPN (re)connect, so a command blocked by an outage reports when the vehicle is back. */
  connectedAt: number;
}

/** Keeps a dense id array beside a Map so behaviours can pick a random entity in O(1). */
class IdPool {
  private ids: string[] = [];
  private index = new Map<string, number>();

  add(id: string): void {
    this.index.set(id, this.ids.length);
    this.ids.push(id);
  }

  remove(id: string): void {
    const at = this.index.get(id);
    if (at === undefined) return;
    const last = this.ids.pop()!;
    if (last !== id) {
      this.ids[at] = last;
      this.index.set(last, at);
    }
    this.index.delete(id);
  }

  pick(prng: Prng): string | undefined {
    return this.ids.length === 0 ? undefined : this.ids[Math.floor(prng.next() * this.ids.length)];
  }

  clear(): void {
    this.ids = [];
    this.index.clear();
  }
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The in-memory fleet. Every read of power state settles due commands lazily, so no timers per command. */
export class FleetState {
  readonly vehicles = new Map<string, VehicleRecord>();
  readonly robots = new Map<string, RobotRecord>();
  /** Bumped whenever anything in the vehicle list (ids, ipAddress, vpnConnected) changes. */
  vehicleListVersion = 0;
  robotListVersion = 0;
  private vehiclePool = new IdPool();
  private robotPool = new IdPool();

  constructor(public powerDelayMs: number) {}

  addVehicle(vehicle: VehicleRecord): void {
    this.vehicles.set(vehicle.id, vehicle);
    this.vehiclePool.add(vehicle.id);
    this.vehicleListVersion++;
  }

  removeVehicle(id: string): boolean {
    if (!this.vehicles.delete(id)) return false;
    this.vehiclePool.remove(id);
    this.vehicleListVersion++;
    return true;
  }

  addRobot(robot: RobotRecord): void {
    this.robots.set(robot.deviceId, robot);
    this.robotPool.add(robot.deviceId);
    this.robotListVersion++;
  }

  removeRobot(deviceId: string): boolean {
    if (!this.robots.delete(deviceId)) return false;
    this.robotPool.remove(deviceId);
    this.robotListVersion++;
    return true;
  }

  clear(): void {
    this.vehicles.clear();
    this.robots.clear();
    this.vehiclePool.clear();
    this.robotPool.clear();
    this.vehicleListVersion++;
    this.robotListVersion++;
  }

  randomVehicle(prng: Prng): VehicleRecord | undefined {
    const id = this.vehiclePool.pick(prng);
    return id === undefined ? undefined : this.vehicles.get(id);
  }

  randomRobot(prng: Prng): RobotRecord | undefined {
    const id = this.robotPool.pick(prng);
    return id === undefined ? undefined : this.robots.get(id);
  }

  /** Completes a due command: needs the delay to have passed, the VPN up and nothing stuck. */
  settle(vehicle: VehicleRecord, now: number): void {
    const pending = vehicle.pending;
    if (!pending || pending.stuck || vehicle.stuck || !vehicle.vpnConnected || now < pending.completeAt)
      return;
    vehicle.state = pending.state;
    vehicle.pending = null;
    vehicle.updatedAt = Math.min(now, Math.max(pending.completeAt, vehicle.connectedAt));
  }

  requestPower(vehicle: VehicleRecord, target: CommandState, now: number, stuck: boolean): void {
    this.settle(vehicle, now);
    vehicle.pending = { state: target, completeAt: now + this.powerDelayMs, stuck };
  }

  setVpn(vehicle: VehicleRecord, connected: boolean, now: number): void {
    if (vehicle.vpnConnected === connected) return;
    this.settle(vehicle, now);
    vehicle.vpnConnected = connected;
    if (connected) vehicle.connectedAt = now;
    this.vehicleListVersion++;
  }

  setIp(vehicle: VehicleRecord, ip: string | null): void {
    if (vehicle.ipAddress === ip) return;
    vehicle.ipAddress = ip;
    this.vehicleListVersion++;
  }

  /** Control-API patch. A new `state` without `updatedAt` counts as a report made now. */
  patchVehicle(vehicle: VehicleRecord, patch: VehiclePatch, now: number): void {
    this.settle(vehicle, now);
    if (patch.vpnConnected !== undefined) this.setVpn(vehicle, patch.vpnConnected, now);
    if (patch.ipAddress !== undefined) this.setIp(vehicle, patch.ipAddress);
    if (patch.powerCapable !== undefined) vehicle.powerCapable = patch.powerCapable;
    if (patch.stuck !== undefined) vehicle.stuck = patch.stuck;
    if (patch.state !== undefined) {
      vehicle.state = patch.state;
      if (patch.updatedAt === undefined) vehicle.updatedAt = now;
    }
    if (patch.updatedAt !== undefined) {
      vehicle.updatedAt = patch.updatedAt === null ? null : Date.parse(patch.updatedAt);
    }
    if (patch.pendingCommand !== undefined) {
      vehicle.pending =
        patch.pendingCommand === null
          ? null
          : { state: patch.pendingCommand.state, completeAt: now + this.powerDelayMs, stuck: false };
    }
  }

  vehicleView(vehicle: VehicleRecord, now: number): VehicleView {
    this.settle(vehicle, now);
    return {
      id: vehicle.id,
      ipAddress: vehicle.ipAddress,
      vpnConnected: vehicle.vpnConnected,
      state: vehicle.state,
      pendingCommand: vehicle.pending ? { state: vehicle.pending.state } : null,
      updatedAt: iso(vehicle.updatedAt),
      powerCapable: vehicle.powerCapable,
      stuck: vehicle.stuck,
    };
  }

  robotView(robot: RobotRecord, now: number): RobotView {
    return robotView(robot, now);
  }
}
