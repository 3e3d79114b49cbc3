import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { afterAll, describe } from 'vitest';
import { vehicleLinkDetector } from '../../src/events/detectors/vehicle-link.js';
import { vehicleMembershipDetector } from '../../src/events/detectors/vehicle-membership.js';
import { vehiclePowerDetector } from '../../src/events/detectors/vehicle-power.js';
import type { PowerAcceptance } from '../../src/upstream/fleet-client.js';
import type { PowerStatus, VehicleList, VehicleSummary } from '../../src/upstream/schemas/v1.js';
import { T0 } from '../events/helpers.js';
import { cannedUpstream } from './canned-upstream.js';
import { type Endpoint, endpointProperties } from './endpoint-properties.js';
import { powerStatusBody, V1_SUMMARY_KEYS, vehicleListBody } from './payloads.js';

/**
 * The /v1 parse path (status check, JSON, schema) through the real client. What it returns must
 * be the body's documented fields, exactly, and of the documented kinds (an id, a dotted-quad
 * address, a readable date-time); and the detectors must read it in full: every entry of a list
 * is a member with a VPN flag, a power status is a reading.
 */

const upstream = cannedUpstream();
afterAll(() => upstream.close());

const context = { now: T0, options: {} };
const observed = <T>(value: T) => ({ ok: true as const, at: new Date(T0).toISOString(), value });

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The documented fields of a sent object; what the client must return for it. */
function documented(sent: unknown, keys: readonly string[]): Record<string, unknown> | undefined {
  if (!isRecord(sent)) return undefined;
  return Object.fromEntries(keys.filter((key) => Object.hasOwn(sent, key)).map((key) => [key, sent[key]]));
}

/** A success envelope's `data`; undefined when the body was not one (and should not have parsed). */
function dataOf(sent: unknown): unknown {
  return isRecord(sent) && sent.status === 'success' ? sent.data : undefined;
}

function summaryProblems(summary: VehicleSummary, index: number): string[] {
  const problems: string[] = [];
  if (typeof summary.id !== 'string' || summary.id === '') problems.push(`[${index}].id`);
  if (typeof summary.vpnConnected !== 'boolean') problems.push(`[${index}].vpnConnected`);
  if (summary.ipAddress !== undefined && !IPV4.test(summary.ipAddress)) problems.push(`[${index}].ipAddress`);
  if (vehicleLinkDetector(undefined, observed(summary), context).state.vpn === null)
    problems.push(`[${index}]: ignored by the link detector`);
  return problems;
}

/** What makes a list entry break the spec, judged by the spec's words, not by the client's schema. */
function specProblems(entry: unknown): string[] {
  if (!isRecord(entry)) return ['not an object'];
  const problems: string[] = [];
  if (typeof entry.id !== 'string' || entry.id === '') problems.push('id');
  if (typeof entry.vpnConnected !== 'boolean') problems.push('vpnConnected');
  if (
    Object.hasOwn(entry, 'ipAddress') &&
    !(typeof entry.ipAddress === 'string' && IPV4.test(entry.ipAddress))
  )
    problems.push('ipAddress');
  return problems;
}

/**
 * Element by element: every entry that follows the spec comes back with exactly its documented
 * fields, in order; every one that does not is rejected by itself, with its id when it has one.
 */
const listVehicles: Endpoint<VehicleList> = {
  name: 'GET /v1/vehicles',
  call: (u) => u.fleet.listVehicles(),
  status: 200,
  valid: vehicleListBody,
  problems: (value, sent) => {
    const data = dataOf(sent);
    if (!Array.isArray(data)) return ['parsed although the body has no data array'];
    const rejected = new Map(value.rejected.map((element) => [element.index, element]));
    const expected = data.flatMap((entry, index) =>
      rejected.has(index) ? [] : [documented(entry, V1_SUMMARY_KEYS)],
    );
    if (!isDeepStrictEqual(value.items, expected)) return ['not the documented fields of the list sent'];
    const problems = value.items.flatMap(summaryProblems);
    for (const [index, element] of rejected) {
      const entry: unknown = data[index];
      if (index >= data.length || specProblems(entry).length === 0) problems.push(`rejected [${index}]`);
      const id = isRecord(entry) && typeof entry.id === 'string' && entry.id !== '' ? entry.id : undefined;
      if (element.id !== id) problems.push(`[${index}] rejected without its id`);
    }
    if (data.length !== value.items.length + rejected.size) problems.push('entries lost');
    const known = vehicleMembershipDetector(undefined, observed(value.items), context).state.known;
    if (!value.items.every((summary) => known?.includes(summary.id)))
      problems.push('ids the membership detector misses');
    return problems;
  },
};

const getPowerStatus: Endpoint<PowerStatus> = {
  name: 'GET /v1/vehicles/{id}/power/status',
  call: (u) => u.fleet.getPowerStatus('veh-001'),
  status: 200,
  valid: powerStatusBody,
  problems: (value, sent) => {
    const expected = documented(dataOf(sent), ['state', 'pendingCommand', 'updatedAt']);
    if (isRecord(expected?.pendingCommand))
      expected.pendingCommand = documented(expected.pendingCommand, ['state']);
    if (!isDeepStrictEqual(value, expected)) return ['not the documented fields of the status sent'];
    const problems: string[] = [];
    if (!['on', 'off', 'unknown'].includes(value.state)) problems.push('state');
    if (value.pendingCommand !== null && !['on', 'off'].includes(value.pendingCommand?.state))
      problems.push('pendingCommand');
    if (value.updatedAt !== null && !Number.isFinite(Date.parse(value.updatedAt)))
      problems.push('updatedAt unreadable');
    if (vehiclePowerDetector(undefined, observed(value), context).state.reading === null)
      problems.push('ignored by the power detector');
    return problems;
  },
};

const requestPowerOn: Endpoint<PowerAcceptance> = {
  name: 'POST /v1/vehicles/{id}/power/on',
  call: (u) => u.fleet.requestPowerOn('veh-001'),
  status: 202,
  valid: fc.constant({ status: 'success' }),
  problems: (_value, sent) =>
    isRecord(sent) && sent.status === 'success' ? [] : ['accepted without a success envelope'],
};

describe.each([listVehicles, getPowerStatus, requestPowerOn] as Endpoint[])('$name', (endpoint) => {
  endpointProperties(upstream, endpoint);
});
