import type { Logger } from 'pino';

export type PowerState = 'on' | 'off' | 'unknown';
export type CommandState = 'on' | 'off';

/** An API client of the simulated service. Secrets are never echoed by the control API. */
export interface SimClient {
  id: string;
  secret: string;
  /** Vehicles this client may access (default 'all'). Ids that do not exist (yet) are simply not listed. */
  vehicles?: 'all' | string[];
  /** Robots this client may access (default 'all'). */
  robots?: 'all' | string[];
  /** Tokens of this client are issued but every API call answers 403. */
  forbidden?: boolean;
}

/** Autonomous changes. Rates are probabilities per entity per tick. */
export interface BehaviourOptions {
  /** Tick interval (default 1000 ms). */
  intervalMs?: number;
  /** A connected vehicle drops off the VPN (default 0.002). */
  vpnFlapRate?: number;
  /** How long a VPN outage lasts, [min, max] ms (default [2000, 15000]). */
  vpnOutageMs?: [number, number];
  /** On reconnect the VPN address changes (default 0.3). */
  ipChangeRate?: number;
  /** On disconnect the VPN address disappears until reconnect (default 0.3). */
  ipLossRate?: number;
  /** The reported power state changes by itself (default 0.0005). */
  powerChangeRate?: number;
  /** An accepted power command never completes (default 0.05 per command). */
  stuckCommandRate?: number;
  /** A healthy robot goes down (default 0.005). */
  robotOutageRate?: number;
  /** How long a robot outage lasts, [min, max] ms (default [3000, 20000]). */
  robotOutageMs?: [number, number];
  /** Teleop lease taken, handed over or released (default 0.01). */
  leaseChangeRate?: number;
  /** cortex / navigation / vehicle_feedback state changes (default 0.03). */
  feedbackChangeRate?: number;
  /** The loaded route changes (default 0.005). */
  routeChangeRate?: number;
  /** The head of a robot's command queue completes (default 0.2). */
  commandProgressRate?: number;
}

export type FaultScope = 'token' | 'v1' | 'robots' | 'all';

/**
 * Injected faults. Status faults answer before authentication and skip the operation; a malformed
 * answer performs the operation and then truncates the JSON body.
 */
export interface FaultOptions {
  /**
   * Probability per status code, e.g. `{ 500: 0.1, 503: 0.05 }`. On `/v1` a status is only used
   * where the spec lists it for the operation; the token endpoint and robot calls take any 4xx/5xx.
   */
  errorRates?: Partial<Record<number, number>>;
  /** Added to every matching request. */
  latencyMs?: number;
  /** Uniform extra latency in [0, latencyJitterMs]. */
  latencyJitterMs?: number;
  /** Hold the request open and never answer (until the client gives up, the server closes, or 10 min pass). */
  timeoutRate?: number;
  /** Answer the success status with a truncated, unparseable JSON body. */
  malformedRate?: number;
  /**
   * Send the status and headers at once, then trickle the body out over `slowBodyMs`: a client
   * whose deadline covers only the headers (or only the gap between chunks) waits it out.
   */
  slowBodyRate?: number;
  /** How long a slow body takes from the headers to its last byte (default 10 s). */
  slowBodyMs?: number;
  /** Which surface the faults hit (default 'all'). */
  scope?: FaultScope | FaultScope[];
  /** Only requests addressing these vehicle ids / device ids (list and token calls are then spared). */
  targets?: string[];
}

/** How the token issuer issues tokens (`GET`/`PATCH /_sim/issuer`). */
export interface IssuerOptions {
  /** Lifetime of the tokens issued from now on, in seconds; fractions allowed (default 3600). */
  tokenTtlSeconds?: number;
  /** Send `expires_in` with each token (default true; the spec leaves the lifetime open). */
  sendExpiresIn?: boolean;
  /**
   * Issue JWTs whose payload carries `iat` and `exp` (whole seconds; the token expires at `exp`)
   * instead of opaque random tokens (default false).
   */
  jwt?: boolean;
}

export interface SimulatorOptions {
  host?: string;
  port?: number;
  seed?: number;
  vehicles?: number;
  robots?: number;
  clients?: SimClient[];
  /** Shorthand for `issuer.tokenTtlSeconds`. */
  tokenTtlSeconds?: number;
  issuer?: IssuerOptions;
  powerDelayMs?: number;
  behaviours?: boolean | BehaviourOptions;
  faults?: FaultOptions;
  logger?: Logger;
  /**
   * Networks whose callers may use the `/_sim` control API: CIDRs (`172.30.0.0/16`), single
   * addresses or `loopback` (default `['loopback']`; at most 32).
   */
  controlFrom?: string[];
}

/**
 * JSON fields that replace (or add to) an entity's element of its list (`GET /v1/vehicles`,
 * `GET /api/robots`), sent as given: `{"ipAddress": null}` sends the null the spec forbids,
 * `{"id": 7}` an id of the wrong type. For rehearsing a malformed list; null sends the element as
 * the spec says. Only the list is affected.
 */
