import type { Config } from '../config/schema.js';
import type { FleetEvent } from '../events/types.js';
import type { GcKind } from '../lib/gc-pauses.js';
import type { PollerName } from '../pollers/config.js';
import type { ObservationErrorInfo, PollHooks, PollOutcome } from '../pollers/outcome.js';
import type { IncidentsMoved } from '../store/snapshot-store.js';
import type { AuthAttempt, RequestInfo, RequestObserver } from '../upstream/http.js';

/**
 * What the daemon and its poll thread (poll-thread.ts) say to each other. Everything crosses as a
 * structured clone: the config once at start, then commands one way, and log lines and the poll
 * hooks' calls the other. The hooks are recorded in the thread and replayed on the daemon's side
 * against the same hooks an in-process poll would call (metrics, counters, tests), in batches:
 * a message per hook call would cost more than most of the calls themselves.
 */

/** Given to the thread at start (`workerData`). */
export interface PollThreadData {
  config: Config;
  /** The daemon's log level: the thread's lines are written through the daemon's logger. */
  logLevel: string;
}

export type ToPollThread =
  | { type: 'start' }
  | { type: 'detectors'; detectors: Config['detectors'] }
  | { type: 'stop'; graceMs: number };

export type FromPollThread =
  /** One JSON log line of the thread's logger. */
  { type: 'log'; line: string } | HooksMessage | { type: 'stopped'; polls: 'graceful' | 'forced' };

/** A batch of the thread's hook calls, with the upstream requests among them packed. */
export interface HooksMessage {
  type: 'hooks';
  calls: HookCall[];
  requests: PackedRequests;
}

/**
 * The upstream requests of a batch, one per poll, as numbers and a table of their strings: a
 * structured clone of an object per request cost about 2.5 µs a request (a clone made and read
 * back, 256 to a batch, Node 20), a tenth of that packed. Each request is `REQUEST_FIELDS`
 * numbers: operation, target, method, status, duration in ms and flags (`AUTH_FLAGS`,
 * `RETRY_FLAG`). A string field is its index in `strings`, -1 for none; a status that is a
 * string (`timeout`, `network`) is -1 minus its index.
 */
export interface PackedRequests {
  strings: string[];
  values: number[];
}

const REQUEST_FIELDS = 6;
const AUTH_FLAGS: Readonly<Record<AuthAttempt, number>> = { first: 1, renewed: 2 };
const RETRY_FLAG = 4;

export type HookCall =
  | ['observationError', ObservationErrorInfo]
  /** The outcome, how long the job took and when it finished (the hook is told later). */
  | ['jobFinished', PollOutcome, number, number]
  | ['jobFailed', unknown]
  | ['shardsCoalesced', PollerName, number]
  /** The next `count` requests of the batch's `requests`, in the order they were made. */
  | ['requests', number]
  | ['events', readonly FleetEvent[]]
  /** A commit's changes to the open incidents, for the daemon's store guard to follow. */
  | ['incidents', readonly FleetEvent[], IncidentsMoved | undefined]
  /** The thread's V8 heap: used and total bytes (metrics). */
  | ['heap', number, number]
  /** One collection of the thread's heap: its kind and its pause in seconds (metrics). */
  | ['gc', GcKind, number];

/** The hooks a poll calls: what the thread records and the daemon replays. */
export interface PollThreadHooks {
  poll: PollHooks;
  upstream: RequestObserver;
  events: (events: readonly FleetEvent[]) => void;
  /** The thread's commits changed the open incidents (`StoreLossGuard.incidentsChanged`). */
  incidents?: (events: readonly FleetEvent[], moved: IncidentsMoved | undefined) => void;
  /** The thread's V8 heap, used and total bytes (`fleetwatch_poll_thread_heap_size_*`). */
  heap?: (used: number, total: number) => void;
  /** One collection of the thread's heap (`fleetwatch_poll_thread_gc_duration_seconds`). */
  gc?: (kind: GcKind, seconds: number) => void;
  jobFailed: (poller: unknown) => void;
}

/**
 * Calls recorded before they are sent: a batch goes at this many calls (a run of requests is one
 * call) or requests, or `FLUSH_MS` after the first.
 */
const BATCH_CALLS = 256;
const BATCH_REQUESTS = 1_024;
const FLUSH_MS = 20;

/** Packs a batch's requests (see `PackedRequests`). */
class RequestPacker {
  #strings: string[] = [];
  #index = new Map<string, number>();
  #values: number[] = [];
  count = 0;

