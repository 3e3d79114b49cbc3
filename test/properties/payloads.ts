import fc from 'fast-check';

/**
 * Response bodies as the spec (`/v1`) and robot-shapes.md (`/v2`) describe them, the way the
 * simulator writes them: envelopes, omitted optional fields, nulls where allowed, and fields
 * nobody documented (which the /v1 parser drops and the robot parser keeps).
 */

/** A field name the spec does not use; `__proto__` included, as JSON.parse makes it an own key. */
const unknownKey = (known: readonly string[]) =>
  fc
    .oneof(fc.constantFrom('__proto__', 'constructor', 'extra'), fc.string())
    .filter((key) => !known.includes(key));

/** `record` plus up to two undocumented fields (set as own keys, so `__proto__` stays data). */
function withExtras(record: fc.Arbitrary<Record<string, unknown>>, known: readonly string[]) {
  return fc
    .tuple(record, fc.array(fc.tuple(unknownKey(known), fc.jsonValue({ maxDepth: 1 })), { maxLength: 2 }))
    .map(([base, extras]) => {
      const out = { ...base };
      for (const [key, value] of extras) {
        Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      }
      return out;
    });
}

// --- /v1 ---------------------------------------------------------------------------------------

/** RFC 3339 date-time, as the spec's `date-time`: with or without a fraction, `Z` or an offset. */
export const dateTime = fc
  .record({
    ms: fc.integer({ min: -62_167_219_200, max: 253_402_300_799 }).map((s) => s * 1000),
    fraction: fc.oneof(fc.constant(''), fc.stringMatching(/^\.\d{1,9}$/)),
    offset: fc.oneof(fc.constant('Z'), fc.stringMatching(/^[+-]([01]\d|2[0-3]):[0-5]\d$/)),
  })
  .map(({ ms, fraction, offset }) => `${new Date(ms).toISOString().slice(0, 19)}${fraction}${offset}`);

export const V1_SUMMARY_KEYS = ['id', 'ipAddress', 'vpnConnected'];

export const vehicleSummary = fc.record(
  { id: fc.string({ minLength: 1 }), ipAddress: fc.ipV4(), vpnConnected: fc.boolean() },
  { requiredKeys: ['id', 'vpnConnected'] },
);

export const powerStatus = fc.record({
  state: fc.constantFrom('on', 'off', 'unknown'),
  pendingCommand: fc.oneof(
    fc.constant(null),
    fc.constantFrom('on', 'off').map((state) => ({ state })),
  ),
  updatedAt: fc.oneof(fc.constant(null), dateTime),
});

export const vehicleListBody = fc
  .array(withExtras(vehicleSummary, V1_SUMMARY_KEYS), { maxLength: 5 })
  .chain((data) => withExtras(fc.constant({ status: 'success', data }), ['status', 'data']));

export const powerStatusBody = withExtras(powerStatus, ['state', 'pendingCommand', 'updatedAt']).chain(
  (data) => withExtras(fc.constant({ status: 'success', data }), ['status', 'data']),
);

// --- /v2 ---------------------------------------------------------------------------------------

/** A documented optional field: absent, null (read as absent), or a value. */
const optional = (value: fc.Arbitrary<unknown>) => fc.oneof(value, fc.constant(null));
const text = fc.string({ maxLength: 12 });
const integer = fc.integer({ min: -1_000, max: 1_000_000 });
const real = fc.double({ noNaN: true, noDefaultInfinity: true });
const rosTime = fc.record({ sec: optional(integer), nanosec: optional(integer) }, { requiredKeys: [] });

/** `{ status, message, data }`, every part optional, plus undocumented fields. */
const envelope = (data: fc.Arbitrary<unknown>, dataRequired = false) =>
  withExtras(
    fc.record(
      { status: optional(text), message: optional(text), data },
      { requiredKeys: dataRequired ? ['data'] : [] },
    ),
    ['status', 'message', 'data'],
  );

