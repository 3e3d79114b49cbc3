import type { Logger } from 'pino';
import type { UpstreamConfig } from '../config/schema.js';
import { type ApiTransport, parseBody, parseJson, statusError, validate } from './api.js';
import { type ErrorContext, oneLine } from './errors.js';
import type { CallOptions, HttpMethod, HttpResponse } from './http.js';
import { type RetryPolicy, withRetry } from './retry.js';
import {
  type LeaseStatus,
  type PlatformFeedback,
  platformFeedbackResponseSchema,
  type RobotEnvelope,
  type RobotHealth,
  type RobotSummary,
  type RobotUuidResponse,
  robotEnvelopeSchema,
  robotHealthSchema,
  robotListSchema,
  robotUuidResponseSchema,
  teleopStatusResponseSchema,
} from './schemas/robot.js';

/**
 * The robot-level interface: `GET {robot_base_url}/api/robots` and the device gateway
 * `{robot_base_url}/api/platform/{deviceId}/v2/...` (device id and `{name}` path parameters
 * URL-encoded). One method per endpoint of the spec's robot-level tables, plus `uuid` (older
 * robots' health probe). Write bodies are passed through as JSON; responses are parsed leniently
 * (`RobotEnvelope`: `{status?, message?, data?}` with unknown fields kept).
 */
export interface RobotClient {
  /** `GET /api/robots` — the caller's robots. */
  listRobots(opts?: CallOptions): Promise<RobotSummary[]>;

  // Health Check
  /** `GET /v2/health` — 200 with a parseable object body means healthy. */
  health(deviceId: string, opts?: CallOptions): Promise<RobotHealth>;
  /** `GET /v2/uuid` — older robots' health probe. */
  uuid(deviceId: string, opts?: CallOptions): Promise<RobotUuidResponse>;

