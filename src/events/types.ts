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

/** Why a poll produced no usable reading. Never diffed as a state change. */
export interface ObservationError {
  /** `timeout`, `network`, `invalid_payload`, `http_500`, `http_502`, `http_503`, `http_504`, `not_found`, ... */
  code: string;
  status?: number;
  message: string;
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
