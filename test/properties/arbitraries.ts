import fc from 'fast-check';
import {
  DEFAULT_UNREACHABLE_CODES,
  type DetectorOptions,
  detectorOptionsSchema,
  OBSERVATION_ERROR_CODES,
  toDetectorOptions,
} from '../../src/events/detector-options.js';
import { T0 } from '../events/helpers.js';

/**
 * Shared arbitraries for the detector properties: times, observations, garbage of every kind, and
 * detector options that pass the config schema.
 */

/** The largest epoch-ms a Date can hold. */
const MAX_DATE_MS = 8.64e15;

/** Epoch milliseconds: mostly within decades of T0, sometimes anywhere a Date can hold. */
export const epochMs: fc.Arbitrary<number> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -2_000_000_000, max: 2_000_000_000 }).map((s) => T0 + s * 1000) },
  { weight: 1, arbitrary: fc.double({ min: -MAX_DATE_MS, max: MAX_DATE_MS, noNaN: true }).map(Math.trunc) },
  { weight: 1, arbitrary: fc.constantFrom(-MAX_DATE_MS, MAX_DATE_MS, Date.parse('+010000-01-01T00:00:00Z')) },
);

/** `context.now`: any epoch time, or a number no clock should produce. */
export const anyNow: fc.Arbitrary<number> = fc.oneof(
  { weight: 5, arbitrary: epochMs },
  { weight: 1, arbitrary: fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -1e300, 1e300, -0) },
);

/** `observation.at`: an ISO time, or a string (or worse) that is not one. */
export const anyAt: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: epochMs.map((ms) => new Date(ms).toISOString()) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('', 'not a date', '2025-13-45T99:00:00Z', '+275761-01-01T00:00:00Z'),
  },
  { weight: 1, arbitrary: fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.constant(undefined)) },
);

/** Keys a stored state or an observation has, and keys that touch the prototype chain. */
const AWKWARD_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'toJSON',
  'hasOwnProperty',
  'v',
  'ok',
  'at',
  'value',
  'error',
  'known',
  'missing',
  'vpn',
  'ip',
  'reading',
  'health',
  'parts',
  'holder',
  'alerting',
  'streak',
  'state',
  'pendingCommand',
  'updatedAt',
  'vpnConnected',
  'requests',
] as const;

const awkwardKey = fc.oneof(fc.constantFrom(...AWKWARD_KEYS), fc.string());

/**
 * Values that make careless code throw: revoked or throwing proxies (nested one level down, where
 * the detectors meet them but fast-check does not probe them), throwing getters, cycles, a
 * throwing toJSON.
 */
export const hostile: fc.Arbitrary<unknown> = fc
  .constantFrom('revoked proxy', 'throwing proxy', 'throwing getter', 'cycle', 'throwing toJSON')
  .chain((kind) =>
    fc.constantFrom('value', 'error', 'options', 'known', 'top').map((where) => ({ kind, where })),
  )
  .map(({ kind, where }): unknown => {
    const boom = () => {
      throw new Error(`hostile ${kind}`);
    };
    let value: unknown;
    switch (kind) {
      case 'revoked proxy': {
        const { proxy, revoke } = Proxy.revocable({}, {});
        revoke();
        value = proxy;
        break;
      }
      case 'throwing proxy':
        value = new Proxy(
          {},
          { get: boom, ownKeys: boom, getOwnPropertyDescriptor: boom, getPrototypeOf: boom },
        );
        break;
      case 'throwing getter': {
        const target: Record<string, unknown> = {};
        for (const key of [
          'ok',
          'at',
          'value',
          'error',
          'v',
          'now',
          'options',
          'state',
          'activeSite',
          'code',
        ]) {
          Object.defineProperty(target, key, { get: boom, enumerable: true });
        }
        return target;
      }
      case 'cycle': {
        const target: Record<string, unknown> = { ok: true, v: 1 };
        target.value = target;
        target.known = [target];
        target.activeSite = target;
        return target;
      }
      default:
        return { ok: true, value: { activeSite: { toJSON: boom } }, toJSON: boom };
    }
    if (where === 'top') return [value];
    return where === 'error' ? { ok: false, at: '', error: value } : { ok: true, v: 1, [where]: value };
  });

/** Anything at all: every kind fast-check builds, prototype keys, and hostile values. */
export const garbage: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.anything({
      key: awkwardKey,
      maxDepth: 3,
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withObjectString: true,
      withSparseArray: true,
      withTypedArray: true,
    }),
  },
  { weight: 1, arbitrary: hostile },
);

/** Observation error codes the clients produce, plus whatever else. */
export const ERROR_CODES = [
  ...DEFAULT_UNREACHABLE_CODES,
  'not_found',
  'invalid_payload',
  'internal_server_error',
  'unauthorized',
  'forbidden',
  'unexpected_status',
  'internal',
] as const;

