import { z } from 'zod';
import {
  type PowerState,
  type PowerStatus,
  type PowerTarget,
  powerStateSchema,
  powerTargetSchema,
} from '../../upstream/schemas/v1.js';
import { draft, EVENT } from '../catalogue.js';
import { DEFAULT_DETECTOR_OPTIONS, readOptions, type VehiclePowerOptions } from '../detector-options.js';
import type { EventDraft, ObservationError } from '../types.js';
import { type Clock, defineDetector, elapsed, errorRef, isoOf, storedTimeSchema } from './define.js';
import {
  alertingSince,
  stepThreshold,
  type ThresholdState,
  thresholdStateSchema,
  transitionData,
} from './threshold.js';

/**
 * One vehicle's power status (GET /v1/vehicles/{id}/power/status).
 *
 * Good readings (the first one is the baseline: no change events for it):
 * - `vehicle.power.changed` when `state` changes.
 * - `vehicle.power.command.pending` when a `pendingCommand` appears, or changes to the other
 *   target (`previous` is then the superseded target). A command first seen on the baseline
 *   reading is not announced, but it is timed from then (and can become stuck).
 * - When the pending command clears: `vehicle.power.command.completed` if `state` equals what it
 *   requested, else `vehicle.power.command.failed` (warning); `durationMs` = first seen pending →
 *   seen cleared.
 * - `vehicle.power.command.stuck` once per command when it has been pending longer than
 *   `stuckAfterMs` (measured against `context.now`); `vehicle.power.command.unstuck` when that
 *   command ends, whichever way (`outcome`: completed, failed, superseded).
 * - `vehicle.power.report.stale` when `updatedAt` is null or unreadable or older than
 *   `staleAfterMs` (against `context.now`); `vehicle.power.report.fresh` when it is fresh again,
 *   with the duration. Staleness is an incident, so a reading already stale on the baseline fires.
 *
 * Failed observations never produce change events:
 * - error codes in `unreachableCodes` or statuses in `unreachableStatuses` (502/503/504,
 *   time-out, network) feed `vehicle.unreachable` (after `failureThreshold` in a row) /
 *   `vehicle.reachable` (after `successThreshold` good readings, with the outage duration).
 * - 404 (`not_found`) sets `powerCapable: false` (and `unsupportedSince`) so the poller can
 *   re-check the vehicle with back-off. It emits one info `vehicle.power.unsupported` when the
 *   vehicle had answered before; a vehicle that 404s from the start is recorded silently. The next
 *   good reading sets it back to true, emits one info `vehicle.power.supported`, and is diffed
 *   against the last reading before the 404s.
 * - anything else (500, invalid payload, 401/403) is counted by the caller and changes nothing.
 * Open stuck/stale incidents stay open through failures and are decided by the next good reading.
 */

export interface PowerReading {
  state: PowerState;
  pending: PowerTarget | null;
  updatedAt: string | null;
}

export interface VehiclePowerState {
  v: 1;
  /** false after a 404 (no power control), true after a good reading, null before either. */
  powerCapable: boolean | null;
  /**
   * While `powerCapable` is false: since when (epoch ms; missing in states written before it
   * was kept, until the next 404). Absent otherwise, so the states of power-capable vehicles stay
   * as they were.
   */
  unsupportedSince?: number;
  /** The last good reading; null before the first. */
  reading: PowerReading | null;
  /** When the current pending command was first seen (epoch ms); null when none is pending. */
  pendingSince: number | null;
  /** Whether `vehicle.power.command.stuck` fired for the current pending command. */
  stuck: boolean;
  /** When the report was first seen stale (epoch ms); null while fresh. */
  staleSince: number | null;
  reachability: ThresholdState | null;
}

const stateSchema = z.object({
  v: z.literal(1),
  powerCapable: z.boolean().nullable(),
  unsupportedSince: storedTimeSchema.optional(),
  reading: z
    .object({
      state: powerStateSchema,
      pending: powerTargetSchema.nullable(),
      updatedAt: z.string().nullable(),
    })
    .nullable(),
  pendingSince: storedTimeSchema.nullable(),
  stuck: z.boolean(),
  staleSince: storedTimeSchema.nullable(),
  reachability: thresholdStateSchema.nullable(),
});

