/**
 * The contract between detectors (pure: previous state + observation → next state + event drafts)
 * and the store (atomically swaps the state and turns drafts into CloudEvents on the outbox).
 */

export type Severity = 'info' | 'warning' | 'critical';

export type EntityKind = 'vehicle' | 'robot';

/** A CloudEvents 1.0 event, structured JSON mode. */
export interface FleetEvent<Data extends EventData = EventData> {
  specversion: '1.0';
  /** Stable: derived from subject, signal and snapshot version, so a retried hand-off dedups. */
  id: string;
  /** `fleetwatch/<installation>` */
  source: string;
  type: string;
  /** `vehicle/<id>` or `robot/<deviceId>` */
  subject: string;
  /** Observation time, ISO 8601. */
  time: string;
  datacontenttype: 'application/json';
  data: Data;
}

export interface EventData {
  severity: Severity;
  previous?: unknown;
  current?: unknown;
  /** On resolving events: how long the incident lasted. */
  durationMs?: number;
  [key: string]: unknown;
}

/** What a detector asks to emit; the store adds id, source, subject and time. */
export interface EventDraft<Data extends EventData = EventData> {
  type: string;
  data: Data;
}

/**
 * Whose trouble a failed observation is. `access`: fleetwatch could not get in — no token
 * (whatever the issuer answered), a 401 that re-authentication did not cure, a 403. That says
 * nothing about the entity: no detector counts it against the entity (`defineDetector`), and the
 * upstream windows make it the monitor's own incident (`monitor.upstream.degraded`). Absent: the
 * failure may be the entity's (or its upstream's, see the inhibition rules).
 */
export type ObservationErrorClass = 'access';

/** Why a poll produced no usable reading. Never diffed as a state change. */
export interface ObservationError {
  /** One of `OBSERVATION_ERROR_CODES`: `timeout`, `network`, `bad_gateway`, `not_found`, `invalid_payload`, ... */
  code: string;
  status?: number;
  message: string;
  /** Decided once from the upstream error (`toObservationError`); absent for an entity's own failure. */
  class?: ObservationErrorClass;
}

export type Observation<Value> =
  | { ok: true; at: string; value: Value }
  | { ok: false; at: string; error: ObservationError };

export interface DetectorResult<State> {
  state: State;
  events: EventDraft[];
}

/** Pure: no I/O, no clock but `context.now`, never throws on any input. */
export type Detector<State, Value, Options = unknown> = (
  previous: State | undefined,
  observation: Observation<Value>,
  context: { now: number; options: Options },
) => DetectorResult<State>;
