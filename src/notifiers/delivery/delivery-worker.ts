import { setMaxListeners } from 'node:events';
import { type Job, Queue, RateLimitError, UnrecoverableError, Worker } from 'bullmq';
import type { Logger } from 'pino';
import { formatDuration } from '../../lib/duration.js';
import { linkedSignal } from '../../lib/linked-signal.js';
import { type RedisClient, throttledWarn } from '../../lib/redis-connection.js';
import type { RetryPolicy } from '../../lib/retry-policy.js';
import { closeWorker, settlesWithin } from '../../lib/shutdown.js';
import { secrets as processSecrets, type SecretRegistry } from '../../log/secrets.js';
import { notifyQueueName } from '../../queues/names.js';
import { bullPrefix, DEFAULT_PREFIX } from '../../store/keys.js';
import { DEFAULT_MAX_HOLD_MS, type DeliveryOutcome, type Notification, type Notifier } from '../notifier.js';
import { type DeliveryDecision, decide } from './decision.js';
import type { DeliveredMarkerStore } from './delivered-markers.js';
import type { DeliveryJobData, DeliveryProgress } from './delivery-queue.js';
import type { DisabledReceivers, ReceiverDisabled } from './disabled-receivers.js';
import type { HoldRequest, ReceiverHold, ReceiverHolds } from './holds.js';

/**
 * The delivery worker of one receiver: a BullMQ worker on `notify-<receiver>` that hands each
 * notification to the receiver's `Notifier` and turns the outcome into done, hold, or dead letter.
 *
 * Order. Notifications to one receiver leave in the order they were queued: the worker takes one
 * job at a time (`concurrency: 1`), and the queue's global concurrency is 1, so with any number of
 * replicas one notification per receiver is under way. A notification that has to wait (429, or
 * the back-off before its next attempt) is not delayed on its own — that would let later ones
 * overtake it — but goes back to the HEAD of the queue while the whole receiver is held: BullMQ's
 * queue rate limit (written with the hold's record by `ReceiverHolds.hold`, then
 * `RateLimitError`), which every replica's worker obeys. A receiver that is down for a while gets
 * everything once it is back, in order. A held worker looks at the limit again every
 * `holdCheckMs`, so `fleetwatch receiver resume` (which clears it) takes effect that soon.
 *
 * | outcome | what happens |
 * |---|---|
 * | `delivered` | delivered marker `{p}:delivered:<receiver>:<id>` written (EX 1 day); job completed |
 * | `throttled` (429, webhook 502/503/504 with `Retry-After`) | receiver held for `retryAfterMs`, at most `max_hold`; not an attempt |
 * | `retry` (5xx, network, time-out) | attempt counted in the job's data; receiver held for the policy's next delay (or the receiver's `Retry-After` up to `max_hold`, if longer); after the last attempt: dead letter with the last reason |
 * | `rejected` (Slack 400/403/404, webhook 4xx) | dead letter at once with the reason |
 * | `gone` (webhook 410, Slack `channel_is_archived`) | receiver disabled, one `monitor.receiver.disabled`, this notification dead-lettered |
 *
 * The choice is made by `decide` (decision.ts, a pure function of the outcome, the job's progress
 * and the receiver's retry policy); this class carries it out against Redis and BullMQ.
 *
 * Before sending, the worker looks for the delivered marker (a replica killed between the
 * receiver's answer and BullMQ's "completed" does not make the next one send again) and for the
 * receiver's disabled flag (while set, notifications go to the dead letters unsent). Dead letters
 * are the queue's failed jobs (see `dead-letters.ts`). Reasons pass through the secret registry.
 *
 * Trouble of fleetwatch's own (Redis away, a bug) holds the receiver briefly without counting an
 * attempt; a notification that keeps hitting it in one process is dead-lettered after a few tries.
 */

export interface DeliveryReport {
  receiver: string;
  /** Receiver kind: `slack`, `webhook`. */
  kind: string;
  notificationId: string;
  /** Reasons already scrubbed. */
  outcome: DeliveryOutcome;
  /** 1-based; a `throttled` outcome does not use up the attempt. */
  attempt: number;
  latencyMs: number;
}