/** An observation error as the pollers build it. */
export const wellFormedError = fc.record(
  {
    code: fc.oneof(fc.constantFrom(...ERROR_CODES), fc.string()),
    status: fc.oneof(fc.constantFrom(404, 500, 502, 503, 504, 401, 403), fc.integer({ min: 100, max: 599 })),
    message: fc.string(),
  },
  { requiredKeys: ['code', 'message'] },
);

/** An observation error, or garbage in its place (the detectors normalize it). */
export const observationError: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: wellFormedError },
  { weight: 1, arbitrary: garbage },
);

/** A failed observation (the error may itself be garbage: detectors normalize it). */
export const failedObservation = (at: fc.Arbitrary<unknown> = anyAt) =>
  fc.record({ ok: fc.constant(false as const), at, error: observationError });

/** A successful observation of `value`. */
export const successfulObservation = (value: fc.Arbitrary<unknown>, at: fc.Arbitrary<unknown> = anyAt) =>
  fc.record({ ok: fc.constant(true as const), at, value });

/** Anything that is not an observation at all (no boolean `ok`). */
export const malformedObservation: fc.Arbitrary<unknown> = fc
  .anything({ key: awkwardKey, maxDepth: 2 })
  .filter((raw) => {
    const ok = raw !== null && typeof raw === 'object' ? (raw as { ok?: unknown }).ok : undefined;
    return ok !== true && ok !== false;
  });

/** A count option as the config schema takes it (1..10,000), or small for sequences that must reach it. */
const count = (max: number) => fc.integer({ min: 1, max });

/** The range of `detectors.power.stuck_after` and `stale_after`: 1s to 7d. */
const DURATION_MIN_MS = 1_000;
const DURATION_MAX_MS = 7 * 86_400_000;

/** A duration as the config takes it, anywhere in its range: milliseconds, or digits and a unit. */
const durationOption = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: DURATION_MIN_MS, max: DURATION_MAX_MS }) },
  { weight: 2, arbitrary: fc.constantFrom('1s', '30s', '5m', '15m', '1.5h', '2d', '7d') },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 7 * 24 }).map((hours) => `${hours}h`) },
);

/**
 * The `detectors:` config section with any subset of fields set to any valid value, run through
 * the real schema and mapping, so the options are exactly what a valid config file can produce.
 */
export function detectorOptions(maxCount = 10_000): fc.Arbitrary<DetectorOptions> {
  const thresholds = { failure_threshold: count(maxCount), success_threshold: count(maxCount) };
  const section = fc.record(
    {
      membership: fc.record({ remove_after: count(maxCount) }, { requiredKeys: [] }),
      vpn: fc.record(thresholds, { requiredKeys: [] }),
      reachability: fc.record(
        {
          ...thresholds,
          // The config takes only codes an observation error can carry (config check refuses others).
          codes: fc.array(fc.constantFrom(...OBSERVATION_ERROR_CODES), { maxLength: 6 }),
          statuses: fc.array(fc.integer({ min: 100, max: 599 }), { maxLength: 4 }),
        },
        { requiredKeys: [] },
      ),
      health: fc.record(thresholds, { requiredKeys: [] }),
      power: fc.record({ stuck_after: durationOption, stale_after: durationOption }, { requiredKeys: [] }),
      command_queue: fc.record({ backlog_threshold: count(maxCount) }, { requiredKeys: [] }),
      upstream: fc.record(
        {
          ...thresholds,
          error_ratio: fc.double({ min: 0, max: 1, minExcluded: true, noNaN: true }),
          min_requests: count(maxCount),
          auth_failures: count(maxCount),
        },
        { requiredKeys: [] },
      ),
      list: fc.record(thresholds, { requiredKeys: [] }),
      pace: fc.record(thresholds, { requiredKeys: [] }),
    },
    { requiredKeys: [] },
  );
  return section.map((raw) => toDetectorOptions(detectorOptionsSchema.parse(raw)));
}

/** Every field of the `detectors:` section set to a bound of what the config schema accepts. */
export const edgeDetectorOptions: fc.Arbitrary<DetectorOptions> = (() => {
  const bound = fc.constantFrom(1, 10_000);
  const thresholds = { failure_threshold: bound, success_threshold: bound };
  const duration = fc.constantFrom(DURATION_MIN_MS, DURATION_MAX_MS, '1s', '7d');
  return fc
    .record({
      membership: fc.record({ remove_after: bound }),
      vpn: fc.record(thresholds),
      reachability: fc.record({
        ...thresholds,
        codes: fc.constantFrom([], [...DEFAULT_UNREACHABLE_CODES]),
        statuses: fc.constantFrom([], [100, 599]),
      }),
      health: fc.record(thresholds),
      power: fc.record({ stuck_after: duration, stale_after: duration }),
      command_queue: fc.record({ backlog_threshold: bound }),
      upstream: fc.record({
        ...thresholds,
        error_ratio: fc.constantFrom(Number.MIN_VALUE, 1),
        min_requests: bound,
        auth_failures: bound,
      }),
      list: fc.record(thresholds),
      pace: fc.record(thresholds),
    })
    .map((raw) => toDetectorOptions(detectorOptionsSchema.parse(raw)));
})();
