import fc from 'fast-check';
import { normalizeFeedback } from '../../src/events/detectors/robot-feedback.js';
import { T0 } from '../events/helpers.js';
import { garbage } from './arbitraries.js';

/**
 * What each detector is fed: values it reads (enough variety to reach every event it emits) and
 * values it documents as unusable.
 */

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** `test(value)`, where a value that throws when looked at counts as passing. */
const safely =
  (test: (value: unknown) => boolean) =>
  (value: unknown): boolean => {
    try {
      return test(value);
    } catch {
      return true;
    }
  };

/** Everything but a plain object. */
export const notRecord = garbage.filter(safely((value) => !isRecord(value)));
export const notArray = garbage.filter(safely((value) => !Array.isArray(value)));

const iso = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const nearT0 = fc.integer({ min: -7_200, max: 7_200 }).map(iso);

const ids = fc.constantFrom('a', 'b', 'c', 'veh-001', '__proto__', 'constructor', 'toString');
export const membershipList = fc.array(
  fc.oneof(
    { weight: 6, arbitrary: ids },
    { weight: 2, arbitrary: ids.map((id) => ({ id })) },
    { weight: 2, arbitrary: ids.map((deviceId) => ({ deviceId })) },
    { weight: 1, arbitrary: fc.oneof(fc.constant(''), fc.integer(), fc.constant(null), fc.constant({})) },
  ),
  { maxLength: 8 },
);

const powerState = fc.constantFrom('on', 'off', 'unknown');
const powerTarget = fc.constantFrom('on', 'off');

/** A power status, with the leniency the detector accepts (missing pendingCommand/updatedAt). */
export const powerValue = fc.record(
  {
    state: powerState,
    pendingCommand: fc.oneof(
      fc.constant(null),
      powerTarget.map((state) => ({ state })),
    ),
    updatedAt: fc.oneof(
      { weight: 6, arbitrary: nearT0 },
      { weight: 1, arbitrary: fc.constantFrom(null, 'not a date') },
    ),
  },
  { requiredKeys: ['state'] },
);

/** Fails the power detector's reading schema: no usable state, or a field of the wrong kind. */
export const invalidPower = fc.oneof(
  notRecord,
  fc.record({
    state: fc
      .oneof(fc.string(), fc.integer(), fc.constant(null))
      .filter((s) => !['on', 'off', 'unknown'].includes(s as string)),
  }),
  fc.record({
    state: powerState,
    pendingCommand: fc.oneof(fc.string(), fc.integer(), fc.constant({ state: 'unknown' }), fc.constant([])),
  }),
  fc.record({ state: powerState, updatedAt: fc.oneof(fc.integer(), fc.boolean(), fc.constant({})) }),
);

export const vpnValue = fc.record(
  {
    id: fc.constantFrom('veh-001', ''),
    vpnConnected: fc.boolean(),
    ipAddress: fc.constantFrom('10.0.0.1', '10.0.0.2', '', null, 42),
  },
  { requiredKeys: ['vpnConnected'] },
);

const notBoolean = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.constant(null),
  fc.constant(undefined),
  fc.constant([]),
);

/** Fields the feedback normalizer cannot read: not an integer (or integer string), not a non-blank string. */
const unreadable = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.constant(''),
  fc.constant('   '),
  fc.constant({}),
  fc.constant([]),
);

export const feedbackValue = fc.oneof(
  fc.record(
    {
      cortexStatus: fc.integer({ min: 0, max: 4 }),
      cortexText: fc.constantFrom('IDLE', 'idle', 'DRIVING', 'ERROR'),
      navStatus: fc.integer({ min: 0, max: 6 }),
      navText: fc.constantFrom('executing', 'ABORTED', 'aborted', 'succeeded'),
      vehicleState: fc.constantFrom('PARKED', 'DRIVING', 'FAULT'),
    },
    { requiredKeys: [] },
  ),
  // What the poller hands over: a raw payload through the normalizer.
  fc
    .record({
      cortex_status: fc.record({ status: fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constant('2')) }),
      navigation_feedback: fc.record({
        nav2_goal_status: fc.record({ status: fc.integer({ min: 0, max: 6 }) }),
      }),
      vehicle_feedback: fc.record({ state: fc.constantFrom('PARKED', 'DRIVING') }),
    })
    .map(normalizeFeedback),
);

export const leaseValue = fc.record(
  { holderId: fc.constantFrom('alice', 'bob', '', null), expiresAt: fc.oneof(nearT0, fc.integer()) },
  { requiredKeys: [] },
);

const configDocument = fc.oneof(
  fc.constantFrom(null, 'north', { name: 'north', speed: 1 }, { name: 'south', speed: 1 }, [1, 2]),
  fc.jsonValue({ maxDepth: 2 }),
);
export const configValue = fc.record(
  { activeSite: configDocument, loadedRoute: configDocument, loadedZoneSet: configDocument },
  { requiredKeys: [] },
);

