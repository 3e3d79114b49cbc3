import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { TokenIssuer } from './auth.js';
import type { Behaviours } from './behaviours.js';
import { type FaultInjector, faultOptionsSchema } from './faults.js';
import type { FleetState } from './fleet-state.js';
import { type Doc, LEASE_TTL_MS, newDoc, type RobotRecord } from './robot-model.js';
import { blankRobot, blankVehicle, seedFleet } from './seed.js';
import type { Stats } from './stats.js';
import type { BehaviourOptions, FaultOptions, IssuerOptions, RobotPatch, SimulatorControl } from './types.js';

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
/** At most this many fields: enough to break an element in any way, not a store of data. */
const listFields = z
  .record(z.string().min(1).max(100), z.json())
  .refine((fields) => Object.keys(fields).length <= 20, { error: 'at most 20 fields' })
  .nullable()
  .optional();
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
    listFields,
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
    listFields,
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

export const issuerOptionsSchema = z
  .object({
    tokenTtlSeconds: z
      .number()
      .min(0.1)
      .max(7 * 86_400),
    sendExpiresIn: z.boolean(),
    jwt: z.boolean(),
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
  if (patch.name !== undefined) fleet.renameRobot(robot, patch.name);
  if (patch.listFields !== undefined) fleet.setListFields(robot, patch.listFields);
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

/** How the control API reads, adds and changes one kind of entity (vehicles, robots). */
interface EntityKind<Entity, Patch, View> {
  noun: 'vehicle' | 'robot';
  all: ReadonlyMap<string, Entity>;
  /** The input of an add, checked: the new entity's id and the rest as a patch. */
  parseInput(input: unknown): { id: string; patch: Patch };
  patchSchema: z.ZodType<Patch>;
  blank(id: string, now: number): Entity;
  patch(entity: Entity, patch: Patch, now: number): void;
  add(entity: Entity): void;
  view(entity: Entity, now: number): View;
}

function entityControl<Entity, Patch, View>(kind: EntityKind<Entity, Patch, View>) {
  return {
    get(id: string): View | undefined {
      const entity = kind.all.get(id);
      return entity ? kind.view(entity, Date.now()) : undefined;
    },
    add(input: unknown): View {
      const { id, patch } = kind.parseInput(input);
      if (kind.all.has(id)) throw new SimControlError(`${kind.noun} '${id}' already exists`, 409);
      const now = Date.now();
      const entity = kind.blank(id, now);
      kind.patch(entity, patch, now);
      kind.add(entity);
      return kind.view(entity, now);
    },
    update(id: string, patch: unknown): View {
      const parsed = parseOr400(kind.patchSchema, patch, `${kind.noun} patch`);
      const entity = kind.all.get(id);
      if (!entity) throw new SimControlError(`no ${kind.noun} '${id}'`, 404);
      const now = Date.now();
      kind.patch(entity, parsed, now);
      return kind.view(entity, now);
    },
  };
}

export function createControl(d: ControlDeps): SimulatorControl {
  const { fleet } = d;
  const vehicles = entityControl({
    noun: 'vehicle',
    all: fleet.vehicles,
    parseInput(input) {
      const { id, ...patch } = parseOr400(vehicleInputSchema, input, 'vehicle');
      return { id, patch };
    },
    patchSchema: vehiclePatchSchema,
    blank: blankVehicle,
    patch: (vehicle, patch, now) => fleet.patchVehicle(vehicle, patch, now),
    add: (vehicle) => fleet.addVehicle(vehicle),
    view: (vehicle, now) => fleet.vehicleView(vehicle, now),
  });
  const robots = entityControl({
    noun: 'robot',
    all: fleet.robots,
    parseInput(input) {
      const { deviceId, ...patch } = parseOr400(robotInputSchema, input, 'robot');
      return { id: deviceId, patch };
    },
    patchSchema: robotPatchSchema,
    blank: (deviceId, now) => blankRobot(deviceId, randomUUID(), now),
    patch: (robot, patch, now) => patchRobot(fleet, robot, patch, now),
    add: (robot) => fleet.addRobot(robot),
    view: (robot, now) => fleet.robotView(robot, now),
  });

  return {
    state() {
      const now = Date.now();
      return {
        url: d.url(),
        seed: d.seed,
        powerDelayMs: fleet.powerDelayMs,
        tokenTtlSeconds: d.tokens.options.tokenTtlSeconds,
        issuer: { ...d.tokens.options },
        clients: d.tokens.describeClients(),
        activeTokens: d.tokens.activeTokens(now),
        faults: d.faults.get(),
        behaviours: d.behaviours.get(),
        vehicles: [...fleet.vehicles.values()].map((v) => fleet.vehicleView(v, now)),
        robots: [...fleet.robots.values()].map((r) => fleet.robotView(r, now)),
      };
    },
    getVehicle: vehicles.get,
    addVehicle: vehicles.add,
    updateVehicle: vehicles.update,
    removeVehicle: (id) => fleet.removeVehicle(id),
    getRobot: robots.get,
    addRobot: robots.add,
    updateRobot: robots.update,
    removeRobot: (id) => fleet.removeRobot(id),
    getFaults: () => d.faults.get(),
    setFaults(faults: FaultOptions) {
      return d.faults.set(parseOr400(faultOptionsSchema, faults, 'faults') as FaultOptions);
    },
    clearFaults: () => {
      d.faults.set({});
    },
    expireTokens: () => d.tokens.expireAll(),
    getIssuer: () => ({ ...d.tokens.options }),
    updateIssuer(options: IssuerOptions) {
      return d.tokens.configure(parseOr400(issuerOptionsSchema, options, 'issuer options'));
    },
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
