import { setTimeout as delay } from 'node:timers/promises';
import type { SimulatorControl } from '../../src/simulator/index.js';
import {
  type EventKey,
  type ExpectedEvent,
  eventKey,
  type FleetIds,
  longLease,
  robotSubject,
  type Scenario,
  vehicleSubject,
} from './scenario.js';

/**
 * A fleet that keeps changing while faults are injected: random changes to vehicles and robots,
 * each with the event(s) it must cause, driven so that an entity changes again only once its
 * previous change is in the log (a flip and flip-back between two polls is, rightly, no event).
 */

export interface Change {
  entity: string;
  label: string;
  apply(): void;
  events: ExpectedEvent[];
}

interface VehicleModel {
  vpn: boolean;
  power: 'on' | 'off';
}

interface RobotModel {
  healthy: boolean;
  lease: string | null;
  driving: boolean;
  route: 1 | 2;
}

export interface FleetScriptOptions {
  /**
   * Whether robots are taken down and brought back (default true). Off where the fault itself
   * makes health checks fail: the script's `robot.health.*` would then be indistinguishable from
   * the fault's.
   */
  robotHealth?: boolean;
  /**
   * Only changes whose values are never reused (default false): each vehicle's address and each
   * robot's lease holder (`op-1`, `op-2`, …) move along a chain, so the order in which a receiver
   * gets one entity's events can be checked value by value.
   */
  chains?: boolean;
}

/** What the test has told the simulator, and the next change for an entity with the event(s) it must cause. */
export class FleetScript {
  readonly vehicles = new Map<string, VehicleModel>();
  readonly robots = new Map<string, RobotModel>();
  readonly #robotHealth: boolean;
  readonly #chains: boolean;
  #addresses = 0;
  #holders = 0;

  constructor(
    readonly control: SimulatorControl,
    ids: FleetIds,
    readonly random: () => number,
    options: FleetScriptOptions = {},
  ) {
    this.#robotHealth = options.robotHealth ?? true;
    this.#chains = options.chains ?? false;
    for (const id of ids.vehicles) this.vehicles.set(id, { vpn: true, power: 'off' });
    for (const id of ids.robots)
      this.robots.set(id, { healthy: true, lease: null, driving: false, route: 1 });
  }

  get entities(): string[] {
    return [...this.vehicles.keys(), ...this.robots.keys()];
  }

  #pick<T>(options: readonly T[]): T {
    return options[Math.floor(this.random() * options.length)]!;
  }

  next(entity: string): Change | undefined {
    const vehicle = this.vehicles.get(entity);
    if (vehicle) return this.#vehicleChange(entity, vehicle);
    const robot = this.robots.get(entity);
    return robot ? this.#robotChange(entity, robot) : undefined;
  }

  #vehicleChange(id: string, model: VehicleModel): Change {
    const subject = vehicleSubject(id);
    const kind = this.#chains ? 'ip' : this.#pick(['vpn', 'ip', 'power'] as const);
    if (kind === 'vpn') {
      const vpn = !model.vpn;
      return {
        entity: id,
        label: `${id} vpn ${vpn ? 'up' : 'down'}`,
        apply: () => {
          this.control.updateVehicle(id, { vpnConnected: vpn });
          model.vpn = vpn;
        },
        events: [{ type: vpn ? 'vehicle.vpn.connected' : 'vehicle.vpn.disconnected', subject }],
      };
    }
    if (kind === 'ip') {
      this.#addresses += 1;
      const address = `10.77.${(this.#addresses >>> 8) & 0xff}.${this.#addresses & 0xff}`;
      return {
        entity: id,
        label: `${id} ip ${address}`,
        apply: () => this.control.updateVehicle(id, { ipAddress: address }),
        events: [{ type: 'vehicle.ip.changed', subject }],
      };
    }
    const power = model.power === 'on' ? 'off' : 'on';
    return {
      entity: id,
      label: `${id} power ${power}`,
      apply: () => {
        this.control.updateVehicle(id, { state: power });
        model.power = power;
      },
      events: [{ type: 'vehicle.power.changed', subject }],
    };
  }

  #robotChange(id: string, model: RobotModel): Change | undefined {
    const subject = robotSubject(id);
    if (this.#chains) {
      this.#holders += 1;
      const holder = `op-${this.#holders}`;
      return {
        entity: id,
        label: `${id} lease ${holder}`,
        apply: () => {
          this.control.updateRobot(id, { lease: longLease(holder) });
          model.lease = holder;
        },
        events: [{ type: 'robot.lease.changed', subject }],
      };
    }
    if (!model.healthy) {
      return {
        entity: id,
        label: `${id} up`,
        apply: () => {
          this.control.updateRobot(id, { healthy: true });
          model.healthy = true;
        },
        events: [{ type: 'robot.health.up', subject }],
      };
    }
    // One robot down at a time, so the robot API's error ratio never looks like an upstream outage.
    const anotherDown = [...this.robots.values()].some((robot) => !robot.healthy);
    const kind = this.#pick(
      anotherDown || !this.#robotHealth
        ? (['lease', 'state', 'route'] as const)
        : (['health', 'lease', 'state', 'route'] as const),
    );
    if (kind === 'health') {
      return {
        entity: id,
        label: `${id} down`,
        apply: () => {
          this.control.updateRobot(id, { healthy: false });
          model.healthy = false;
        },
        events: [{ type: 'robot.health.down', subject }],
      };
    }
    if (kind === 'lease') {
      const holder = model.lease === null ? 'teleop-1' : model.lease === 'teleop-1' ? 'teleop-2' : null;
      return {
        entity: id,
        label: `${id} lease ${holder}`,
        apply: () => {
          this.control.updateRobot(id, { lease: holder === null ? null : longLease(holder) });
          model.lease = holder;
        },
        events: [{ type: 'robot.lease.changed', subject }],
      };
    }
    if (kind === 'state') {
      const driving = !model.driving;
      return {
        entity: id,
        label: `${id} ${driving ? 'DRIVING' : 'IDLE'}`,
        apply: () => {
          this.control.updateRobot(id, { feedback: { vehicleState: driving ? 'DRIVING' : 'IDLE' } });
          model.driving = driving;
        },
        events: [{ type: 'robot.state.changed', subject }],
      };
    }
    const route = model.route === 1 ? 2 : 1;
    return {
      entity: id,
      label: `${id} route-${route}`,
      apply: () => {
        this.control.updateRobot(id, { loadedRoute: `route-${route}` });
        model.route = route;
      },
      events: [{ type: 'robot.config.changed', subject }],
    };
  }
}