/** Lenient: a missing `pendingCommand` or `updatedAt` reads as null. */
const valueSchema = z.object({
  state: powerStateSchema,
  pendingCommand: z.object({ state: powerTargetSchema }).nullish(),
  updatedAt: z.string().nullish(),
});

function isNotFound(error: ObservationError): boolean {
  return error.code === 'not_found' || error.status === 404;
}

function isUnreachable(error: ObservationError, options: VehiclePowerOptions): boolean {
  return (
    options.unreachableCodes.includes(error.code) ||
    (error.status !== undefined && options.unreachableStatuses.includes(error.status))
  );
}

/**
 * A duration option as events report it: whole, non-negative, and a safe integer (the config
 * accepts any number of digits; a limit of millennia behaves the same as this one).
 */
function limitMs(ms: number): number {
  return Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, Math.round(ms)));
}

function onReading(state: VehiclePowerState, raw: unknown, clock: Clock, options: VehiclePowerOptions) {
  const parsed = valueSchema.safeParse(raw);
  if (!parsed.success) return { state, events: [] };
  const current: PowerReading = {
    state: parsed.data.state,
    pending: parsed.data.pendingCommand?.state ?? null,
    updatedAt: parsed.data.updatedAt ?? null,
  };
  const events: EventDraft[] = [];
  if (state.powerCapable === false) {
    const since = state.unsupportedSince;
    events.push(
      draft(EVENT.powerSupported, {
        previous: 'unsupported',
        current: 'supported',
        unsupportedSince: since === undefined ? null : isoOf(since),
      }),
    );
  }

  const reach = stepThreshold(state.reachability, true, clock.at, options);
  if (reach.transition?.kind === 'resolved') {
    events.push(draft(EVENT.vehicleReachable, transitionData(reach.transition, 'reachable', 'unreachable')));
  }

  let pendingSince: number | null = current.pending === null ? null : (state.pendingSince ?? clock.at);
  let stuck = current.pending === null ? false : state.stuck;
  const before = state.reading;
  if (before === null) {
    pendingSince = current.pending === null ? null : clock.at;
    stuck = false;
  } else {
    if (before.state !== current.state) {
      events.push(
        draft(EVENT.powerChanged, {
          previous: before.state,
          current: current.state,
          updatedAt: current.updatedAt,
        }),
      );
    }
    if (before.pending !== current.pending) {
      if (before.pending !== null) {
        const startedAt = state.pendingSince ?? clock.at;
        const ended = {
          requested: before.pending,
          current: current.state,
          pendingSince: isoOf(startedAt),
          durationMs: elapsed(startedAt, clock.at),
        };
        let outcome: 'completed' | 'failed' | 'superseded' = 'superseded';
        if (current.pending === null) {
          outcome = current.state === before.pending ? 'completed' : 'failed';
          events.push(
            draft(outcome === 'completed' ? EVENT.powerCommandCompleted : EVENT.powerCommandFailed, ended),
          );
        }
        if (state.stuck) {
          events.push(
            draft(EVENT.powerCommandUnstuck, {
              requested: ended.requested,
              current: ended.current,
              outcome,
              since: ended.pendingSince,
              durationMs: ended.durationMs,
            }),
          );
        }
      }
      if (current.pending !== null) {
        events.push(
          draft(EVENT.powerCommandPending, {
            requested: current.pending,
            previous: before.pending,
            current: current.pending,
            state: current.state,
            pendingSince: isoOf(clock.at),
          }),
        );
      }
      pendingSince = current.pending === null ? null : clock.at;
      stuck = false;
    }
  }

  const stuckAfterMs = limitMs(options.stuckAfterMs);
  if (
    current.pending !== null &&
    pendingSince !== null &&
    !stuck &&
    clock.now - pendingSince > stuckAfterMs
  ) {
    stuck = true;
    events.push(
      draft(EVENT.powerCommandStuck, {
        requested: current.pending,
        current: current.state,
        pendingSince: isoOf(pendingSince),
        pendingForMs: elapsed(pendingSince, clock.now),
        stuckAfterMs,
      }),
    );
  }

  const staleAfterMs = limitMs(options.staleAfterMs);
  const updatedMs = current.updatedAt === null ? Number.NaN : Date.parse(current.updatedAt);
  const stale = !Number.isFinite(updatedMs) || clock.now - updatedMs > staleAfterMs;
  let staleSince = state.staleSince;
  if (stale && staleSince === null) {
    staleSince = clock.at;
    events.push(
      draft(EVENT.powerReportStale, {
        updatedAt: current.updatedAt,
        ageMs: Number.isFinite(updatedMs) ? elapsed(updatedMs, clock.now) : null,
        staleAfterMs,
        current: current.state,
      }),
    );
  } else if (!stale && staleSince !== null && current.updatedAt !== null) {
    events.push(
      draft(EVENT.powerReportFresh, {
        updatedAt: current.updatedAt,
        current: current.state,
        since: isoOf(staleSince),
        durationMs: elapsed(staleSince, clock.at),
      }),
    );
    staleSince = null;
  }

  const next: VehiclePowerState = {
    v: 1,
    powerCapable: true,
    reading: current,
    pendingSince,
    stuck,
    staleSince,
    reachability: reach.state,
  };
  return { state: next, events };
}