export type ListFields = Record<string, unknown>;

export interface VehicleView {
  id: string;
  /** null: the field is omitted from the list. */
  ipAddress: string | null;
  vpnConnected: boolean;
  state: PowerState;
  pendingCommand: { state: CommandState } | null;
  updatedAt: string | null;
  /** false: power operations answer 404. */
  powerCapable: boolean;
  /** true: pending power commands never complete. */
  stuck: boolean;
  listFields: ListFields | null;
}

export type VehicleInput = { id: string } & Partial<Omit<VehicleView, 'id'>>;
export type VehiclePatch = Partial<Omit<VehicleView, 'id'>>;

export interface RobotFeedbackView {
  /** 0..4, see robot-shapes.md */
  cortexStatus: number;
  /** ROS 2 goal status 0..6 */
  navStatus: number;
  vehicleState: string;
  latitude: number;
  longitude: number;
  altitude: number;
}

export interface RobotView {
  deviceId: string;
  name: string;
  uuid: string;
  healthy: boolean;
  /** How an unhealthy robot answers through the gateway: 503, or no answer at all. */
  unhealthyMode: 'error' | 'timeout';
  feedback: RobotFeedbackView;
  lease: { holderId: string | null; expiresAt: string | null };
  activeSite: string | null;
  loadedRoute: string | null;
  loadedZoneSet: string | null;
  sites: string[];
  routes: string[];
  zoneSets: string[];
  room: { name: string; tracks: string[] } | null;
  paused: boolean;
  commandQueue: number;
  commandHistory: number;
  listFields: ListFields | null;
}

export interface RobotInput {
  deviceId: string;
  name?: string;
  healthy?: boolean;
  unhealthyMode?: 'error' | 'timeout';
  feedback?: Partial<RobotFeedbackView>;
  lease?: { holderId: string | null; expiresAt?: string | null } | null;
  /** Naming a site / route / zone set that does not exist creates an empty one. */
  activeSite?: string | null;
  loadedRoute?: string | null;
  loadedZoneSet?: string | null;
  listFields?: ListFields | null;
}
export type RobotPatch = Omit<RobotInput, 'deviceId'>;

export interface ContractViolation {
  at: string;
  operation: string;
  /** client: the caller broke the spec (e.g. a body on POST power); server: the simulator did. */
  side: 'client' | 'server';
  message: string;
}

export interface SimStats {
  since: string;
  tokenRequests: { total: number; byStatus: Record<string, number> };
  /** operation → status (or 'timeout') → count. Operations: /v1 operationIds, 'token', 'list_robots', 'robot:<METHOD> <path>'. */
  requests: Record<string, Record<string, number>>;
  faults: { status: number; timeout: number; malformed: number; delayed: number; slowBody: number };
  contractViolations: { total: number; recent: ContractViolation[] };
}

export interface SimState {
  url: string;
  seed: number;
  powerDelayMs: number;
  tokenTtlSeconds: number;
  issuer: Required<IssuerOptions>;
  clients: Array<{ id: string; vehicles: 'all' | string[]; robots: 'all' | string[]; forbidden: boolean }>;
  activeTokens: number;
  faults: FaultOptions;
  behaviours: Required<BehaviourOptions> | false;
  vehicles: VehicleView[];
  robots: RobotView[];
}

/** Same operations as the HTTP control API under /_sim. Bad input throws SimControlError. */
export interface SimulatorControl {
  state(): SimState;
  getVehicle(id: string): VehicleView | undefined;
  addVehicle(input: VehicleInput): VehicleView;
  updateVehicle(id: string, patch: VehiclePatch): VehicleView;
  removeVehicle(id: string): boolean;
  getRobot(deviceId: string): RobotView | undefined;
  addRobot(input: RobotInput): RobotView;
  updateRobot(deviceId: string, patch: RobotPatch): RobotView;
  removeRobot(deviceId: string): boolean;
  getFaults(): FaultOptions;
  /** Replaces the fault set ({} clears it). */
  setFaults(faults: FaultOptions): FaultOptions;
  clearFaults(): void;
  /** Revokes every issued token; returns how many. */
  expireTokens(): number;
  getIssuer(): Required<IssuerOptions>;
  /** Changes the given issuer options (tokens already issued keep their expiry); returns them all. */
  updateIssuer(options: IssuerOptions): Required<IssuerOptions>;
  setBehaviours(behaviours: boolean | BehaviourOptions): Required<BehaviourOptions> | false;
  stats(): SimStats;
  resetStats(): void;
  /** Re-seeds the fleet, restores the start faults and clears stats; issued tokens stay valid. */
  reset(): void;
}

export interface Simulator {
  /** http://HOST:PORT — base_url, robot_base_url and auth_url at once. */
  url: string;
  control: SimulatorControl;
  close(): Promise<void>;
}
