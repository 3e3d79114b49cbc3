import type { Config } from '../config/schema.js';
import type { FleetEvent } from '../events/types.js';
import type { PollerName } from '../pollers/config.js';
import type { ObservationErrorInfo, PollHooks, PollOutcome } from '../pollers/outcome.js';
import type { IncidentsMoved } from '../store/snapshot-store.js';
import type { RequestInfo, RequestObserver } from '../upstream/http.js';

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
  | { type: 'log'; line: string }
  | { type: 'hooks'; calls: HookCall[] }
  | { type: 'stopped'; polls: 'graceful' | 'forced' };

export type HookCall =
  | ['observationError', ObservationErrorInfo]
  /** The outcome, how long the job took and when it finished (the hook is told later). */
  | ['jobFinished', PollOutcome, number, number]
  | ['jobFailed', unknown]
  | ['shardsCoalesced', PollerName, number]
  | ['request', RequestInfo]
  | ['events', readonly FleetEvent[]]
  /** A commit's changes to the open incidents, for the daemon's store guard to follow. */
  | ['incidents', readonly FleetEvent[], IncidentsMoved | undefined]
  /** The thread's V8 heap: used and total bytes (metrics). */
  | ['heap', number, number];

/** The hooks a poll calls: what the thread records and the daemon replays. */
export interface PollThreadHooks {
  poll: PollHooks;
  upstream: RequestObserver;
  events: (events: readonly FleetEvent[]) => void;
  /** The thread's commits changed the open incidents (`StoreLossGuard.incidentsChanged`). */
  incidents?: (events: readonly FleetEvent[], moved: IncidentsMoved | undefined) => void;
  /** The thread's V8 heap, used and total bytes (`fleetwatch_poll_thread_heap_size_*`). */
  heap?: (used: number, total: number) => void;
  jobFailed: (poller: unknown) => void;
}

/** Calls recorded before they are sent: a batch goes at this many, or after `FLUSH_MS`. */
const BATCH_CALLS = 256;
const FLUSH_MS = 20;

/**
 * Hooks that record each call and post them in batches (at most `BATCH_CALLS` calls, at most
 * `FLUSH_MS` after the first); `flush()` sends what is left (before the thread says it stopped).
 */
export function recordingHooks(
  post: (message: FromPollThread) => void,
  now: () => number,
): PollThreadHooks & { flush(): void } {
  let calls: HookCall[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (calls.length === 0) return;
    const batch = calls;
    calls = [];
    post({ type: 'hooks', calls: batch });
  };
  const record = (call: HookCall) => {
    calls.push(call);
    if (calls.length >= BATCH_CALLS) flush();
    else timer ??= setTimeout(flush, FLUSH_MS);
  };
  return {
    poll: {
      observationError: (info) => record(['observationError', info]),
      jobFinished: (outcome, durationMs) => record(['jobFinished', outcome, durationMs, now()]),
      shardsCoalesced: (poller, shards) => record(['shardsCoalesced', poller, shards]),
    },
    upstream: { request: (info) => record(['request', info]) },
    events: (events) => record(['events', events]),
    incidents: (events, moved) => record(['incidents', events, moved]),
    heap: (used, total) => record(['heap', used, total]),
    jobFailed: (poller) => record(['jobFailed', poller]),
    flush,
  };
}

/** Calls each recorded hook call on `hooks`, in the order the thread made them. */
export function replayHooks(calls: readonly HookCall[], hooks: PollThreadHooks): void {
  for (const call of calls) {
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
      case 'request':
        hooks.upstream.request(call[1]);
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
    }
  }
}