  // Vehicle Autonomy
  /** `GET /v2/platform-feedback` — returns `data.platform_feedback`. */
  platformFeedback(deviceId: string, opts?: CallOptions): Promise<PlatformFeedback>;
  /** `GET /v2/costmap/boundary` */
  costmapBoundary(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `GET /v2/navigation-path-options` */
  navigationPathOptions(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `GET /v2/motion-commands` */
  motionCommands(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `GET /v2/reference-targets` */
  referenceTargets(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `POST /v2/reference-targets` */
  createReferenceTarget(deviceId: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `POST /v2/reference-targets/current-location` */
  createReferenceTargetAtCurrentLocation(
    deviceId: string,
    body?: unknown,
    opts?: CallOptions,
  ): Promise<RobotEnvelope>;
  /** `POST /v2/gps-waypoints` */
  sendGpsWaypoints(deviceId: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `POST /v2/relative-waypoints` */
  sendRelativeWaypoints(deviceId: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `POST /v2/motion-command` — e.g. `{motion_command: 0|1|2, mode: 0|1}`. */
  sendMotionCommand(deviceId: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `GET /v2/command-history` */
  commandHistory(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `GET /v2/command-queue` */
  commandQueue(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope>;

  // Teleop Control
  /** `POST /v2/teleop-control/acquire` (403 when someone else holds the lease). */
  teleopAcquire(deviceId: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `POST /v2/teleop-control/renew` */
  teleopRenew(deviceId: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `POST /v2/teleop-control/release`, with `?force=true` when `force`. */
  teleopRelease(deviceId: string, force?: boolean, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `POST /v2/teleop-control/transfer` with `{to}`. */
  teleopTransfer(deviceId: string, to: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `GET /v2/teleop-control/status` */
  teleopStatus(deviceId: string, opts?: CallOptions): Promise<LeaseStatus>;

  // Realtime
  /** `GET /v2/realtime/config` */
  realtimeConfig(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `POST /v2/realtime/token` */
  createRealtimeToken(deviceId: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `GET /v2/realtime/room` */
  realtimeRoom(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `POST /v2/realtime/room` */
  createRealtimeRoom(deviceId: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `DELETE /v2/realtime/room` */
  deleteRealtimeRoom(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `POST /v2/realtime/room/track` */
  createRealtimeTrack(deviceId: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `DELETE /v2/realtime/room/track` (a body, if given, is sent). */
  deleteRealtimeTrack(deviceId: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope>;

  // Site Management
  /** `GET /v2/sites/{name}` */
  getSite(deviceId: string, name: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `POST /v2/sites/{name}` */
  createSite(deviceId: string, name: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `PUT /v2/sites/{name}` */
  updateSite(deviceId: string, name: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `DELETE /v2/sites/{name}` */
  deleteSite(deviceId: string, name: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `GET /v2/sites` */
  listSites(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `GET /v2/active_site` */
  activeSite(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `POST /v2/sites/{name}/activate` */
  activateSite(deviceId: string, name: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope>;

  // Route Management
  /** `GET /v2/routes/{name}` */
  getRoute(deviceId: string, name: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `POST /v2/routes/{name}` */
  createRoute(deviceId: string, name: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `PUT /v2/routes/{name}` */
  updateRoute(deviceId: string, name: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `DELETE /v2/routes/{name}` */
  deleteRoute(deviceId: string, name: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `GET /v2/routes` */
  listRoutes(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `GET /v2/loaded_route` */
  loadedRoute(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `POST /v2/routes/{name}/load` */
  loadRoute(deviceId: string, name: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope>;

  // Zone Set Management
  /** `GET /v2/zone_sets/{name}` */
  getZoneSet(deviceId: string, name: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `POST /v2/zone_sets/{name}` */
  createZoneSet(deviceId: string, name: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `PUT /v2/zone_sets/{name}` */
  updateZoneSet(deviceId: string, name: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `DELETE /v2/zone_sets/{name}` */
  deleteZoneSet(deviceId: string, name: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `GET /v2/zone_sets` */
  listZoneSets(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `GET /v2/loaded_zone_set` */
  loadedZoneSet(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `POST /v2/zone_sets/{name}/load` */
  loadZoneSet(deviceId: string, name: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `POST /v2/loaded_zone_set/clear` */
  clearLoadedZoneSet(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope>;
  /** `PATCH /v2/loaded_zone_set/enabled` — enable or disable individual zones. */
  setLoadedZoneSetEnabled(deviceId: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope>;
}

export interface RobotClientOptions {
  config: UpstreamConfig;
  api: ApiTransport;
  logger?: Logger;
}

type Resource = 'site' | 'route' | 'zone set';

const enc = encodeURIComponent;

/**
 * Generic robot bodies: an object is an envelope; any other JSON value (a bare list, say) is kept
 * as `{data: value}` so nothing the robot said is lost.
 */
function toEnvelope(json: unknown): unknown {
  return typeof json === 'object' && json !== null && !Array.isArray(json) ? json : { data: json };
}

/**
 * Robot-level client.
 *
 * Reads (GET) are retried like `/v1` reads: 502/503/504, time-outs and network errors, with
 * backoff, jitter and `Retry-After`. Writes (POST/PUT/PATCH/DELETE) are **never** retried
 * automatically: their semantics (is a waypoint list appended? is a lease acquired twice?) are not
 * specified, so a second attempt could do something twice. Only a 401 is resent once with a fresh
 * token, since a request rejected as unauthenticated was not processed. Success is any 2xx.
 *
 * Error bodies (`{status: "error", message, error: {details}}`, 422 `{detail: [...]}`) become the
 * `upstreamMessage` of the typed error and the tail of its message.
 */
export class HttpRobotClient implements RobotClient {
  readonly #base: string;
  readonly #api: ApiTransport;
  readonly #policy: RetryPolicy;
  readonly #logger: Logger | undefined;

  constructor(options: RobotClientOptions) {
    this.#base = options.config.robot_base_url.replace(/\/+$/, '');
    this.#api = options.api;
    this.#logger = options.logger;
    const http = options.config.http;
    this.#policy = {
      retries: http.retries,
      baseDelayMs: http.retry_base_delay,
      maxDelayMs: http.retry_max_delay,
    };
  }

  listRobots(opts: CallOptions = {}): Promise<RobotSummary[]> {
    const ctx: ErrorContext = { operation: 'robot.list_robots' };
    return this.#retrying(ctx, opts, async () => {
      const response = await this.#api.send({
        ...ctx,
        method: 'GET',
        url: `${this.#base}/api/robots`,
        signal: opts.signal,
      });
      if (!isSuccess(response)) throw statusError(ctx, response);
      return parseBody(ctx, response, robotListSchema);
    });
  }

  // --- Health -------------------------------------------------------------------------------

  health(deviceId: string, opts?: CallOptions): Promise<RobotHealth> {
    return this.#get(deviceId, 'robot.health', '/health', opts, (ctx, response) =>
      parseBody(ctx, response, robotHealthSchema),
    );
  }

  uuid(deviceId: string, opts?: CallOptions): Promise<RobotUuidResponse> {
    return this.#get(deviceId, 'robot.uuid', '/uuid', opts, (ctx, response) =>
      parseBody(ctx, response, robotUuidResponseSchema),
    );
  }

  // --- Vehicle Autonomy ---------------------------------------------------------------------

  platformFeedback(deviceId: string, opts?: CallOptions): Promise<PlatformFeedback> {
    return this.#get(
      deviceId,
      'robot.platform_feedback',
      '/platform-feedback',
      opts,
      (ctx, response) => parseBody(ctx, response, platformFeedbackResponseSchema).data.platform_feedback,
    );
  }

  costmapBoundary(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#getEnvelope(deviceId, 'robot.costmap_boundary', '/costmap/boundary', opts);
  }

  navigationPathOptions(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#getEnvelope(deviceId, 'robot.navigation_path_options', '/navigation-path-options', opts);
  }

  motionCommands(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#getEnvelope(deviceId, 'robot.motion_commands', '/motion-commands', opts);
  }

  referenceTargets(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#getEnvelope(deviceId, 'robot.reference_targets', '/reference-targets', opts);
  }

  createReferenceTarget(deviceId: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.create_reference_target', 'POST', '/reference-targets', body, opts);
  }

  createReferenceTargetAtCurrentLocation(
    deviceId: string,
    body?: unknown,
    opts?: CallOptions,
  ): Promise<RobotEnvelope> {
    return this.#write(
      deviceId,
      'robot.create_reference_target_current_location',
      'POST',
      '/reference-targets/current-location',
      body,
      opts,
    );
  }

  sendGpsWaypoints(deviceId: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.send_gps_waypoints', 'POST', '/gps-waypoints', body, opts);
  }

  sendRelativeWaypoints(deviceId: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.send_relative_waypoints', 'POST', '/relative-waypoints', body, opts);
  }

  sendMotionCommand(deviceId: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.send_motion_command', 'POST', '/motion-command', body, opts);
  }

  commandHistory(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#getEnvelope(deviceId, 'robot.command_history', '/command-history', opts);
  }

  commandQueue(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#getEnvelope(deviceId, 'robot.command_queue', '/command-queue', opts);
  }

  // --- Teleop Control -----------------------------------------------------------------------

  teleopAcquire(deviceId: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.teleop_acquire', 'POST', '/teleop-control/acquire', body, opts);
  }

  teleopRenew(deviceId: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.teleop_renew', 'POST', '/teleop-control/renew', body, opts);
  }

  teleopRelease(deviceId: string, force = false, opts?: CallOptions): Promise<RobotEnvelope> {
    const path = force ? '/teleop-control/release?force=true' : '/teleop-control/release';
    return this.#write(deviceId, 'robot.teleop_release', 'POST', path, undefined, opts);
  }

  teleopTransfer(deviceId: string, to: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.teleop_transfer', 'POST', '/teleop-control/transfer', { to }, opts);
  }

  teleopStatus(deviceId: string, opts?: CallOptions): Promise<LeaseStatus> {
    return this.#get(deviceId, 'robot.teleop_status', '/teleop-control/status', opts, (ctx, response) => {
      const raw = parseJson(ctx, response);
      const body = validate(ctx, raw, teleopStatusResponseSchema, response.status);
      const lease: LeaseStatus = { raw };
      if (body.data.holder_id !== undefined) lease.holderId = body.data.holder_id;
      if (body.data.expires_at !== undefined) lease.expiresAt = body.data.expires_at;
      return lease;
    });
  }

  // --- Realtime -----------------------------------------------------------------------------

  realtimeConfig(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#getEnvelope(deviceId, 'robot.realtime_config', '/realtime/config', opts);
  }

  createRealtimeToken(deviceId: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.create_realtime_token', 'POST', '/realtime/token', body, opts);
  }

  realtimeRoom(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#getEnvelope(deviceId, 'robot.realtime_room', '/realtime/room', opts);
  }

  createRealtimeRoom(deviceId: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.create_realtime_room', 'POST', '/realtime/room', body, opts);
  }

  deleteRealtimeRoom(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.delete_realtime_room', 'DELETE', '/realtime/room', undefined, opts);
  }

  createRealtimeTrack(deviceId: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.create_realtime_track', 'POST', '/realtime/room/track', body, opts);
  }

  deleteRealtimeTrack(deviceId: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.delete_realtime_track', 'DELETE', '/realtime/room/track', body, opts);
  }

  // --- Sites --------------------------------------------------------------------------------

  getSite(deviceId: string, name: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#getEnvelope(deviceId, 'robot.get_site', `/sites/${enc(name)}`, opts, ['site', name]);
  }

  createSite(deviceId: string, name: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.create_site', 'POST', `/sites/${enc(name)}`, body, opts, [
      'site',
      name,
    ]);
  }

  updateSite(deviceId: string, name: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.update_site', 'PUT', `/sites/${enc(name)}`, body, opts, [
      'site',
      name,
    ]);
  }

  deleteSite(deviceId: string, name: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.delete_site', 'DELETE', `/sites/${enc(name)}`, undefined, opts, [
      'site',
      name,
    ]);
  }

  listSites(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#getEnvelope(deviceId, 'robot.list_sites', '/sites', opts);
  }

  activeSite(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#getEnvelope(deviceId, 'robot.active_site', '/active_site', opts);
  }

  activateSite(deviceId: string, name: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.activate_site', 'POST', `/sites/${enc(name)}/activate`, body, opts, [
      'site',
      name,
    ]);
  }

  // --- Routes -------------------------------------------------------------------------------

  getRoute(deviceId: string, name: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#getEnvelope(deviceId, 'robot.get_route', `/routes/${enc(name)}`, opts, ['route', name]);
  }

  createRoute(deviceId: string, name: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.create_route', 'POST', `/routes/${enc(name)}`, body, opts, [
      'route',
      name,
    ]);
  }

  updateRoute(deviceId: string, name: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.update_route', 'PUT', `/routes/${enc(name)}`, body, opts, [
      'route',
      name,
    ]);
  }

  deleteRoute(deviceId: string, name: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.delete_route', 'DELETE', `/routes/${enc(name)}`, undefined, opts, [
      'route',
      name,
    ]);
  }

  listRoutes(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#getEnvelope(deviceId, 'robot.list_routes', '/routes', opts);
  }

  loadedRoute(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#getEnvelope(deviceId, 'robot.loaded_route', '/loaded_route', opts);
  }

  loadRoute(deviceId: string, name: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.load_route', 'POST', `/routes/${enc(name)}/load`, body, opts, [
      'route',
      name,
    ]);
  }

  // --- Zone sets ----------------------------------------------------------------------------

  getZoneSet(deviceId: string, name: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#getEnvelope(deviceId, 'robot.get_zone_set', `/zone_sets/${enc(name)}`, opts, [
      'zone set',
      name,
    ]);
  }

  createZoneSet(deviceId: string, name: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.create_zone_set', 'POST', `/zone_sets/${enc(name)}`, body, opts, [
      'zone set',
      name,
    ]);
  }

  updateZoneSet(deviceId: string, name: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.update_zone_set', 'PUT', `/zone_sets/${enc(name)}`, body, opts, [
      'zone set',
      name,
    ]);
  }

  deleteZoneSet(deviceId: string, name: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(
      deviceId,
      'robot.delete_zone_set',
      'DELETE',
      `/zone_sets/${enc(name)}`,
      undefined,
      opts,
      ['zone set', name],
    );
  }

  listZoneSets(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#getEnvelope(deviceId, 'robot.list_zone_sets', '/zone_sets', opts);
  }

  loadedZoneSet(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#getEnvelope(deviceId, 'robot.loaded_zone_set', '/loaded_zone_set', opts);
  }

  loadZoneSet(deviceId: string, name: string, body?: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(deviceId, 'robot.load_zone_set', 'POST', `/zone_sets/${enc(name)}/load`, body, opts, [
      'zone set',
      name,
    ]);
  }

  clearLoadedZoneSet(deviceId: string, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(
      deviceId,
      'robot.clear_loaded_zone_set',
      'POST',
      '/loaded_zone_set/clear',
      undefined,
      opts,
    );
  }

  setLoadedZoneSetEnabled(deviceId: string, body: unknown, opts?: CallOptions): Promise<RobotEnvelope> {
    return this.#write(
      deviceId,
      'robot.set_loaded_zone_set_enabled',
      'PATCH',
      '/loaded_zone_set/enabled',
      body,
      opts,
    );
  }

  // --- plumbing -----------------------------------------------------------------------------

  #deviceUrl(deviceId: string, path: string): string {
    return `${this.#base}/api/platform/${enc(deviceId)}/v2${path}`;
  }

  #ctx(operation: string, deviceId: string, resource?: [Resource, string]): ErrorContext {
    const robot = `robot "${deviceId}"`;
    return {
      operation,
      target: deviceId,
      subject: resource ? `${resource[0]} "${resource[1]}" on ${robot}` : robot,
    };
  }

  #retrying<T>(ctx: ErrorContext, opts: CallOptions, attempt: () => Promise<T>): Promise<T> {
    return withRetry(attempt, {
      policy: this.#policy,
      signal: opts.signal,
      onRetry: ({ error, attempt: n, delayMs }) =>
        this.#logger?.debug(
          { err: error, operation: ctx.operation, target: ctx.target, attempt: n, delayMs },
          'retrying upstream request',
        ),
    });
  }

  #get<T>(
    deviceId: string,
    operation: string,
    path: string,
    opts: CallOptions = {},
    parse: (ctx: ErrorContext, response: HttpResponse) => T,
    resource?: [Resource, string],
  ): Promise<T> {
    const ctx = this.#ctx(operation, deviceId, resource);
    const url = this.#deviceUrl(deviceId, path);
    return this.#retrying(ctx, opts, async () => {
      const response = await this.#api.send({ ...ctx, method: 'GET', url, signal: opts.signal });
      if (!isSuccess(response)) throw statusError(ctx, response);
      return parse(ctx, response);
    });
  }

  #getEnvelope(
    deviceId: string,
    operation: string,
    path: string,
    opts?: CallOptions,
    resource?: [Resource, string],
  ): Promise<RobotEnvelope> {
    return this.#get(
      deviceId,
      operation,
      path,
      opts,
      (ctx, response) => parseEnvelope(ctx, response, parseJson(ctx, response)),
      resource,
    );
  }

  /** One attempt, never retried (bar the 401 re-auth in ApiTransport). */
  async #write(
    deviceId: string,
    operation: string,
    method: Exclude<HttpMethod, 'GET'>,
    path: string,
    body: unknown,
    opts: CallOptions = {},
    resource?: [Resource, string],
  ): Promise<RobotEnvelope> {
    const ctx = this.#ctx(operation, deviceId, resource);
    const url = this.#deviceUrl(deviceId, path);
    const response = await this.#api.send({ ...ctx, method, url, json: body, signal: opts.signal });
    if (!isSuccess(response)) throw statusError(ctx, response);
    // The 2xx is what says the write happened; the body is informational.
    const text = response.body.trim();
    if (text === '') return {};
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { message: oneLine(text, 200) };
    }
    return parseEnvelope(ctx, response, json);
  }
}

function isSuccess(response: HttpResponse): boolean {
  return response.status >= 200 && response.status < 300;
}

function parseEnvelope(ctx: ErrorContext, response: HttpResponse, json: unknown): RobotEnvelope {
  return validate(ctx, toEnvelope(json), robotEnvelopeSchema, response.status);
}
