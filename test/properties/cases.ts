import type fc from 'fast-check';
import { CATALOGUE, type CatalogueEntry, EVENT, type FleetEventType } from '../../src/events/catalogue.js';
import type { DetectorOptions } from '../../src/events/detector-options.js';
import { listElementsDetector } from '../../src/events/detectors/list-elements.js';
import { pollPaceDetector } from '../../src/events/detectors/poll-pace.js';
import { robotCommandQueueDetector } from '../../src/events/detectors/robot-command-queue.js';
import { CONFIG_PARTS, robotConfigDetector } from '../../src/events/detectors/robot-config.js';
import { robotFeedbackDetector } from '../../src/events/detectors/robot-feedback.js';
import { robotHealthDetector } from '../../src/events/detectors/robot-health.js';
import { robotLeaseDetector } from '../../src/events/detectors/robot-lease.js';
import { robotMembershipDetector } from '../../src/events/detectors/robot-membership.js';
import { upstreamHealthDetector } from '../../src/events/detectors/upstream-health.js';
import { vehicleLinkDetector } from '../../src/events/detectors/vehicle-link.js';
import { vehicleMembershipDetector } from '../../src/events/detectors/vehicle-membership.js';
import { vehiclePowerDetector } from '../../src/events/detectors/vehicle-power.js';
import type { Detector, EventDraft } from '../../src/events/types.js';
import { stableHash } from '../../src/lib/stable-hash.js';
import { garbage } from './arbitraries.js';
import {
  commandQueueValue,
  configValue,
  feedbackValue,
  invalidCommandQueue,
  invalidConfig,
  invalidFeedback,
  invalidLease,
  invalidList,
  invalidPace,
  invalidPower,
  invalidVpn,
  invalidWindow,
  leaseValue,
  listValue,
  membershipList,
  notArray,
  paceValue,
  powerValue,
  vpnValue,
  windowValue,
} from './detector-values.js';

/**
 * Every detector with what the properties need to drive it: its options from a valid config,
 * values it can read (reaching every event it emits), values it documents as unusable, and which
 * part of its state describes the observed world (as opposed to reachability bookkeeping).
 */

export type AnyDetector = Detector<unknown, unknown, unknown>;

export interface DetectorCase {
  name: string;
  detector: AnyDetector;
  /** The event types this detector can emit. */
  types: readonly FleetEventType[];
  options(all: DetectorOptions): unknown;
  /** Values a successful observation may carry. */
  value: fc.Arbitrary<unknown>;
  /** Values the detector must ignore (no events, state untouched). */
  invalid: fc.Arbitrary<unknown> | null;
  /** The part of a (parsed) state that a failed observation must leave alone. */
  world(state: unknown): unknown;
  /** For change detectors: the values a reading of `value` carries and the event reporting their changes. */
  tracked?: Tracked;
}

export interface Tracked {
  type: FleetEventType;
  /** What a reading says, by what it tracks, as the detector documents it; a key left out was not observed. */
  read(value: unknown): Record<string, unknown>;
  /** Which tracked value an event reports. */
  keyOf(event: EventDraft): string;
}

const field = (value: unknown, key: string): unknown =>
  value !== null && typeof value === 'object' && Object.hasOwn(value, key)
    ? (value as Record<string, unknown>)[key]
    : undefined;

/** A string field where null, empty and absent all mean "none": null, else the string; anything else is not a reading. */
const orNone = (value: unknown): Record<string, unknown> =>
  value === undefined || value === null || value === ''
    ? { value: null }
    : typeof value === 'string'
      ? { value }
      : {};

const whole = (state: unknown) => state;

function typesOf(predicate: (entry: CatalogueEntry) => boolean): FleetEventType[] {
  return CATALOGUE.filter(predicate).map((entry) => entry.type);
}

