import { z } from 'zod';
import { draft, EVENT } from '../catalogue.js';
import { DEFAULT_DETECTOR_OPTIONS, readOptions, type UpstreamHealthOptions } from '../detector-options.js';
import type { EventDraft } from '../types.js';
import { type Clock, defineDetector, isRecord } from './define.js';
import {
  alertingSince,
  stepThreshold,
  type ThresholdState,
  thresholdStateSchema,
  transitionData,
} from './threshold.js';

/**
 * The monitor's own upstream client (token issuer, fleet API, robot gateway), observed as request
 * counts per window. A window is bad when 401/403 answers reach `authFailures` (a token or
 * permission storm), or when it has at least `minRequests` requests and (5xx + time-outs +
 * unreadable answers) / requests reaches `errorRatio`; it is good otherwise, except that a window with no requests, or
 * with errors but fewer than `minRequests` requests, says nothing and is skipped.
 *
 * `monitor.upstream.degraded` after `failureThreshold` consecutive bad windows (with the reasons
 * and counts of the window that tipped it), `monitor.upstream.recovered` after `successThreshold`
 * good ones, with the duration. The subject is `upstream/<name>`, supplied by the caller. A failed
 * observation (no counts) changes nothing.
 */

export interface UpstreamWindow {
  requests: number;
  authFailures: number;
  serverErrors: number;
  timeouts: number;
  /** Answers with a success status whose body was not as the spec says (absent in older windows). */
  unreadable?: number;
}

export interface UpstreamHealthState {
  v: 1;
  health: ThresholdState | null;
}

const stateSchema = z.object({ v: z.literal(1), health: thresholdStateSchema.nullable() });

/** A tally: whole and non-negative; capped so the window stays a valid event field. */
function countOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
    ? Math.min(Number.MAX_SAFE_INTEGER, Math.floor(value))
    : undefined;
}

function windowOf(value: unknown): UpstreamWindow | undefined {
  if (!isRecord(value)) return undefined;
  const requests = countOf(value.requests);
  if (requests === undefined) return undefined;
  return {
    requests,
    authFailures: countOf(value.authFailures) ?? 0,
    serverErrors: countOf(value.serverErrors) ?? 0,
    timeouts: countOf(value.timeouts) ?? 0,
    unreadable: countOf(value.unreadable) ?? 0,
  };
}

type Verdict =
  | { kind: 'bad'; reasons: ('error_ratio' | 'auth_failures')[]; ratio: number }
  | { kind: 'good' | 'skip' };

function judge(window: UpstreamWindow, options: UpstreamHealthOptions): Verdict {
  const errors = window.serverErrors + window.timeouts + (window.unreadable ?? 0);
  const ratio = window.requests > 0 ? errors / window.requests : 0;
  const reasons: ('error_ratio' | 'auth_failures')[] = [];
  if (window.requests >= Math.max(1, options.minRequests) && ratio >= options.errorRatio)
    reasons.push('error_ratio');
  if (window.authFailures >= Math.max(1, options.authFailures)) reasons.push('auth_failures');
  if (reasons.length > 0) return { kind: 'bad', reasons, ratio };
  if (window.requests === 0 || (errors > 0 && window.requests < options.minRequests)) return { kind: 'skip' };
  return { kind: 'good' };
}

function onWindow(state: UpstreamHealthState, value: unknown, clock: Clock, options: UpstreamHealthOptions) {
  const window = windowOf(value);
  if (window === undefined) return { state, events: [] };
  const verdict = judge(window, options);
  if (verdict.kind === 'skip') return { state, events: [] };
  const step = stepThreshold(state.health, verdict.kind === 'good', clock.at, options);
  const events: EventDraft[] = [];
  if (step.transition?.kind === 'fired' && verdict.kind === 'bad') {
    events.push(
      draft(EVENT.upstreamDegraded, {
        ...transitionData(step.transition, 'healthy', 'degraded'),
        consecutiveWindows: step.transition.count,
        reasons: verdict.reasons,
        window,
        errorRatio: Math.round(verdict.ratio * 10_000) / 10_000,
      }),
    );
  } else if (step.transition?.kind === 'resolved') {
    events.push(draft(EVENT.upstreamRecovered, transitionData(step.transition, 'healthy', 'degraded')));
  }
  return { state: { v: 1 as const, health: step.state }, events };
}

export const upstreamHealthDetector = defineDetector<
  UpstreamHealthState,
  UpstreamWindow,
  UpstreamHealthOptions
>({
  initial: () => ({ v: 1, health: null }),
  state: stateSchema,
  options: (raw) => readOptions(raw, DEFAULT_DETECTOR_OPTIONS.upstreamHealth),
  onValue: onWindow,
  seeds: { upstream: (state, incident) => ({ ...state, health: alertingSince(incident.since) }) },
});