export const platformFeedback = withExtras(
  fc.record(
    {
      timestamp_utc: optional(rosTime),
      cortex_status: optional(
        fc.record(
          {
            status: optional(fc.integer({ min: 0, max: 4 })),
            status_text: optional(text),
            description: optional(text),
          },
          { requiredKeys: [] },
        ),
      ),
      navigation_feedback: optional(
        fc.record(
          {
            nav2_goal_status: optional(
              fc.record(
                {
                  goal_info: fc.jsonValue({ maxDepth: 1 }),
                  status: optional(fc.integer({ min: 0, max: 6 })),
                  status_text: optional(text),
                  text: optional(text),
                },
                { requiredKeys: [] },
              ),
            ),
            total_distance_remaining: optional(real),
            current_pose_index: optional(integer),
            number_of_poses_remaining: optional(integer),
            navigation_time: optional(rosTime),
            estimated_time_remaining: optional(rosTime),
            target_pose: fc.jsonValue({ maxDepth: 2 }),
          },
          { requiredKeys: [] },
        ),
      ),
      vehicle_feedback: optional(
        fc.record(
          {
            state: optional(text),
            description: optional(text),
            data: optional(fc.array(fc.jsonValue({ maxDepth: 1 }))),
          },
          { requiredKeys: [] },
        ),
      ),
      current_pose: optional(
        fc.record(
          {
            header: optional(
              fc.record({ stamp: optional(rosTime), frame_id: optional(text) }, { requiredKeys: [] }),
            ),
            pose: optional(
              fc.record(
                {
                  position: optional(
                    fc.record(
                      { latitude: optional(real), longitude: optional(real), altitude: optional(real) },
                      { requiredKeys: [] },
                    ),
                  ),
                  orientation: optional(
                    fc.record({ x: real, y: real, z: real, w: real }, { requiredKeys: [] }),
                  ),
                },
                { requiredKeys: [] },
              ),
            ),
          },
          { requiredKeys: [] },
        ),
      ),
      current_command_index: optional(integer),
      number_commands_remaining: optional(integer),
    },
    { requiredKeys: [] },
  ),
  ['timestamp_utc', 'cortex_status', 'navigation_feedback', 'vehicle_feedback', 'current_pose'],
);

export const platformFeedbackBody = envelope(
  withExtras(
    platformFeedback.map((platform_feedback) => ({ platform_feedback })),
    ['platform_feedback'],
  ),
  true,
);

export const leaseData = withExtras(
  fc.record({ holder_id: optional(text), expires_at: optional(dateTime) }, { requiredKeys: [] }),
  ['holder_id', 'expires_at'],
);

export const teleopStatusBody = envelope(leaseData, true);

export const healthBody = withExtras(
  fc.record(
    { status: optional(text), message: optional(text), data: fc.jsonValue({ maxDepth: 1 }) },
    { requiredKeys: [] },
  ),
  ['status', 'message', 'data'],
);

export const uuidBody = envelope(
  optional(withExtras(fc.record({ uuid: optional(fc.uuid()) }, { requiredKeys: [] }), ['uuid'])),
);

/** An opaque document (site, route, zone set): an envelope around any JSON, or a bare JSON value. */
export const documentBody = fc.oneof(envelope(fc.jsonValue({ maxDepth: 3 })), fc.jsonValue({ maxDepth: 3 }));

const deviceId = fc.oneof(
  fc.string({ minLength: 1 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
export const ID_KEYS = ['device_id', 'deviceId', 'id'] as const;

/** One robot-list entry: a device id, or an object naming it under one of the accepted keys. */
const robotEntry = fc.oneof(
  fc.string({ minLength: 1 }),
  fc
    .record({ key: fc.constantFrom(...ID_KEYS), id: deviceId, name: fc.option(text, { nil: undefined }) })
    .chain(({ key, id, name }) =>
      withExtras(fc.constant(name === undefined ? { [key]: id } : { [key]: id, name }), [...ID_KEYS, 'name']),
    ),
);

/** The robot list in each accepted shape. */
export const robotListBody = fc
  .array(robotEntry, { maxLength: 5 })
  .chain((list) =>
    fc.constantFrom<unknown>(list, { data: list }, { data: { robots: list } }, { robots: list }),
  );