/** A queue length: empty often (to drain), around the thresholds the properties draw, sometimes long. */
export const commandQueueValue = fc.record({
  length: fc.oneof(
    { weight: 3, arbitrary: fc.constant(0) },
    { weight: 6, arbitrary: fc.integer({ min: 0, max: 12 }) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 20_000 }) },
  ),
});

/** A count as the client's own tally gives it, or a number no tally reaches. */
const tally = (max: number) =>
  fc.oneof(
    { weight: 9, arbitrary: fc.integer({ min: 0, max }) },
    { weight: 1, arbitrary: fc.constantFrom(2 ** 53, 1e300, 2.5) },
  );

export const windowValue = fc.record({
  requests: tally(40),
  authFailures: tally(8),
  serverErrors: tally(30),
  timeouts: tally(10),
});

const badCount = fc.oneof(
  fc.constant(-1),
  fc.constant(Number.NaN),
  fc.constant(Number.POSITIVE_INFINITY),
  fc.string(),
  fc.constant(null),
);

export const invalidVpn = fc.oneof(
  notRecord,
  fc.record({ vpnConnected: notBoolean, ipAddress: fc.constant('10.9.9.9') }),
);

export const invalidFeedback = fc.oneof(
  notRecord,
  fc.record(
    {
      cortexStatus: unreadable,
      cortexText: unreadable,
      navStatus: unreadable,
      navText: unreadable,
      vehicleState: unreadable,
    },
    { requiredKeys: [] },
  ),
);

export const invalidLease = fc.oneof(
  notRecord,
  fc.record({ holderId: fc.oneof(fc.integer(), fc.boolean(), fc.constant({})) }),
);

/** No part observed: absent or undefined. */
export const invalidConfig = fc.oneof(
  notRecord,
  fc.constant({}),
  fc.constant({ activeSite: undefined, other: 1 }),
);

/** A window without a usable request count, however bad the rest looks. */
export const invalidWindow = fc.oneof(
  notRecord,
  fc.record({ requests: badCount, authFailures: fc.constant(100) }),
);

/** One tick of a poller: its shards, some of them still held by an earlier job, some not started. */
export const paceValue = fc
  .record({
    shards: fc.integer({ min: 1, max: 40 }),
    busy: fc.integer({ min: 0, max: 40 }),
    waiting: fc.integer({ min: 0, max: 40 }),
  })
  .map(({ shards, busy, waiting }) => {
    // Half the ticks with nothing held, so both events are reached.
    const coalesced = busy % 2 === 0 ? 0 : Math.min(shards, busy);
    return { shards, coalesced, waiting: Math.min(coalesced, waiting), intervalMs: 30_000 };
  });

const paceOf = (shards: unknown, coalesced: unknown, waiting: unknown) =>
  fc.record({
    shards: fc.constant(shards),
    coalesced: fc.constant(coalesced),
    waiting: fc.constant(waiting),
    intervalMs: fc.constant(30_000),
  });

export const invalidPace = fc.oneof(
  notRecord,
  fc.record({
    shards: fc.constant(4),
    coalesced: badCount,
    waiting: fc.constant(0),
    intervalMs: fc.constant(30_000),
  }),
  fc.record({
    shards: fc.constant(4),
    coalesced: fc.constant(2),
    waiting: badCount,
    intervalMs: fc.constant(30_000),
  }),
  paceOf(4, 5, 0),
  paceOf(4, 1, 2),
  paceOf(0, 0, 0),
);

/** One list read: its elements, some not as the spec says, some of those naming nothing. */
export const listValue = fc
  .record({
    elements: fc.integer({ min: 1, max: 50 }),
    rejected: fc.integer({ min: 0, max: 50 }),
    unnamed: fc.integer({ min: 0, max: 50 }),
    id: fc.option(fc.string({ minLength: 1, maxLength: 8 }), { nil: null }),
  })
  .map(({ elements, rejected, unnamed, id }) => {
    // Half the lists whole, so both events are reached.
    const bad = rejected % 2 === 0 ? 0 : Math.min(elements, rejected);
    return {
      elements,
      rejected: bad,
      unnamed: Math.min(bad, unnamed),
      examples: bad === 0 ? [] : [{ id, message: 'ipAddress: expected a string' }],
    };
  });

const listOf = (elements: unknown, rejected: unknown, unnamed: unknown) =>
  fc.record({
    elements: fc.constant(elements),
    rejected: fc.constant(rejected),
    unnamed: fc.constant(unnamed),
    examples: fc.constant([]),
  });

/** Counts that cannot be a list read, however bad they look. */
export const invalidList = fc.oneof(
  notRecord,
  fc.record({ elements: fc.constant(4), rejected: badCount, unnamed: fc.constant(0) }),
  fc.record({ elements: badCount, rejected: fc.constant(2), unnamed: fc.constant(0) }),
  listOf(4, 5, 0),
  listOf(4, 2, 3),
);

/** A length that is not a whole, non-negative, safe number. */
export const invalidCommandQueue = fc.oneof(
  notRecord,
  fc.record({ length: fc.oneof(badCount, fc.constantFrom(2.5, -3, 2 ** 53)) }),
);