export interface ChangeDriverOptions {
  /** Pause between two changes: `minMs` plus up to `jitterMs` (default 150 + 250). */
  minMs?: number;
  jitterMs?: number;
  /** Told about every change made (a journal). */
  onChange?: (change: Change) => void;
}

/**
 * Makes `script`'s changes one after another until `stop()`, each on an entity whose previous
 * change is already in the log, adding its events to `scenario.expected` before applying it.
 */
export class ChangeDriver {
  /** Changes made so far. */
  changes = 0;
  readonly #scenario: Scenario;
  readonly #script: FleetScript;
  readonly #options: ChangeDriverOptions;
  readonly #inFlight = new Map<string, EventKey[]>();
  #running = false;
  #loop: Promise<void> | undefined;

  constructor(scenario: Scenario, script: FleetScript, options: ChangeDriverOptions = {}) {
    this.#scenario = scenario;
    this.#script = script;
    this.#options = options;
  }

  /** Entities whose last change is not in the log yet. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  start(): this {
    if (this.#running) return this;
    this.#running = true;
    this.#loop = this.#run();
    return this;
  }

  /** Stops making changes (the last one may still be on its way to the log). */
  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
  }

  async #run(): Promise<void> {
    const { minMs = 150, jitterMs = 250 } = this.#options;
    const random = this.#script.random;
    while (this.#running) {
      await this.#once();
      await delay(minMs + random() * jitterMs);
    }
  }

  async #once(): Promise<void> {
    const scenario = this.#scenario;
    // While the log cannot be read (Redis away), entities with no change on its way still change.
    const counts = await scenario.counts().catch(() => undefined);
    for (const [entity, keys] of this.#inFlight) {
      if (counts && keys.every((key) => (counts.get(key) ?? 0) >= (scenario.expected.get(key) ?? 0))) {
        this.#inFlight.delete(entity);
      }
    }
    const idle = this.#script.entities.filter((entity) => !this.#inFlight.has(entity));
    if (idle.length === 0) return;
    const change = this.#script.next(idle[Math.floor(this.#script.random() * idle.length)]!);
    if (!change) return;
    scenario.expect(change.events);
    change.apply();
    this.changes += 1;
    this.#inFlight.set(
      change.entity,
      change.events.map(({ type, subject }) => eventKey(type, subject)),
    );
    this.#options.onChange?.(change);
  }
}
