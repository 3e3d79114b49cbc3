import { z } from 'zod';
import { countField, durationField, numberField } from '../lib/fields.js';
import { unknownNames } from '../lib/issues.js';
import { UPSTREAM_ERROR_CODES, type UpstreamErrorCode } from '../upstream/errors.js';

/**
 * Detector options: the `detectors:` section of the config file (snake_case, durations written
 * `5m` or as milliseconds) and the camelCase options each detector takes. Mount the section with
 * `detectors: detectorOptionsSchema.default(detectorOptionsSchema.parse({}))` and hand
 * `toDetectorOptions(config.detectors)` to the detectors.
 *
 * Thresholds count consecutive observations (for `upstream`, consecutive counting windows; for
 * `pace`, consecutive ticks of the poller; for `list`, consecutive lists).
 */

const count = (fallback: number) => countField(1, 10_000).default(fallback);

const thresholds = (failure: number, success: number) => ({
  /** Consecutive bad observations before the alert fires. */
  failure_threshold: count(failure),
  /** Consecutive good observations before it resolves. */
  success_threshold: count(success),
});

/**
 * The codes an observation error can carry (`toObservationError`): the upstream client's, and
 * `internal` for a fault of fleetwatch's own.
 */
export const OBSERVATION_ERROR_CODES: readonly string[] = [...UPSTREAM_ERROR_CODES, 'internal'];

/** Error codes (ObservationError.code) that count as "unreachable" on power status. */
export const DEFAULT_UNREACHABLE_CODES = [
  'timeout',
  'network',
  'bad_gateway',
  'service_unavailable',
  'gateway_timeout',
] as const satisfies readonly UpstreamErrorCode[];

/** One of `OBSERVATION_ERROR_CODES`; `http_503` and the like point at `statuses`, where a status goes. */
const observationErrorCode = z
  .string({ error: 'expected an error code such as timeout' })
  .superRefine((code, ctx) => {
    if (OBSERVATION_ERROR_CODES.includes(code)) return;
    const status = /^http_(\d{3})$/.exec(code)?.[1];
    ctx.addIssue({
      code: 'custom',
      message: status
        ? `unknown error code "${code}"; an HTTP status goes in statuses (${status})`
        : unknownNames('error code', [code], OBSERVATION_ERROR_CODES),
    });
  });

export const DEFAULT_UNREACHABLE_STATUSES = [502, 503, 504] as const;

export const detectorOptionsSchema = z.strictObject({
  membership: z
    .strictObject({
      /** Consecutive lists a vehicle or robot must be missing from before it is removed. */
      remove_after: count(2),
    })
    .default({ remove_after: 2 }),
  vpn: z.strictObject(thresholds(2, 1)).default({ failure_threshold: 2, success_threshold: 1 }),
  reachability: z
    .strictObject({
      ...thresholds(3, 1),
      /** Observation error codes that count as a failed poll for `vehicle.unreachable`. */
      codes: z
        .array(observationErrorCode, { error: 'expected a list of error codes such as [timeout, network]' })
        .max(100)
        .default([...DEFAULT_UNREACHABLE_CODES]),
      /** HTTP statuses that count too, whatever their code. */
      statuses: z
        .array(countField(100, 599), { error: 'expected a list of HTTP statuses such as [502, 503, 504]' })
        .max(100)
        .default([...DEFAULT_UNREACHABLE_STATUSES]),
    })
    .default({
      failure_threshold: 3,
      success_threshold: 1,
      codes: [...DEFAULT_UNREACHABLE_CODES],
      statuses: [...DEFAULT_UNREACHABLE_STATUSES],
    }),
  health: z.strictObject(thresholds(3, 2)).default({ failure_threshold: 3, success_threshold: 2 }),
  power: z
    .strictObject({
      /** A command pending longer than this is stuck. */
      stuck_after: durationField(1_000, 7 * 86_400_000).default(300_000),
      /** A power report older than this (or never made) is stale. */
      stale_after: durationField(1_000, 7 * 86_400_000).default(900_000),
    })
    .default({ stuck_after: 300_000, stale_after: 900_000 }),
  command_queue: z
    .strictObject({
      /** Queued commands on a robot at or above this are a backlog (`robot.command_queue.backlog`). */
      backlog_threshold: count(10),
    })
    .default({ backlog_threshold: 10 }),
  upstream: z
    .strictObject({
      ...thresholds(2, 2),
      /** (5xx + time-outs) / requests at or above this makes a window bad. */
      error_ratio: numberField({ min: 0, max: 1, aboveMin: true }).default(0.5),
      /** Fewer requests than this cannot make a window bad by ratio (401/403 still can). */
      min_requests: count(10),
      /** 401/403 answers in one window at or above this make it bad, whatever the ratio. */
      auth_failures: count(5),
    })
    .default({
      failure_threshold: 2,
      success_threshold: 2,
      error_ratio: 0.5,
      min_requests: 10,
      auth_failures: 5,
    }),
  /** Lists with elements not as the spec says (`monitor.list.unreadable`). */
  list: z.strictObject(thresholds(2, 2)).default({ failure_threshold: 2, success_threshold: 2 }),
  /** Ticks of a poller with shards still queued or running from the tick before (`monitor.polling.behind`). */
  pace: z.strictObject(thresholds(3, 3)).default({ failure_threshold: 3, success_threshold: 3 }),
});