function onFailure(
  state: VehiclePowerState,
  error: ObservationError,
  clock: Clock,
  options: VehiclePowerOptions,
) {
  if (isNotFound(error)) {
    const events: EventDraft[] =
      state.powerCapable === true
        ? [
            draft(EVENT.powerUnsupported, {
              previous: 'supported',
              current: 'unsupported',
              error: errorRef(error),
            }),
          ]
        : [];
    // Kept while it stays unsupported; started now when it was not (or not known: an older state).
    const known = state.powerCapable === false ? state.unsupportedSince : undefined;
    const unsupportedSince = typeof known === 'number' ? known : clock.at;
    return { state: { ...state, powerCapable: false, unsupportedSince }, events };
  }
  if (!isUnreachable(error, options)) return { state, events: [] };
  const reach = stepThreshold(state.reachability, false, clock.at, options);
  const events: EventDraft[] = [];
  if (reach.transition?.kind === 'fired') {
    events.push(
      draft(EVENT.vehicleUnreachable, {
        ...transitionData(reach.transition, 'reachable', 'unreachable'),
        consecutiveFailures: reach.transition.count,
        lastError: errorRef(error),
      }),
    );
  }
  return { state: { ...state, reachability: reach.state }, events };
}

export const vehiclePowerDetector = defineDetector<VehiclePowerState, PowerStatus, VehiclePowerOptions>({
  initial: () => ({
    v: 1,
    powerCapable: null,
    reading: null,
    pendingSince: null,
    stuck: false,
    staleSince: null,
    reachability: null,
  }),
  state: stateSchema,
  options: (raw) => readOptions(raw, DEFAULT_DETECTOR_OPTIONS.vehiclePower),
  onValue: onReading,
  onError: onFailure,
  seeds: {
    reachability: (state, incident) => ({ ...state, reachability: alertingSince(incident.since) }),
    stale: (state, incident) => ({ ...state, staleSince: incident.since }),
    // The command as it was when it got stuck: the next reading ends it (with its whole pending
    // time) or keeps it stuck. Without a reading to compare with, the next one would be a baseline.
    stuck: (state, incident) => ({
      ...state,
      reading: state.reading ?? {
        state: powerStateSchema.parse(incident.data.current),
        pending: powerTargetSchema.parse(incident.data.requested),
        updatedAt: null,
      },
      pendingSince: incident.since,
      stuck: true,
    }),
  },
});
