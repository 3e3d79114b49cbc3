import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { Detector, FleetEvent, Observation, ObservationError } from '../events/types.js';
import {
  type CommitItem,
  type SnapshotRecord,
  type SnapshotRef,
  type SnapshotStore,
  storedStateJson,
  type TouchItem,
} from '../store/snapshot-store.js';

/** A failed observation, as reported to hooks (for metrics). */
export interface ObservationErrorInfo {
  poller: string;
  ref: SnapshotRef;
  error: ObservationError;
}

/** What the pipeline reports (poll hooks extend it); must not throw (a throw is caught and logged). */
export interface ObservationHooks {
  observationError?(info: ObservationErrorInfo): void;
}

/**
 * The observation pipeline: the ONE way every poller turns observations into snapshots and events.
 *
 * For a detector and a list of `{ref, observation}`:
 * 1. read every snapshot record in one pipelined round trip (or use the records the caller read);
 * 2. run the detector per entity (`context.now`, the detector's options);
 * 3. when the next state deep-equals the stored one and there are no drafts, skip the commit and
 *    only record the poll (`store.touch`: `polled`, `seen`/`err`; never the version or state);
 *    otherwise commit everything in one pipelined round trip (`commitMany`: one atomic Lua CAS
 *    per item, events appended to the outbox and the event log in the same call);
 * 4. on `version-conflict` (another writer won) re-read that entity and re-run the detector on the
 *    same observation, at most `maxAttempts` times in all; on `stale-observation` (a newer reading is
 *    stored) drop the observation.
 *
 * Observation errors are counted (`hooks.observationError`, one call per failed observation) and
 * logged: one warn line per run that had any (poller, how many, by code, one example; unless the
 * caller logs them itself, `quiet`), and one debug line per failed entity. Error messages come from the upstream client, which keeps them to
 * one scrubbed line.
 */

export interface ObservationInput<Value> {
  ref: SnapshotRef;
  observation: Observation<Value>;
  /** The stored record when the caller has just read it; used for the first attempt only. */
  record?: SnapshotRecord;
  /**
   * The reading says nothing about the facet yet: record the poll and its error, but do not run
   * the detector (see the entity poller's rule for `not_found`).
   */
  recordOnly?: boolean;
}

export interface PipelineSpec<State, Value, Options> {
  /** For logs and hooks: which poller observed this. */
  poller: string;
  detector: Detector<State, Value, Options>;
  options: Options;
  /**
   * Drop an observation whose time equals the stored one too (default: only older ones). For
   * facets where one time stands for one reading that must count once (counting windows).
   */
  strictlyNewer?: boolean;
  /**
   * The caller says what went wrong itself (once per change, say): no warn line per run. The
   * errors are still counted and kept as each facet's last error.
   */
  quiet?: boolean;
  /**
   * Error codes that are an answer about the facet rather than a failure (power's 404: no power
   * control): counted and kept as the last error like any other, but left out of the warn line,
   * which would otherwise repeat for every re-check of a vehicle without power control.
   */
  answers?: readonly string[];
}

export interface PipelineResult {
  observed: number;
  failed: number;
  committed: number;
  unchanged: number;
  conflicts: number;
  stale: number;
  gaveUp: number;
  events: FleetEvent[];
}

/** Observations committed as they arrive (see `ObservationPipeline.stream`). */
export interface PipelineStream<Value> {
  add(input: ObservationInput<Value>): void;
  /** Waits for every commit; rejects with the first commit failure (after trying the rest). */
  done(): Promise<PipelineResult>;
}

export interface ObservationPipelineOptions {
  store: SnapshotStore;
  /** Clock for `context.now`; `Date.now` by default. */
  now?: () => number;
  logger?: Logger;
  hooks?: ObservationHooks;
  /** Detector runs per observation before giving up on version conflicts; default 4. */
  maxAttempts?: number;
  /** Entities per Redis round trip; default 500. */
  chunkSize?: number;
}

export function emptyPipelineResult(): PipelineResult {
  return {
    observed: 0,
    failed: 0,
    committed: 0,
    unchanged: 0,
    conflicts: 0,
    stale: 0,
    gaveUp: 0,
    events: [],
  };
}

interface Pending<Value> {
  input: ObservationInput<Value>;
  record: SnapshotRecord | undefined;
}

/**
 * Whether `json` (the next state as it will be stored) is what `record` holds: the stored text
 * when it is the same text (the common case: a detector given the same reading returns the same
 * state), else a deep comparison of the decoded states (key order may differ).
 */
function sameState(record: SnapshotRecord, json: string): boolean {
  return storedStateJson(record) === json || isDeepStrictEqual(record.state, JSON.parse(json));
}

function timeOf(iso: string | undefined): number {
  return iso === undefined ? Number.NaN : Date.parse(iso);
}

