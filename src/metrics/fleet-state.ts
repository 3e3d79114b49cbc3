import type { ThresholdState } from '../events/detectors/threshold.js';

/**
 * Reads the stored detector states (events/detectors) the way the fleet gauges report them. Pure
 * and lenient: a state this version does not know (another `v`, a half-written shape) reads as
 * "nothing known", never as a wrong value.
 *
 * - Thresholded signals (VPN link, robot health) report the status fleetwatch has SETTLED on, the
 *   one its events announced: an open incident (`alerting: true`) is disconnected / down until
 *   the success threshold resolves it; a closed one is connected / up even while a failure streak
 *   below the threshold builds up. An entity never seen good whose failures have not reached the
 *   threshold yet (`alerting: null`, streak > 0) is disconnected / down: it was never seen
 *   otherwise.
 * - Power: the last good reading's `state`; `unknown` when the vehicle reports so, has no good
 *   reading yet, or has no power control (404). A pending command is `stuck` once
 *   `vehicle.power.command.stuck` fired for it, else `pending`.
 * - Autonomy: the `cortex_status` number of the last platform feedback that had one.
 */

export type VpnStatus = 'connected' | 'disconnected';
export type PowerLabel = 'on' | 'off' | 'unknown';
export type CommandStatus = 'pending' | 'stuck';
export type HealthStatus = 'up' | 'down';

export const VPN_STATUSES: readonly VpnStatus[] = ['connected', 'disconnected'];
export const POWER_LABELS: readonly PowerLabel[] = ['on', 'off', 'unknown'];
export const COMMAND_STATUSES: readonly CommandStatus[] = ['pending', 'stuck'];
export const HEALTH_STATUSES: readonly HealthStatus[] = ['up', 'down'];

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** A versioned detector state of version 1, or undefined. */
function stateV1(state: unknown): Record<string, unknown> | undefined {
  const object = record(state);
  return object?.v === 1 ? object : undefined;
}

/** true: settled good; false: settled bad (or bad from the start); undefined: nothing known. */
export function settledGood(threshold: unknown): boolean | undefined {
  const state = record(threshold) as Partial<ThresholdState> | undefined;
  if (!state) return undefined;
  if (state.alerting === true) return false;
  if (state.alerting === false) return true;
  if (state.alerting === null && typeof state.streak === 'number' && state.streak > 0) return false;
  return undefined;
}

/** From a vehicle's `link` snapshot (vehicle-link detector). */
export function vpnStatusOf(linkState: unknown): VpnStatus | undefined {
  const good = settledGood(stateV1(linkState)?.vpn);
  return good === undefined ? undefined : good ? 'connected' : 'disconnected';
}

export interface PowerView {
  state: PowerLabel;
  command: CommandStatus | null;
}

/** From a vehicle's `power` snapshot (vehicle-power detector); a missing snapshot is unknown power. */
export function powerOf(powerState: unknown): PowerView {
  const state = stateV1(powerState);
  const reading = record(state?.reading);
  if (!state || !reading || state.powerCapable === false) return { state: 'unknown', command: null };
  const label: PowerLabel = reading.state === 'on' || reading.state === 'off' ? reading.state : 'unknown';
  const pending = reading.pending === 'on' || reading.pending === 'off';
  return { state: label, command: pending ? (state.stuck === true ? 'stuck' : 'pending') : null };
}

/** From a robot's `health` snapshot (robot-health detector). */
export function healthOf(healthState: unknown): HealthStatus | undefined {
  const good = settledGood(stateV1(healthState)?.health);
  return good === undefined ? undefined : good ? 'up' : 'down';
}

/** From a robot's `feedback` snapshot (robot-feedback detector). */
export function autonomyStatusOf(feedbackState: unknown): number | undefined {
  const known = record(stateV1(feedbackState)?.autonomy);
  const status = record(known?.value)?.status;
  return typeof status === 'number' && Number.isFinite(status) ? status : undefined;
}
