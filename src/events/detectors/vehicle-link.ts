import { z } from 'zod';
import { draft, EVENT } from '../catalogue.js';
import { DEFAULT_DETECTOR_OPTIONS, readOptions, type VehicleLinkOptions } from '../detector-options.js';
import type { EventDraft } from '../types.js';
import { type Known, knownSchema, track } from './change.js';
import { defineDetector, isRecord } from './define.js';
import {
  alertingSince,
  stepThreshold,
  type ThresholdState,
  thresholdStateSchema,
  transitionData,
} from './threshold.js';

/**
 * One vehicle's entry in the vehicle list: VPN link and address.
 *
 * - `vehicle.vpn.disconnected` after `failureThreshold` consecutive lists with `vpnConnected:
 *   false`; `vehicle.vpn.connected` after `successThreshold` connected ones, with the outage
 *   duration (first disconnected observation → first connected one). See threshold.ts for the
 *   baseline rule: a vehicle first seen connected is silent; one first seen disconnected is
 *   reported once the threshold is met (`previous: null`).
 * - `vehicle.ip.changed` when `ipAddress` changes, appears or disappears (an omitted address is
 *   `null`); the first observation is the baseline.
 *
 * Value: `{ vpnConnected, ipAddress?, id? }` — a `VehicleSummary` as is. When it has `id`, drafts
 * carry it as `data.vehicleId`. A value without a boolean `vpnConnected` is ignored; a non-string
 * `ipAddress` leaves the known address alone. A failed list changes nothing.
 */

export interface VehicleLinkValue {
  vpnConnected: boolean;
  ipAddress?: string;
  id?: string;
}

export interface VehicleLinkState {
  v: 1;
  vpn: ThresholdState | null;
  ip: Known<string | null> | null;
}

const stateSchema = z.object({
  v: z.literal(1),
  vpn: thresholdStateSchema.nullable(),
  ip: knownSchema(z.string().nullable()),
});

export const vehicleLinkDetector = defineDetector<VehicleLinkState, VehicleLinkValue, VehicleLinkOptions>({
  initial: () => ({ v: 1, vpn: null, ip: null }),
  state: stateSchema,
  options: (raw) => readOptions(raw, DEFAULT_DETECTOR_OPTIONS.vehicleLink),
  onValue: (state, value, clock, options) => {
    if (!isRecord(value) || typeof value.vpnConnected !== 'boolean') return { state, events: [] };
    const vehicleId = typeof value.id === 'string' && value.id !== '' ? value.id : undefined;
    const events: EventDraft[] = [];

    const vpn = stepThreshold(state.vpn, value.vpnConnected, clock.at, options);
    const { transition } = vpn;
    if (transition?.kind === 'fired') {
      events.push(
        draft(EVENT.vpnDisconnected, {
          vehicleId,
          ...transitionData(transition, 'connected', 'disconnected'),
          consecutive: transition.count,
        }),
      );
    } else if (transition?.kind === 'resolved') {
      events.push(
        draft(EVENT.vpnConnected, { vehicleId, ...transitionData(transition, 'connected', 'disconnected') }),
      );
    }

    const address =
      value.ipAddress === undefined || value.ipAddress === null || value.ipAddress === ''
        ? null
        : typeof value.ipAddress === 'string'
          ? value.ipAddress
          : undefined;
    const ip = track(state.ip, address);
    if (ip.change) events.push(draft(EVENT.ipChanged, { vehicleId, ...ip.change }));

    return { state: { v: 1, vpn: vpn.state, ip: ip.known }, events };
  },
  seeds: { vpn: (state, incident) => ({ ...state, vpn: alertingSince(incident.since) }) },
});