export class ObservationPipeline {
  readonly #store: SnapshotStore;
  readonly #now: () => number;
  readonly #logger: Logger | undefined;
  readonly #hooks: ObservationHooks | undefined;
  readonly #maxAttempts: number;
  readonly #chunkSize: number;

  constructor(options: ObservationPipelineOptions) {
    this.#store = options.store;
    this.#now = options.now ?? Date.now;
    this.#logger = options.logger;
    this.#hooks = options.hooks;
    this.#maxAttempts = Math.max(1, options.maxAttempts ?? 4);
    this.#chunkSize = Math.max(1, options.chunkSize ?? 500);
  }

  /**
   * Group commit for observations that arrive one by one (a shard's reads): each is committed as
   * soon as no commit is under way, together with whatever arrived meanwhile. A change reaches
   * Redis (and its event the outbox) right after its own read, not after the shard's slowest
   * one, while a busy shard still batches. Errors are reported once, by `done`.
   *
   * Polls that changed nothing are only recorded (`touch`), and nothing waits on that record but
   * the next cycle: they are written `chunkSize` at a time and the rest by `done`, one round trip
   * for hundreds of polls instead of one per group commit (the most common write by far).
   */
  stream<State, Value, Options>(spec: PipelineSpec<State, Value, Options>): PipelineStream<Value> {
    const result = emptyPipelineResult();
    // Only what `done` reports is kept: a shard's observations (their values, the records read
    // for them) are let go as soon as they are committed, not held until the shard ends.
    let observed = 0;
    const failed: Array<Pick<ObservationInput<Value>, 'ref' | 'observation'>> = [];
    let queued: ObservationInput<Value>[] = [];
    let touches: TouchItem[] = [];
    let running: Promise<void> | undefined;
    let failure: unknown;
    const flushTouches = async (atLeast: number): Promise<void> => {
      if (touches.length === 0 || touches.length < atLeast) return;
      const batch = touches;
      touches = [];
      await this.#store.touch(batch);
    };
    const pump = async (): Promise<void> => {
      while (queued.length > 0) {
        const batch = queued;
        queued = [];
        try {
          await this.#commitInputs(spec, batch, result, touches);
          if (touches.length >= this.#chunkSize) await flushTouches(this.#chunkSize);
        } catch (error) {
          failure ??= error;
        }
      }
    };
    const start = (): void => {
      running ??= pump().finally(() => {
        running = undefined;
      });
    };
    return {
      add: (input) => {
        observed += 1;
        if (!input.observation.ok) failed.push({ ref: input.ref, observation: input.observation });
        queued.push(input);
        start();
      },
      done: async () => {
        while (running || queued.length > 0) {
          start();
          await running;
        }
        try {
          await flushTouches(1);
        } catch (error) {
          failure ??= error;
        }
        result.observed = observed;
        result.failed = failed.length;
        this.#reportErrors(spec, failed, observed);
        if (failure !== undefined) throw failure;
        return result;
      },
    };
  }

  async run<State, Value, Options>(
    spec: PipelineSpec<State, Value, Options>,
    inputs: ReadonlyArray<ObservationInput<Value>>,
  ): Promise<PipelineResult> {
    const result = emptyPipelineResult();
    // One observation per snapshot: two for the same ref would conflict with each other and the
    // retry would apply the same reading twice. The later one wins.
    const unique = new Map<string, ObservationInput<Value>>();
    for (const input of inputs) unique.set(this.#store.keyOf(input.ref), input);
    const list = [...unique.values()];
    result.observed = list.length;
    const failed = list.filter((input) => !input.observation.ok);
    this.#reportErrors(spec, failed, list.length);
    result.failed = failed.length;
    await this.#commitInputs(spec, list, result);
    return result;
  }

  /** `deferred`: collect the touches there for the caller to write, instead of writing them now. */
  async #commitInputs<State, Value, Options>(
    spec: PipelineSpec<State, Value, Options>,
    list: ReadonlyArray<ObservationInput<Value>>,
    result: PipelineResult,
    deferred?: TouchItem[],
  ): Promise<void> {
    if (list.length <= this.#chunkSize) return this.#runChunk(spec, list, result, deferred);
    for (let start = 0; start < list.length; start += this.#chunkSize) {
      await this.#runChunk(spec, list.slice(start, start + this.#chunkSize), result, deferred);
    }
  }

  async #runChunk<State, Value, Options>(
    spec: PipelineSpec<State, Value, Options>,
    chunk: ReadonlyArray<ObservationInput<Value>>,
    result: PipelineResult,
    deferred: TouchItem[] | undefined,
  ): Promise<void> {
    // Loops, not per-item callbacks made per chunk (ARCHITECTURE.md, *Hot paths*).
    let pending = new Array<Pending<Value>>(chunk.length);
    for (let i = 0; i < chunk.length; i += 1) {
      const input = chunk[i] as ObservationInput<Value>;
      pending[i] = { input, record: input.record };
    }
    for (let attempt = 1; pending.length > 0 && attempt <= this.#maxAttempts; attempt += 1) {
      const unread: Pending<Value>[] = [];
      const unreadRefs: SnapshotRef[] = [];
      for (const item of pending) {
        if (item.record !== undefined) continue;
        unread.push(item);
        unreadRefs.push(item.input.ref);
      }
      if (unread.length > 0) {
        const records = await this.#store.read(unreadRefs);
        for (let i = 0; i < unread.length; i += 1) (unread[i] as Pending<Value>).record = records[i];
      }

      const commits: { item: Pending<Value>; commit: CommitItem }[] = [];
      const touches: TouchItem[] = [];
      for (const item of pending) {
        const record = item.record ?? { version: 0, state: undefined };
        const { ref, observation } = item.input;
        const at = timeOf(observation.at);
        const storedAt = timeOf(record.observedAt);
        if (Number.isFinite(storedAt) && (at < storedAt || (spec.strictlyNewer && at <= storedAt))) {
          result.stale += 1;
          continue;
        }
        if (item.input.recordOnly) {
          const lastError = observation.ok ? undefined : observation.error;
          touches.push({ ref, polledAt: observation.at, lastSeenAt: undefined, lastError });
          continue;
        }
        const detected = spec.detector(record.state as State | undefined, observation, {
          now: this.#now(),
          options: spec.options,
        });
        // As it will read back from Redis: a JSON round trip drops undefined fields.
        const json = JSON.stringify(detected.state ?? null);
        // Seen now, and the error to store: a success clears one (null), a failure is the error.
        const lastSeenAt = observation.ok ? observation.at : undefined;
        const lastError = observation.ok ? null : observation.error;
        if (detected.events.length === 0 && record.version > 0 && sameState(record, json)) {
          // A poll that succeeded again has no stored error to clear: the error is left alone.
          const writeError = lastError !== null || record.lastError !== undefined;
          touches.push({
            ref,
            polledAt: observation.at,
            lastSeenAt,
            lastError: writeError ? lastError : undefined,
          });
          continue;
        }
        const state: unknown = JSON.parse(json);
        commits.push({
          item,
          commit: {
            ref,
            expectedVersion: record.version,
            next: { state, observedAt: observation.at, lastSeenAt, lastError },
            drafts: detected.events,
          },
        });
      }

      if (deferred) deferred.push(...touches);
      else if (touches.length > 0) await this.#store.touch(touches);
      result.unchanged += touches.length;
      // Most polls change nothing: no commit call (and no wait) for them.
      if (commits.length === 0) {
        pending = [];
        break;
      }
      const items = new Array<CommitItem>(commits.length);
      for (let i = 0; i < commits.length; i += 1) items[i] = (commits[i] as { commit: CommitItem }).commit;
      const outcomes = await this.#store.commitMany(items);
      const retry: Pending<Value>[] = [];
      for (let i = 0; i < outcomes.length; i += 1) {
        const outcome = outcomes[i] as (typeof outcomes)[number];
        const entry = commits[i] as (typeof commits)[number];
        if (outcome.committed) {
          result.committed += 1;
          result.events.push(...outcome.events);
        } else if (outcome.reason === 'version-conflict') {
          result.conflicts += 1;
          retry.push({ input: entry.item.input, record: undefined });
        } else {
          result.stale += 1;
        }
      }
      pending = retry;
    }
    if (pending.length > 0) {
      result.gaveUp += pending.length;
      this.#logger?.warn(
        { poller: spec.poller, count: pending.length, attempts: this.#maxAttempts },
        'gave up on observations after repeated version conflicts',
      );
    }
  }

  /** `inputs`: the failed observations (any others are skipped) of `of` in all. */
  #reportErrors<Value>(
    { poller, quiet, answers }: Pick<PipelineSpec<unknown, Value, unknown>, 'poller' | 'quiet' | 'answers'>,
    inputs: ReadonlyArray<Pick<ObservationInput<Value>, 'ref' | 'observation'>>,
    of: number,
  ): void {
    const byCode: Record<string, number> = {};
    let failed = 0;
    let example: { kind: string; id: string; code: string; status?: number; message: string } | undefined;
    for (const { ref, observation } of inputs) {
      if (observation.ok) continue;
      const { error } = observation;
      if (!answers?.includes(error.code)) {
        failed += 1;
        byCode[error.code] = (byCode[error.code] ?? 0) + 1;
        example ??= { kind: ref.kind, id: ref.id, ...error };
      }
      try {
        this.#hooks?.observationError?.({ poller, ref, error });
      } catch (hookError) {
        this.#logger?.debug({ err: (hookError as Error).message }, 'observation error hook failed');
      }
      this.#logger?.debug(
        { poller, kind: ref.kind, id: ref.id, signal: ref.facet, code: error.code, status: error.status },
        'observation failed',
      );
    }
    if (failed > 0 && !quiet) {
      this.#logger?.warn(
        { poller, failed, of, codes: byCode, example },
        'observations failed (not state changes)',
      );
    }
  }
}