/** Told about every delivery attempt (metrics). Must not throw; errors are swallowed. */
export type DeliveryHook = (report: DeliveryReport) => void;

export type DeliveryResult =
  | { delivered: true; attempt: number; status?: number }
  /** The delivered marker was found: an earlier worker delivered it and died before completing. */
  | { delivered: 'earlier' };

export type DeliveryJob = Job<DeliveryJobData, DeliveryResult, string>;

export interface DeliveryWorkerTuning {
  /** BullMQ job lock (default 30 s). */
  lockDuration?: number;
  /** How often stalled jobs are looked for (default 30 s). */
  stalledInterval?: number;
  /** Stalls before a job is failed (default 2: a killed replica is survived twice). */
  maxStalledCount?: number;
  /** How long the receiver is held after trouble of fleetwatch's own (default 5 s). */
  errorHoldMs?: number;
  /**
   * How often a held worker looks whether the hold was released (`receiver resume`) before it
   * ends (default 1 s): one Redis call per held receiver and replica that often.
   */
  holdCheckMs?: number;
}

export interface DeliveryWorkerOptions {
  receiver: { name: string; kind: string };
  notifier: Notifier;
  policy: RetryPolicy;
  /** A worker connection (`maxRetriesPerRequest: null`); shared, not closed here. */
  connection: RedisClient;
  prefix?: string;
  disabledReceivers: DisabledReceivers;
  markers: DeliveredMarkerStore;
  holds: ReceiverHolds;
  /** The receiver's `max_hold` (default 5 min): the longest its own `Retry-After` holds it. */
  maxHoldMs?: number;
  secrets?: SecretRegistry;
  logger?: Logger;
  onOutcome?: DeliveryHook;
  tuning?: DeliveryWorkerTuning;
}

/**
 * The rate limiter is there for `RateLimitError` (holding the receiver); its own limit is never
 * reached. The worker does not pace sends ahead of time: receivers' 429s are honoured instead (a
 * kind whose receiver documents a rate paces its own sends, as `pagerduty` does).
 */
const LIMITER = { max: 1_000_000, duration: 1_000 };
const DEFAULT_ERROR_HOLD_MS = 5_000;
const DEFAULT_HOLD_CHECK_MS = 1_000;
/** Holds at least this long say in the log how to release them. */
const RELEASE_HINT_MS = 60_000;
/** Own errors on one notification, in one process, before it is dead-lettered. */
const MAX_OWN_ERRORS = 5;

export class DeliveryWorker {
  readonly receiver: string;
  readonly kind: string;
  readonly worker: Worker<DeliveryJobData, DeliveryResult, string>;
  /** Resolves once the queue's global concurrency is set and the worker runs. */
  readonly ready: Promise<void>;
  readonly #queue: Queue<DeliveryJobData, DeliveryResult, string>;
  readonly #options: DeliveryWorkerOptions;
  readonly #secrets: SecretRegistry;
  readonly #logger: Logger | undefined;
  readonly #abort = new AbortController();
  readonly #ownErrors = new Map<string, number>();
  readonly #errorHoldMs: number;
  readonly #maxHoldMs: number;

