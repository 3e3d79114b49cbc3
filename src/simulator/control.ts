import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { TokenIssuer } from './auth.js';
import type { Behaviours } from './behaviours.js';
import { type FaultInjector, faultOptionsSchema } from './faults.js';
import type { FleetState } from './fleet-state.js';
import { type Doc, LEASE_TTL_MS, newDoc, type RobotRecord } from './robot-model.js';
import { blankRobot, blankVehicle, seedFleet } from './seed.js';
import type { Stats } from './stats.js';
import type {
  BehaviourOptions,
  FaultOptions,
  RobotInput,
  RobotPatch,
  SimulatorControl,
  VehicleInput,
  VehiclePatch,
} from './types.js';

/** A rejected control call; `status` is what the HTTP control API answers. */
export class SimControlError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 404 | 409,
  ) {
    super(message);
    this.name = 'SimControlError';
  }
}

const dateTime = z.iso.datetime({ offset: true });
const configName = z.string().min(1).max(200).nullable().optional();

const vehiclePatchSchema = z
  .object({
    ipAddress: z.ipv4().nullable().optional(),
    vpnConnected: z.boolean().optional(),
    state: z.enum(['on', 'off', 'unknown']).optional(),
    pendingCommand: z
      .object({ state: z.enum(['on', 'off']) })
      .strict()
      .nullable()
      .optional(),
    updatedAt: dateTime.nullable().optional(),
    powerCapable: z.boolean().optional(),
    stuck: z.boolean().optional(),
  })
  .strict();
const vehicleInputSchema = vehiclePatchSchema.extend({ id: z.string().min(1).max(200) });

const robotPatchSchema = z
  .object({
    name: z.string().min(1).max(200).optional(),
    healthy: z.boolean().optional(),
    unhealthyMode: z.enum(['error', 'timeout']).optional(),
    feedback: z
      .object({
        cortexStatus: z.number().int().min(0).max(4),
        navStatus: z.number().int().min(0).max(6),
        vehicleState: z.string().min(1),
        latitude: z.number().min(-90).max(90),
        longitude: z.number().min(-180).max(180),
        altitude: z.number(),
      })
      .partial()
      .strict()
      .optional(),
    lease: z
      .object({ holderId: z.string().min(1).nullable(), expiresAt: dateTime.nullable().optional() })
      .strict()
      .nullable()
      .optional(),
    activeSite: configName,
    loadedRoute: configName,
    loadedZoneSet: configName,
  })
  .strict();
const robotInputSchema = robotPatchSchema.extend({ deviceId: z.string().min(1).max(200) });

const rate = z.number().min(0).max(1);
const range = z.tuple([z.number().int().min(0), z.number().int().min(0)]);
const behaviourOptionsSchema = z
  .object({
    intervalMs: z.number().int().min(10).max(3_600_000),
    vpnFlapRate: rate,
    vpnOutageMs: range,
    ipChangeRate: rate,
    ipLossRate: rate,
    powerChangeRate: rate,
    stuckCommandRate: rate,
    robotOutageRate: rate,
    robotOutageMs: range,
    leaseChangeRate: rate,
    feedbackChangeRate: rate,
    routeChangeRate: rate,
    commandProgressRate: rate,
  })
  .partial()
  .strict();

/** Parses or throws a 400 whose message names every bad field. */
export function parseOr400<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues.map(
    (i) => `${i.path.length ? i.path.join('.') : '(body)'}: ${i.message}`,
  );
  throw new SimControlError(`invalid ${what}: ${problems.join('; ')}`, 400);
}

interface ControlDeps {
  url: () => string;
  seed: number;
  vehicles: number;
  robots: number;
  initialFaults: FaultOptions;
  fleet: FleetState;
  tokens: TokenIssuer;
  faults: FaultInjector;
  stats: Stats;
  behaviours: Behaviours;
}

function ensureDoc(map: Map<string, Doc>, name: string, now: number): string {
  if (!map.has(name)) map.set(name, newDoc(name, {}, now));
  return name;
}