export const CASES: readonly DetectorCase[] = [
  {
    name: 'vehicle-membership',
    detector: vehicleMembershipDetector as AnyDetector,
    types: [EVENT.vehicleDiscovered, EVENT.vehicleRemoved],
    options: (all) => all.vehicleMembership,
    value: membershipList,
    invalid: notArray,
    world: whole,
  },
  {
    name: 'robot-membership',
    detector: robotMembershipDetector as AnyDetector,
    types: [EVENT.robotDiscovered, EVENT.robotRemoved],
    options: (all) => all.robotMembership,
    value: membershipList,
    invalid: notArray,
    world: whole,
  },
  {
    name: 'vehicle-link',
    detector: vehicleLinkDetector as AnyDetector,
    types: [EVENT.vpnDisconnected, EVENT.vpnConnected, EVENT.ipChanged],
    options: (all) => all.vehicleLink,
    value: vpnValue,
    invalid: invalidVpn,
    world: whole,
    tracked: {
      type: EVENT.ipChanged,
      read: (value) => orNone(field(value, 'ipAddress')),
      keyOf: () => 'value',
    },
  },
  {
    name: 'vehicle-power',
    detector: vehiclePowerDetector as AnyDetector,
    types: typesOf(
      (entry) => entry.type.startsWith('vehicle.power.') || entry.incident?.key === 'reachability',
    ),
    options: (all) => all.vehiclePower,
    value: powerValue,
    invalid: invalidPower,
    // Capability (404) and reachability are about the poll, not the vehicle's power.
    world: (state) => {
      const { reading, pendingSince, stuck, staleSince } = state as Record<string, unknown>;
      return { reading, pendingSince, stuck, staleSince };
    },
    tracked: {
      type: EVENT.powerChanged,
      read: (value) => ({ value: field(value, 'state') }),
      keyOf: () => 'value',
    },
  },
  {
    name: 'robot-health',
    detector: robotHealthDetector as AnyDetector,
    types: [EVENT.robotHealthDown, EVENT.robotHealthUp],
    options: (all) => all.robotHealth,
    // Any answer the client accepted is a good check, whatever it says.
    value: garbage,
    invalid: null,
    // The whole state is the health incident, which failures are meant to feed.
    world: () => null,
  },
  {
    name: 'robot-feedback',
    detector: robotFeedbackDetector as AnyDetector,
    types: [EVENT.robotAutonomyChanged, EVENT.robotNavigationChanged, EVENT.robotStateChanged],
    options: () => undefined,
    value: feedbackValue,
    invalid: invalidFeedback,
    world: whole,
    tracked: {
      type: EVENT.robotStateChanged,
      read: (value) => {
        const state = field(value, 'vehicleState');
        return typeof state === 'string' && state.trim() !== '' ? { value: state } : {};
      },
      keyOf: () => 'value',
    },
  },
  {
    name: 'robot-lease',
    detector: robotLeaseDetector as AnyDetector,
    types: [EVENT.robotLeaseChanged],
    options: () => undefined,
    value: leaseValue,
    invalid: invalidLease,
    world: whole,
    tracked: {
      type: EVENT.robotLeaseChanged,
      read: (value) => orNone(field(value, 'holderId')),
      keyOf: () => 'value',
    },
  },
  {
    name: 'robot-config',
    detector: robotConfigDetector as AnyDetector,
    types: [EVENT.robotConfigChanged],
    options: () => undefined,
    value: configValue,
    invalid: invalidConfig,
    world: whole,
    tracked: {
      type: EVENT.robotConfigChanged,
      // `undefined` is "not observed"; `null` is a reading (nothing loaded).
      read: (value) =>
        Object.fromEntries(
          CONFIG_PARTS.filter((part) => field(value, part) !== undefined).map((part) => [
            part,
            stableHash(field(value, part)),
          ]),
        ),
      keyOf: (event) => String(event.data.part),
    },
  },
  {
    name: 'robot-command-queue',
    detector: robotCommandQueueDetector as AnyDetector,
    types: [EVENT.robotCommandQueueBacklog, EVENT.robotCommandQueueDrained],
    options: (all) => all.robotCommandQueue,
    value: commandQueueValue,
    invalid: invalidCommandQueue,
    world: whole,
  },
  {
    name: 'upstream-health',
    detector: upstreamHealthDetector as AnyDetector,
    types: [EVENT.upstreamDegraded, EVENT.upstreamRecovered],
    options: (all) => all.upstreamHealth,
    value: windowValue,
    invalid: invalidWindow,
    world: whole,
  },
  {
    name: 'poll-pace',
    detector: pollPaceDetector as AnyDetector,
    types: [EVENT.pollingBehind, EVENT.pollingCaughtUp],
    options: (all) => all.pollPace,
    value: paceValue,
    invalid: invalidPace,
    world: whole,
  },
  {
    name: 'list-elements',
    detector: listElementsDetector as AnyDetector,
    types: [EVENT.listUnreadable, EVENT.listReadable],
    options: (all) => all.listElements,
    value: listValue,
    invalid: invalidList,
    world: whole,
  },
];