export type DetectorOptionsConfig = z.output<typeof detectorOptionsSchema>;

export interface ThresholdOptions {
  failureThreshold: number;
  successThreshold: number;
}

export interface MembershipOptions {
  removeAfter: number;
}

export type VehicleLinkOptions = ThresholdOptions;

export interface VehiclePowerOptions extends ThresholdOptions {
  stuckAfterMs: number;
  staleAfterMs: number;
  unreachableCodes: readonly string[];
  unreachableStatuses: readonly number[];
}

export type RobotHealthOptions = ThresholdOptions;

export interface RobotCommandQueueOptions {
  backlogThreshold: number;
}

export interface UpstreamHealthOptions extends ThresholdOptions {
  errorRatio: number;
  minRequests: number;
  authFailures: number;
}

export type PollPaceOptions = ThresholdOptions;

export type ListElementsOptions = ThresholdOptions;

/** What each detector takes as `context.options`. */
export interface DetectorOptions {
  vehicleMembership: MembershipOptions;
  robotMembership: MembershipOptions;
  vehicleLink: VehicleLinkOptions;
  vehiclePower: VehiclePowerOptions;
  robotHealth: RobotHealthOptions;
  robotCommandQueue: RobotCommandQueueOptions;
  upstreamHealth: UpstreamHealthOptions;
  pollPace: PollPaceOptions;
  listElements: ListElementsOptions;
}

export function toDetectorOptions(section: DetectorOptionsConfig): DetectorOptions {
  const membership = { removeAfter: section.membership.remove_after };
  return {
    vehicleMembership: membership,
    robotMembership: { ...membership },
    vehicleLink: {
      failureThreshold: section.vpn.failure_threshold,
      successThreshold: section.vpn.success_threshold,
    },
    vehiclePower: {
      failureThreshold: section.reachability.failure_threshold,
      successThreshold: section.reachability.success_threshold,
      unreachableCodes: section.reachability.codes,
      unreachableStatuses: section.reachability.statuses,
      stuckAfterMs: section.power.stuck_after,
      staleAfterMs: section.power.stale_after,
    },
    robotHealth: {
      failureThreshold: section.health.failure_threshold,
      successThreshold: section.health.success_threshold,
    },
    robotCommandQueue: { backlogThreshold: section.command_queue.backlog_threshold },
    upstreamHealth: {
      failureThreshold: section.upstream.failure_threshold,
      successThreshold: section.upstream.success_threshold,
      errorRatio: section.upstream.error_ratio,
      minRequests: section.upstream.min_requests,
      authFailures: section.upstream.auth_failures,
    },
    pollPace: {
      failureThreshold: section.pace.failure_threshold,
      successThreshold: section.pace.success_threshold,
    },
    listElements: {
      failureThreshold: section.list.failure_threshold,
      successThreshold: section.list.success_threshold,
    },
  };
}

export const DEFAULT_DETECTOR_OPTIONS: DetectorOptions = toDetectorOptions(detectorOptionsSchema.parse({}));

type OptionValue = number | readonly string[] | readonly number[];

/**
 * Reads a detector's `context.options` leniently: each key of `defaults` is taken from `raw` when
 * it has a usable value of the same kind (a finite non-negative number; an array, keeping entries
 * of the right type), else the default. Never throws.
 */
export function readOptions<T extends object>(raw: unknown, defaults: T): T {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return defaults;
  const source = raw as Record<string, unknown>;
  const out: Record<string, OptionValue> = { ...(defaults as Record<string, OptionValue>) };
  for (const [key, fallback] of Object.entries(defaults) as [string, OptionValue][]) {
    const value = Object.hasOwn(source, key) ? source[key] : undefined;
    if (typeof fallback === 'number') {
      if (typeof value === 'number' && Number.isFinite(value) && value >= 0) out[key] = value;
    } else if (Array.isArray(value)) {
      const kind = typeof (fallback as readonly unknown[])[0];
      out[key] = value.filter((item) => typeof item === kind) as OptionValue;
    }
  }
  return out as T;
}

/** A consecutive-count threshold: at least 1, whole. */
export function atLeastOne(value: number): number {
  return Math.max(1, Math.floor(value));
}