function patchRobot(fleet: FleetState, robot: RobotRecord, patch: RobotPatch, now: number): void {
  if (patch.name !== undefined && patch.name !== robot.name) {
    robot.name = patch.name;
    fleet.robotListVersion++;
  }
  if (patch.healthy !== undefined) robot.healthy = patch.healthy;
  if (patch.unhealthyMode !== undefined) robot.unhealthyMode = patch.unhealthyMode;
  const f = patch.feedback;
  if (f) {
    if (f.cortexStatus !== undefined) robot.cortexStatus = f.cortexStatus;
    if (f.navStatus !== undefined && f.navStatus !== robot.navStatus) {
      robot.navStatus = f.navStatus;
      robot.navStartedAt = now;
    }
    if (f.vehicleState !== undefined) robot.vehicleState = f.vehicleState;
    if (f.latitude !== undefined) robot.latitude = f.latitude;
    if (f.longitude !== undefined) robot.longitude = f.longitude;
    if (f.altitude !== undefined) robot.altitude = f.altitude;
  }
  if (patch.lease !== undefined) {
    const l = patch.lease;
    robot.lease =
      l === null || l.holderId === null
        ? null
        : { holderId: l.holderId, expiresAt: l.expiresAt ? Date.parse(l.expiresAt) : now + LEASE_TTL_MS };
  }
  if (patch.activeSite !== undefined) {
    robot.activeSite = patch.activeSite === null ? null : ensureDoc(robot.sites, patch.activeSite, now);
  }
  if (patch.loadedRoute !== undefined) {
    robot.loadedRoute = patch.loadedRoute === null ? null : ensureDoc(robot.routes, patch.loadedRoute, now);
  }
  if (patch.loadedZoneSet !== undefined) {
    robot.loadedZoneSet =
      patch.loadedZoneSet === null ? null : ensureDoc(robot.zoneSets, patch.loadedZoneSet, now);
  }
}

export function createControl(d: ControlDeps): SimulatorControl {
  const { fleet } = d;
  const vehicleOr404 = (id: string) => {
    const v = fleet.vehicles.get(id);
    if (!v) throw new SimControlError(`no vehicle '${id}'`, 404);
    return v;
  };
  const robotOr404 = (id: string) => {
    const r = fleet.robots.get(id);
    if (!r) throw new SimControlError(`no robot '${id}'`, 404);
    return r;
  };

  return {
    state() {
      const now = Date.now();
      return {
        url: d.url(),
        seed: d.seed,
        powerDelayMs: fleet.powerDelayMs,
        tokenTtlSeconds: d.tokens.ttlSeconds,
        clients: d.tokens.describeClients(),
        activeTokens: d.tokens.activeTokens(now),
        faults: d.faults.get(),
        behaviours: d.behaviours.get(),
        vehicles: [...fleet.vehicles.values()].map((v) => fleet.vehicleView(v, now)),
        robots: [...fleet.robots.values()].map((r) => fleet.robotView(r, now)),
      };
    },
    getVehicle(id) {
      const v = fleet.vehicles.get(id);
      return v ? fleet.vehicleView(v, Date.now()) : undefined;
    },
    addVehicle(input: VehicleInput) {
      const { id, ...patch } = parseOr400(vehicleInputSchema, input, 'vehicle');
      if (fleet.vehicles.has(id)) throw new SimControlError(`vehicle '${id}' already exists`, 409);
      const now = Date.now();
      const v = blankVehicle(id, now);
      fleet.patchVehicle(v, patch, now);
      fleet.addVehicle(v);
      return fleet.vehicleView(v, now);
    },
    updateVehicle(id: string, patch: VehiclePatch) {
      const parsed = parseOr400(vehiclePatchSchema, patch, 'vehicle patch');
      const v = vehicleOr404(id);
      const now = Date.now();
      fleet.patchVehicle(v, parsed, now);
      return fleet.vehicleView(v, now);
    },
    removeVehicle: (id) => fleet.removeVehicle(id),
    getRobot(id) {
      const r = fleet.robots.get(id);
      return r ? fleet.robotView(r, Date.now()) : undefined;
    },
    addRobot(input: RobotInput) {
      const { deviceId, ...patch } = parseOr400(robotInputSchema, input, 'robot');
      if (fleet.robots.has(deviceId)) throw new SimControlError(`robot '${deviceId}' already exists`, 409);
      const now = Date.now();
      const r = blankRobot(deviceId, randomUUID(), now);
      patchRobot(fleet, r, patch, now);
      fleet.addRobot(r);
      return fleet.robotView(r, now);
    },
    updateRobot(id: string, patch: RobotPatch) {
      const parsed = parseOr400(robotPatchSchema, patch, 'robot patch');
      const r = robotOr404(id);
      const now = Date.now();
      patchRobot(fleet, r, parsed, now);
      return fleet.robotView(r, now);
    },
    removeRobot: (id) => fleet.removeRobot(id),
    getFaults: () => d.faults.get(),
    setFaults(faults: FaultOptions) {
      return d.faults.set(parseOr400(faultOptionsSchema, faults, 'faults') as FaultOptions);
    },
    clearFaults: () => {
      d.faults.set({});
    },
    expireTokens: () => d.tokens.expireAll(),
    setBehaviours(value: boolean | BehaviourOptions) {
      const parsed =
        typeof value === 'boolean' ? value : parseOr400(behaviourOptionsSchema, value, 'behaviours');
      return d.behaviours.configure(parsed);
    },
    stats: () => d.stats.snapshot(),
    resetStats: () => d.stats.reset(),
    reset() {
      d.behaviours.forget();
      seedFleet(fleet, d.seed, d.vehicles, d.robots, Date.now());
      d.faults.set(d.initialFaults);
      d.stats.reset();
    },
  };
}