  constructor(options: DeliveryWorkerOptions) {
    // Every delivery under way follows it (linkedSignal): more than EventTarget's 10 at once.
    setMaxListeners(0, this.#abort.signal);
    this.#options = options;
    this.receiver = options.receiver.name;
    this.kind = options.receiver.kind;
    this.#secrets = options.secrets ?? processSecrets;
    this.#logger = options.logger?.child({
      component: 'delivery',
      receiver: this.receiver,
      receiverKind: this.kind,
    });
    this.#errorHoldMs = options.tuning?.errorHoldMs ?? DEFAULT_ERROR_HOLD_MS;
    this.#maxHoldMs = options.maxHoldMs ?? DEFAULT_MAX_HOLD_MS;
    const name = notifyQueueName(this.receiver);
    const prefix = bullPrefix(options.prefix ?? DEFAULT_PREFIX);
    this.#queue = new Queue<DeliveryJobData, DeliveryResult, string>(name, {
      connection: options.connection,
      prefix,
    });
    this.worker = new Worker<DeliveryJobData, DeliveryResult, string>(
      name,
      (job, _token, signal) => this.#process(job, signal),
      {
        connection: options.connection,
        prefix,
        autorun: false,
        concurrency: 1,
        limiter: LIMITER,
        // A held worker sleeps at most this long before it looks at the hold again.
        maximumRateLimitDelay: options.tuning?.holdCheckMs ?? DEFAULT_HOLD_CHECK_MS,
        name: `delivery-${this.receiver}`,
        lockDuration: options.tuning?.lockDuration ?? 30_000,
        stalledInterval: options.tuning?.stalledInterval ?? 30_000,
        maxStalledCount: options.tuning?.maxStalledCount ?? 2,
      },
    );
    this.#listen();
    this.ready = this.#queue.setGlobalConcurrency(1).then(() => {
      this.worker.run().catch((error: unknown) => {
        this.#logger?.error({ err: (error as Error).message }, 'delivery worker stopped on an error');
      });
    });
    // `ready` is also awaited by callers; this keeps an early failure from going unhandled.
    this.ready.catch((error: unknown) => {
      this.#logger?.error({ err: (error as Error).message }, 'delivery worker could not start');
    });
  }

  /** Aborts sends under way (their outcome is `retry`, which then counts no attempt). */
  abort(): void {
    this.#abort.abort(new Error('fleetwatch is shutting down'));
  }

  /**
   * Stops taking notifications and lets the one under way finish within `graceMs`; after that its
   * send is aborted (no attempt is counted; it goes out again on the next start), with 2 s to wind
   * up (`closeWorker`).
   */
  async close(graceMs = 10_000): Promise<'graceful' | 'forced'> {
    try {
      return await closeWorker(this.worker, {
        name: `delivery-${this.receiver}`,
        graceMs,
        onForce: () => this.abort(),
        ...(this.#logger ? { logger: this.#logger } : {}),
      });
    } finally {
      await settlesWithin(this.#queue.close(), 2_000);
    }
  }

  async #process(job: DeliveryJob, signal?: AbortSignal): Promise<DeliveryResult> {
    try {
      const result = await this.#deliver(job, signal);
      this.#ownErrors.delete(job.id ?? '');
      return result;
    } catch (error) {
      if (error instanceof UnrecoverableError || error instanceof RateLimitError) {
        if (error instanceof UnrecoverableError) this.#ownErrors.delete(job.id ?? '');
        throw error;
      }
      return this.#ownError(job, error);
    }
  }

  async #deliver(job: DeliveryJob, jobSignal?: AbortSignal): Promise<DeliveryResult> {
    const { notification } = job.data;
    const progress: DeliveryProgress = job.data.delivery ?? { attempts: 0 };
    const { disabledReceivers, markers } = this.#options;
    const [earlier, disabled] = await Promise.all([
      markers.has(this.receiver, notification.id),
      disabledReceivers.status(this.receiver),
    ]);
    if (earlier) {
      this.#logger?.info(
        { notification: notification.id },
        'notification was delivered before (delivered marker found); not sending it again',
      );
      return { delivered: 'earlier' };
    }
    if (disabled) {
      await this.#report(disabled);
      throw new UnrecoverableError(this.#scrub(`receiver disabled: ${disabled.reason}`));
    }

    const attempt = progress.attempts + 1;
    const linked = jobSignal ? linkedSignal([this.#abort.signal, jobSignal]) : undefined;
    const signal = linked?.signal ?? this.#abort.signal;
    const started = performance.now();
    let raw: DeliveryOutcome;
    try {
      raw = await this.#options.notifier.deliver(notification, { attempt, signal });
    } finally {
      linked?.release();
    }
    const latencyMs = Math.round(performance.now() - started);
    const outcome = this.#scrubbed(raw);
    this.#tell({ notification, outcome, attempt, latencyMs });
    const decision = decide(outcome, progress, this.#options.policy, {
      shuttingDown: this.#abort.signal.aborted,
      maxHoldMs: this.#maxHoldMs,
    });
    return this.#carryOut(job, decision, outcome);
  }

  /** Does what `decide` said: Redis writes, the hold, and the BullMQ error that settles the job. */
  async #carryOut(
    job: DeliveryJob,
    decision: DeliveryDecision,
    outcome: DeliveryOutcome,
  ): Promise<DeliveryResult> {
    const { notification } = job.data;
    if ('progress' in decision && decision.progress) await this.#record(job, decision.progress);
    switch (decision.action) {
      case 'complete': {
        await this.#options.markers.mark(this.receiver, notification.id).catch((error: unknown) => {
          // Delivered all the same; only a crash before "completed" could now send it twice.
          this.#logger?.warn(
            { notification: notification.id, err: (error as Error).message },
            'could not write the delivered marker',
          );
        });
        const { attempt } = decision;
        return outcome.status === undefined
          ? { delivered: true, attempt }
          : { delivered: true, attempt, status: outcome.status };
      }

      case 'hold': {
        // A send the shutdown cut short waits for nothing: the next start sends it.
        if (decision.cause === 'shutdown' || outcome.kind === 'delivered') throw new RateLimitError();
        const { retryAfter } = decision;
        const hold = await this.#hold({
          ms: decision.holdMs,
          cause: decision.cause,
          status: outcome.status,
          reason: outcome.reason,
          retryAfterMs: retryAfter?.askedMs,
          capped: retryAfter?.capped === true,
          notification: notification.id,
        });
        this.#logHold(decision, hold, notification);
        throw new RateLimitError();
      }

      case 'dead-letter':
        throw new UnrecoverableError(decision.reason);

      case 'disable': {
        const { first, disabled } = await this.#options.disabledReceivers.disable(this.receiver, {
          kind: this.kind,
          ...decision.disabled,
        });
        if (first) {
          this.#logger?.error(
            { reason: decision.disabled.reason },
            `receiver disabled: it answered that it is gone; \`fleetwatch receiver enable ${this.receiver}\` turns it back on`,
          );
        }
        await this.#report(disabled);
        throw new UnrecoverableError(decision.reason);
      }
    }
  }

  /** Fleetwatch's own trouble: hold the receiver briefly, count no attempt; give up after a few. */
  async #ownError(job: DeliveryJob, error: unknown): Promise<never> {
    const id = job.id ?? '';
    const count = (this.#ownErrors.get(id) ?? 0) + 1;
    const message = this.#scrub(error instanceof Error ? error.message : String(error));
    if (count >= MAX_OWN_ERRORS) {
      this.#ownErrors.delete(id);
      throw new UnrecoverableError(`delivery failed ${count} times in fleetwatch itself: ${message}`);
    }
    this.#ownErrors.set(id, count);
    this.#logger?.warn(
      { notification: job.data.notification?.id, err: message, holdMs: this.#errorHoldMs },
      'delivery could not be carried out; holding the receiver and trying again',
    );
    await this.#hold({
      ms: this.#errorHoldMs,
      cause: 'error',
      reason: `fleetwatch: ${message}`,
      notification: job.data.notification?.id,
    }).catch(() => {});
    throw new RateLimitError();
  }

  /** Raises `monitor.receiver.disabled` once per disabling; a failure here only delays it. */
  async #report(disabled: ReceiverDisabled): Promise<void> {
    try {
      await this.#options.disabledReceivers.report(this.receiver, disabled);
    } catch (error) {
      this.#logger?.warn(
        { err: (error as Error).message },
        'could not record monitor.receiver.disabled yet; the next notification tries again',
      );
    }
  }

  /** Holds the whole receiver (every replica) for `request.ms`, with why; nothing for 0 ms. */
  async #hold(request: HoldRequest): Promise<ReceiverHold | undefined> {
    if (!(request.ms > 0)) return undefined;
    return this.#options.holds.hold(this.receiver, request);
  }

  /** One line per hold: until when and why; a warning when the receiver asked for more than `max_hold`. */
  #logHold(
    decision: Extract<DeliveryDecision, { action: 'hold' }>,
    hold: ReceiverHold | undefined,
    notification: Notification,
  ): void {
    const fields = {
      notification: notification.id,
      holdMs: decision.holdMs,
      until: hold?.until,
      status: hold?.status,
      reason: hold?.reason,
      ...(decision.counted
        ? { attempt: decision.progress?.attempts, of: this.#options.policy.attempts }
        : {}),
      ...(decision.retryAfter
        ? { retryAfterMs: decision.retryAfter.askedMs, capped: decision.retryAfter.capped }
        : {}),
    };
    const release =
      decision.holdMs >= RELEASE_HINT_MS
        ? `; \`fleetwatch receiver resume ${this.receiver}\` releases it now`
        : '';
    if (!hold) {
      // A wait of 0 ms (a Retry-After of 0, a retry schedule that starts at 0s): no hold at all.
      this.#logger?.info(fields, 'delivery failed; trying again at once');
    } else if (decision.retryAfter?.capped) {
      this.#logger?.warn(
        { ...fields, maxHoldMs: this.#maxHoldMs },
        `receiver asked to wait ${describeWait(decision.retryAfter.askedMs)} (Retry-After); ` +
          `capped at max_hold ${formatDuration(this.#maxHoldMs)}: holding it until ${hold.until}${release}`,
      );
    } else if (decision.counted) {
      this.#logger?.info(
        fields,
        `delivery failed; holding the receiver until the next attempt at ${hold.until}${release}`,
      );
    } else {
      this.#logger?.info(fields, `receiver asked us to slow down; holding it until ${hold.until}${release}`);
    }
  }

  async #record(job: DeliveryJob, progress: DeliveryProgress): Promise<void> {
    await job.updateData({ ...job.data, delivery: progress });
  }

  #scrub(text: string): string {
    return this.#secrets.scrub(text);
  }

  #scrubbed(outcome: DeliveryOutcome): DeliveryOutcome {
    return outcome.kind === 'delivered' ? outcome : { ...outcome, reason: this.#scrub(outcome.reason) };
  }

  #tell(report: {
    notification: Notification;
    outcome: DeliveryOutcome;
    attempt: number;
    latencyMs: number;
  }) {
    try {
      this.#options.onOutcome?.({
        receiver: this.receiver,
        kind: this.kind,
        notificationId: report.notification.id,
        outcome: report.outcome,
        attempt: report.attempt,
        latencyMs: report.latencyMs,
      });
    } catch (error) {
      this.#logger?.debug({ err: (error as Error).message }, 'delivery hook failed');
    }
  }

  #listen(): void {
    const warn = throttledWarn(this.#logger);
    this.worker.on('error', (error: Error) =>
      warn({ err: this.#scrub(error.message) }, 'delivery worker error; it keeps retrying'),
    );
    this.#queue.on('error', (error: Error) =>
      warn({ err: this.#scrub(error.message) }, 'delivery queue error; it keeps retrying'),
    );
    this.worker.on('failed', (job, error) => {
      this.#logger?.warn(
        { notification: job?.data.notification?.id, reason: this.#scrub(error.message) },
        'notification dead-lettered',
      );
    });
    this.worker.on('completed', (job, result) => {
      this.#logger?.debug(
        { notification: job.data.notification?.id, result },
        result.delivered === 'earlier' ? 'notification already delivered' : 'notification delivered',
      );
    });
    this.worker.on('stalled', (jobId) => {
      this.#logger?.info({ job: jobId }, 'delivery job stalled (a worker died?); it is taken again');
    });
  }
}

/** `99999999s`: a wait as the receiver put it, however long. */
function describeWait(ms: number): string {
  return Number.isFinite(ms) ? formatDuration(Math.round(ms)) : 'longer than can be counted';
}

export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  return new DeliveryWorker(options);
}
