import type { FleetState, VehicleRecord } from './fleet-state.js';
import { Prng } from './prng.js';
import { type Doc, newDoc, normaliseZones, type RobotRecord, VEHICLE_STATES } from './robot-model.js';
import type { PowerState } from './types.js';

const pad = (n: number) => String(n).padStart(4, '0');

export const vehicleId = (n: number) => `veh-${pad(n)}`;
export const robotId = (n: number) => `rb-${pad(n)}`;

/** A VPN address for the n-th vehicle; unique for the first ~16 million. */
export function vpnAddress(n: number): string {
  return `10.${8 + ((n >>> 16) & 0x3f)}.${(n >>> 8) & 0xff}.${n & 0xff}`;
}

export function blankVehicle(id: string, now: number): VehicleRecord {
  return {
    id,
    ipAddress: null,
    vpnConnected: true,
    state: 'off',
    updatedAt: now,
    pending: null,
    powerCapable: true,
    stuck: false,
    connectedAt: now,
    listFields: null,
  };
}

export function blankRobot(deviceId: string, uuid: string, now: number): RobotRecord {
  return {
    deviceId,
    name: deviceId,
    uuid,
    healthy: true,
    unhealthyMode: 'error',
    cortexStatus: 1,
    navStatus: 0,
    vehicleState: 'IDLE',
    latitude: 52.52,
    longitude: 13.405,
    altitude: 34,
    navStartedAt: now,
    lease: null,
    activeSite: null,
    loadedRoute: null,
    loadedZoneSet: null,
    sites: new Map(),
    routes: new Map(),
    zoneSets: new Map(),
    room: null,
    referenceTargets: [],
    queue: [],
    history: [],
    paused: false,
    commandSeq: 0,
    listFields: null,
  };
}

function seedVehicle(n: number, prng: Prng, now: number): VehicleRecord {
  const v = blankVehicle(vehicleId(n), now);
  const hasIp = prng.chance(0.9);
  v.ipAddress = hasIp ? vpnAddress(n) : null;
  v.vpnConnected = hasIp ? prng.chance(0.93) : prng.chance(0.3);
  const roll = prng.next();
  v.state = (roll < 0.45 ? 'on' : roll < 0.9 ? 'off' : 'unknown') as PowerState;
  v.updatedAt = now - prng.int(5, 3600) * 1000;
  if (prng.chance(0.04)) {
    v.updatedAt = null;
    v.state = 'unknown';
  }
  v.powerCapable = prng.chance(0.9);
  v.connectedAt = v.updatedAt ?? now;
  return v;
}

const SITE_NAMES = ['depot', 'north-yard', 'south-yard', 'campus', 'warehouse-b'];

function seedRobot(n: number, prng: Prng, now: number): RobotRecord {
  const r = blankRobot(robotId(n), prng.uuid(), now);
  r.name = `Robot ${pad(n)}`;
  r.latitude = Number((52.4 + prng.next() * 0.2).toFixed(6));
  r.longitude = Number((13.3 + prng.next() * 0.2).toFixed(6));
  r.vehicleState = prng.chance(0.7) ? 'IDLE' : prng.pick(VEHICLE_STATES);
  const sites = prng.int(1, 3);
  for (let i = 0; i < sites; i++) {
    const name = SITE_NAMES[(n + i) % SITE_NAMES.length]!;
    r.sites.set(name, newDoc(name, { origin: { latitude: r.latitude, longitude: r.longitude } }, now));
  }
  r.activeSite = [...r.sites.keys()][0] ?? null;
  const routes = prng.int(2, 4);
  for (let i = 1; i <= routes; i++) {
    const name = `route-${i}`;
    const waypoints = Array.from({ length: prng.int(2, 5) }, (_, k) => ({
      latitude: Number((r.latitude + k * 0.0005).toFixed(6)),
      longitude: Number((r.longitude + k * 0.0005).toFixed(6)),
    }));
    r.routes.set(name, newDoc(name, { site: r.activeSite, waypoints }, now));
  }
  if (prng.chance(0.6)) r.loadedRoute = 'route-1';
  const zoneSets: Array<[string, Doc]> = [
    ['default', newDoc('default', normaliseZones({ zones: { 'no-go-1': true, 'slow-1': true } }), now)],
    ['night', newDoc('night', normaliseZones({ zones: { 'no-go-1': true, 'quiet-1': false } }), now)],
  ];
  for (const [name, doc] of zoneSets) r.zoneSets.set(name, doc);
  if (prng.chance(0.7)) r.loadedZoneSet = 'default';
  if (prng.chance(0.2)) r.lease = { holderId: 'teleop-station-1', expiresAt: now + 3_600_000 };
  return r;
}

/** How large a seeded fleet may be (vehicles, robots each) and the seeds there are (32 bits). */
export const SEED_LIMITS = { entities: 100_000, seed: 0xffff_ffff } as const;

/** Fills the fleet deterministically: same seed and counts, same vehicles and robots. */
export function seedFleet(
  fleet: FleetState,
  seed: number,
  vehicles: number,
  robots: number,
  now: number,
): void {
  fleet.clear();
  const vehiclePrng = new Prng(seed);
  for (let n = 1; n <= vehicles; n++) fleet.addVehicle(seedVehicle(n, vehiclePrng, now));
  const robotPrng = new Prng(seed ^ 0x5bd1e995);
  for (let n = 1; n <= robots; n++) fleet.addRobot(seedRobot(n, robotPrng, now));
}
