import type { Prng } from './prng.js';
import { type RobotRecord, robotView } from './robot-model.js';
import type { CommandState, ListFields, PowerState, RobotView, VehiclePatch, VehicleView } from './types.js';

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
  /** Fields that replace its element of `GET /v1/vehicles`, as given (see `ListFields`). */
  listFields: ListFields | null;
}

/**
 * Entities by id, with a dense id array beside the map so behaviours can pick one at random in
 * O(1), and a version bumped whenever the list changes (one added or removed, or `touch`).
 */
class Roster<T> {
  readonly byId = new Map<string, T>();
  version = 0;
  private ids: string[] = [];
  private index = new Map<string, number>();

  add(id: string, entity: T): void {
    this.byId.set(id, entity);
    this.index.set(id, this.ids.length);
    this.ids.push(id);
    this.version++;
  }

  remove(id: string): boolean {
    if (!this.byId.delete(id)) return false;
    const at = this.index.get(id);
    if (at !== undefined) {
      const last = this.ids.pop()!;
      if (last !== id) {
        this.ids[at] = last;
        this.index.set(last, at);
      }
      this.index.delete(id);
    }
    this.version++;
    return true;
  }

  /** A listed field of an entity changed. */
  touch(): void {
    this.version++;
  }

  pick(prng: Prng): T | undefined {
    const id = this.ids.length === 0 ? undefined : this.ids[Math.floor(prng.next() * this.ids.length)];
    return id === undefined ? undefined : this.byId.get(id);
  }

  clear(): void {
    this.byId.clear();
    this.ids = [];
    this.index.clear();
    this.version++;
  }
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The in-memory fleet. Every read of power state settles due commands lazily, so no timers per command. */
export class FleetState {
  readonly #vehicles = new Roster<VehicleRecord>();
  readonly #robots = new Roster<RobotRecord>();
  readonly vehicles = this.#vehicles.byId;
  readonly robots = this.#robots.byId;

  constructor(public powerDelayMs: number) {}

  /** Bumped whenever anything in the vehicle list (ids, ipAddress, vpnConnected) changes. */
  get vehicleListVersion(): number {
    return this.#vehicles.version;
  }

  /** Bumped whenever anything in the robot list (ids, names) changes. */
  get robotListVersion(): number {
    return this.#robots.version;
  }

  addVehicle(vehicle: VehicleRecord): void {
    this.#vehicles.add(vehicle.id, vehicle);
  }

  removeVehicle(id: string): boolean {
    return this.#vehicles.remove(id);
  }

  addRobot(robot: RobotRecord): void {
    this.#robots.add(robot.deviceId, robot);
  }

  removeRobot(deviceId: string): boolean {
    return this.#robots.remove(deviceId);
  }

  /** Replaces the list fields of an entity (see `ListFields`); the list it is in changes. */
  setListFields(entity: VehicleRecord | RobotRecord, fields: ListFields | null): void {
    entity.listFields = fields;
    if ('deviceId' in entity) this.#robots.touch();
    else this.#vehicles.touch();
  }

  renameRobot(robot: RobotRecord, name: string): void {
    if (robot.name === name) return;
    robot.name = name;
    this.#robots.touch();
  }

  clear(): void {
    this.#vehicles.clear();
    this.#robots.clear();
  }

  randomVehicle(prng: Prng): VehicleRecord | undefined {
    return this.#vehicles.pick(prng);
  }

  randomRobot(prng: Prng): RobotRecord | undefined {
    return this.#robots.pick(prng);
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
    this.#vehicles.touch();
  }

  setIp(vehicle: VehicleRecord, ip: string | null): void {
    if (vehicle.ipAddress === ip) return;
    vehicle.ipAddress = ip;
    this.#vehicles.touch();
  }

  /** Control-API patch. A new `state` without `updatedAt` counts as a report made now. */
  patchVehicle(vehicle: VehicleRecord, patch: VehiclePatch, now: number): void {
    this.settle(vehicle, now);
    if (patch.vpnConnected !== undefined) this.setVpn(vehicle, patch.vpnConnected, now);
    if (patch.ipAddress !== undefined) this.setIp(vehicle, patch.ipAddress);
    if (patch.powerCapable !== undefined) vehicle.powerCapable = patch.powerCapable;
    if (patch.listFields !== undefined) this.setListFields(vehicle, patch.listFields);
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
      listFields: vehicle.listFields,
    };
  }

  robotView(robot: RobotRecord, now: number): RobotView {
    return robotView(robot, now);
  }
}