  add(info: RequestInfo): void {
    const flags =
      (info.auth === undefined ? 0 : AUTH_FLAGS[info.auth]) | (info.retry === true ? RETRY_FLAG : 0);
    this.#values.push(
      this.#string(info.operation),
      info.target === undefined ? -1 : this.#string(info.target),
      this.#string(info.method),
      typeof info.status === 'number' ? info.status : -1 - this.#string(info.status),
      info.durationMs,
      flags,
    );
    this.count += 1;
  }

  /** What was packed since the last take, and a fresh start. */
  take(): PackedRequests {
    const packed = { strings: this.#strings, values: this.#values };
    this.#strings = [];
    this.#index = new Map();
    this.#values = [];
    this.count = 0;
    return packed;
  }

  #string(value: string): number {
    let index = this.#index.get(value);
    if (index === undefined) {
      index = this.#strings.length;
      this.#strings.push(value);
      this.#index.set(value, index);
    }
    return index;
  }
}

/** The `position`-th request of `packed`, as the thread's observer saw it. */
function unpackRequest(packed: PackedRequests, position: number): RequestInfo {
  const { strings, values } = packed;
  const at = position * REQUEST_FIELDS;
  const target = values[at + 1] as number;
  const status = values[at + 3] as number;
  const flags = values[at + 5] as number;
  const info: RequestInfo = {
    operation: strings[values[at] as number] as string,
    method: strings[values[at + 2] as number] as RequestInfo['method'],
    status: status >= 0 ? status : (strings[-1 - status] as RequestInfo['status']),
    durationMs: values[at + 4] as number,
  };
  if (target >= 0) info.target = strings[target] as string;
  if (flags & AUTH_FLAGS.first) info.auth = 'first';
  else if (flags & AUTH_FLAGS.renewed) info.auth = 'renewed';
  if (flags & RETRY_FLAG) info.retry = true;
  return info;
}

/**
 * Hooks that record each call and post them in batches (at most `BATCH_CALLS` calls or
 * `BATCH_REQUESTS` requests, at most `FLUSH_MS` after the first); `flush()` sends what is left
 * (before the thread says it stopped).
 */
export function recordingHooks(
  post: (message: FromPollThread) => void,
  now: () => number,
): PollThreadHooks & { flush(): void } {
  let calls: HookCall[] = [];
  const requests = new RequestPacker();
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (calls.length === 0) return;
    const batch = calls;
    calls = [];
    post({ type: 'hooks', calls: batch, requests: requests.take() });
  };
  const scheduled = () => {
    if (calls.length >= BATCH_CALLS || requests.count >= BATCH_REQUESTS) flush();
    else timer ??= setTimeout(flush, FLUSH_MS);
  };
  const record = (call: HookCall) => {
    calls.push(call);
    scheduled();
  };
  const request = (info: RequestInfo) => {
    requests.add(info);
    const last = calls.at(-1);
    if (last?.[0] === 'requests') last[1] += 1;
    else calls.push(['requests', 1]);
    scheduled();
  };
  return {
    poll: {
      observationError: (info) => record(['observationError', info]),
      jobFinished: (outcome, durationMs) => record(['jobFinished', outcome, durationMs, now()]),
      shardsCoalesced: (poller, shards) => record(['shardsCoalesced', poller, shards]),
    },
    upstream: { request },
    events: (events) => record(['events', events]),
    incidents: (events, moved) => record(['incidents', events, moved]),
    heap: (used, total) => record(['heap', used, total]),
    gc: (kind, seconds) => record(['gc', kind, seconds]),
    jobFailed: (poller) => record(['jobFailed', poller]),
    flush,
  };
}

/** Calls each recorded hook call on `hooks`, in the order the thread made them. */
export function replayHooks(message: HooksMessage, hooks: PollThreadHooks): void {
  let request = 0;
  for (const call of message.calls) {
    switch (call[0]) {
      case 'observationError':
        hooks.poll.observationError?.(call[1]);
        break;
      case 'jobFinished':
        hooks.poll.jobFinished?.(call[1], call[2], call[3]);
        break;
      case 'jobFailed':
        hooks.jobFailed(call[1]);
        break;
      case 'shardsCoalesced':
        hooks.poll.shardsCoalesced?.(call[1], call[2]);
        break;
      case 'requests':
        for (const end = request + call[1]; request < end; request += 1)
          hooks.upstream.request(unpackRequest(message.requests, request));
        break;
      case 'events':
        hooks.events(call[1]);
        break;
      case 'incidents':
        hooks.incidents?.(call[1], call[2]);
        break;
      case 'heap':
        hooks.heap?.(call[1], call[2]);
        break;
      case 'gc':
        hooks.gc?.(call[1], call[2]);
        break;
    }
  }
}
