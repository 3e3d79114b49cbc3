import { setTimeout as sleep } from 'node:timers/promises';
import { UpstreamError } from '../upstream/errors.js';
import type { FleetClient } from '../upstream/fleet-client.js';
import type { PowerStatus, PowerTarget } from '../upstream/schemas/v1.js';

/** What one power-status reading says about a requested command. */
export type PowerVerdict =
  /** The vehicle reports the requested state and nothing is pending: the command is done. */
  | 'done'
  /** The command is pending, or not visible yet: keep polling. */
  | 'waiting'
  /** Another command for the opposite state replaced ours. */
  | 'superseded'
  /** The command was pending and then cleared without the vehicle reaching the state. */
  | 'dropped';

/**
 * Judges a reading as the spec tells clients to: done when `state` equals the request and
 * `pendingCommand` is null. A command not yet visible right after its 202 is not a failure: the
 * upstream reports the most recently known state, not a live one.
 */
export function judgePowerStatus(
  status: PowerStatus,
  target: PowerTarget,
  sawPending: boolean,
): PowerVerdict {
  const pending = status.pendingCommand?.state;
  if (pending === undefined && status.state === target) return 'done';
  if (pending !== undefined && pending !== target) return 'superseded';
  if (pending === undefined && sawPending) return 'dropped';
  return 'waiting';
}

export type PowerWaitOutcome =
  | { kind: 'completed'; status: PowerStatus; elapsedMs: number }
  | { kind: 'failed'; reason: string; status?: PowerStatus; error?: UpstreamError; elapsedMs: number }
  | { kind: 'timed_out'; status?: PowerStatus; lastError?: UpstreamError; elapsedMs: number }
  | { kind: 'aborted'; elapsedMs: number };

export interface PowerWaitProgress {
  elapsedMs: number;
  polls: number;
  status?: PowerStatus;
  /** A passing problem (a 503, a time-out) that the wait rides out. */
  error?: UpstreamError;
}

/**
 * How often a wait may read the power status: often enough to see the change soon, never so often
 * that one wait hammers the fleet service. The API and the CLI take `interval` within these.
 */
export const POWER_POLL_INTERVAL = { minMs: 250, maxMs: 60_000 } as const;

export interface PowerWaitOptions {
  timeoutMs: number;
  intervalMs: number;
  signal?: AbortSignal;
  onProgress?: (progress: PowerWaitProgress) => void;
}

/** Polls power status until the vehicle reports `target` with nothing pending, or gives up. */
export async function waitForPowerState(
  fleet: Pick<FleetClient, 'getPowerStatus'>,
  vehicleId: string,
  target: PowerTarget,
  options: PowerWaitOptions,
): Promise<PowerWaitOutcome> {
  const started = Date.now();
  const elapsed = () => Date.now() - started;
  let sawPending = false;
  let status: PowerStatus | undefined;
  let lastError: UpstreamError | undefined;
  for (let polls = 1; ; polls++) {
    if (options.signal?.aborted) return { kind: 'aborted', elapsedMs: elapsed() };
    try {
      status = await fleet.getPowerStatus(vehicleId, { signal: options.signal });
      lastError = undefined;
    } catch (error) {
      if (options.signal?.aborted) return { kind: 'aborted', elapsedMs: elapsed() };
      if (!(error instanceof UpstreamError) || !error.retryable) {
        return {
          kind: 'failed',
          reason: error instanceof Error ? error.message : String(error),
          error: error instanceof UpstreamError ? error : undefined,
          elapsedMs: elapsed(),
        };
      }
      lastError = error;
    }
    if (status && !lastError) {
      if (status.pendingCommand?.state === target) sawPending = true;
      const verdict = judgePowerStatus(status, target, sawPending);
      if (verdict === 'done') return { kind: 'completed', status, elapsedMs: elapsed() };
      if (verdict === 'superseded') {
        return {
          kind: 'failed',
          reason: `a power ${status.pendingCommand?.state} command replaced the power ${target} request`,
          status,
          elapsedMs: elapsed(),
        };
      }
      if (verdict === 'dropped') {
        return {
          kind: 'failed',
          reason: `the power ${target} command cleared but the vehicle reports ${status.state}`,
          status,
          elapsedMs: elapsed(),
        };
      }
    }
    options.onProgress?.({ elapsedMs: elapsed(), polls, status, error: lastError });
    const left = options.timeoutMs - elapsed();
    if (left <= 0) return { kind: 'timed_out', status, lastError, elapsedMs: elapsed() };
    try {
      await sleep(Math.min(options.intervalMs, left), undefined, { signal: options.signal });
    } catch {
      return { kind: 'aborted', elapsedMs: elapsed() };
    }
  }
}
