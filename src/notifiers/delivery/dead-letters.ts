import type { Job } from 'bullmq';
import type { Logger } from 'pino';
import type { Severity } from '../../events/types.js';
import { type RedisClient, scanKeys } from '../../lib/redis-connection.js';
import { bullPrefix, DEFAULT_PREFIX } from '../../store/keys.js';
import {
  createDeliveryQueue,
  type DeliveryJobData,
  type DeliveryQueue,
  deliveryJobId,
} from './delivery-queue.js';
import type { DisabledReceivers } from './disabled-receivers.js';

/**
 * Dead letters: notifications the delivery worker gave up on (attempts used up, rejected by the
 * receiver, receiver disabled, or stalled too often). They are the failed jobs of the receivers'
 * `notify-<receiver>` queues, kept until replayed or purged (`removeOnFail: false`).
 *
 * Replay is exactly once: `job.retry('failed')` moves the job from the failed set back to the end
 * of its queue in one Redis script, which succeeds only while the job is in the failed set, so of
 * two replays of one id (or of a replay and a purge) one wins and the other is told that it is no
 * longer a dead letter. The attempt count in the job's data starts over. A replayed notification
 * keeps its id: a receiver that deduplicates on `webhook-id` still sees it once, and the delivered
 * marker still stops a second send of one that was in fact delivered.
 */

export interface DeadLetter {
  /** BullMQ job id: the notification id (`:` replaced by `_`). */
  id: string;
  receiver: string;
  notificationId: string;
  groupKey: string;
  status: string;
  severity: Severity | string;
  /** Type and subject of the first event of the notification. */
  type: string | null;
  subject: string | null;
  events: number;
  /** Why it was dead-lettered (free of secrets). */
  reason: string;
  attempts: number;
  /** ISO 8601. */
  failedAt: string | null;
  /** When the notification was queued (ISO 8601). */
  queuedAt: string;
}

export type DeadLetterProblem = 'not_found' | 'not_dead' | 'ambiguous' | 'receiver_disabled';

/** A dead-letter operation that cannot be done; `problem` says why (the CLI maps it to an exit status). */
export class DeadLetterError extends Error {
  constructor(
    readonly problem: DeadLetterProblem,
    message: string,
  ) {
    super(message);
    this.name = 'DeadLetterError';
  }
}

export interface ReplaySummary {
  receiver: string;
  replayed: number;
  /** Set when the receiver was skipped (disabled). */
  skipped?: string;
}

export interface DeadLettersOptions {
  /** A producer connection; not closed here. */
  connection: RedisClient;
  prefix?: string;
  /** Receiver names whose queues are looked at. */
  receivers: readonly string[];
  /** When given, replaying to a disabled receiver is refused (it would be dead-lettered again). */
  disabledReceivers?: DisabledReceivers;
  logger?: Logger;
}

type DeliveryJob = Job<DeliveryJobData, unknown, string>;

/** Receivers that have a failed set in Redis, configured or not (a removed receiver's letters stay). */
export async function receiversWithDeadLetters(
  redis: RedisClient,
  prefix: string = DEFAULT_PREFIX,
): Promise<string[]> {
  const head = `${bullPrefix(prefix)}:notify-`;
  const found = new Set<string>();
  // On a Cluster the queues live on the master of `{p}`'s slot; scanKeys asks every master.
  for (const key of await scanKeys(redis, `${head}*:failed`)) {
    const name = key.slice(head.length, -':failed'.length);
    if (/^[A-Za-z0-9_-]+$/.test(name)) found.add(name);
  }
  return [...found].sort();
}

export class DeadLetters {
  readonly #options: DeadLettersOptions;
  readonly #queues = new Map<string, DeliveryQueue>();

  constructor(options: DeadLettersOptions) {
    this.#options = options;
  }

  get receivers(): readonly string[] {
    return this.#options.receivers;
  }

  /** Dead letters of every receiver (or one), oldest failure first. */
  async list(options: { receiver?: string } = {}): Promise<DeadLetter[]> {
    const letters: DeadLetter[] = [];
    for (const receiver of this.#pick(options.receiver)) {
      const jobs = (await this.#queue(receiver).getFailed(0, -1)) as DeliveryJob[];
      for (const job of jobs) if (job) letters.push(toDeadLetter(receiver, job));
    }
    return letters.sort(
      (a, b) => (a.failedAt ?? '').localeCompare(b.failedAt ?? '') || a.id.localeCompare(b.id),
    );
  }

  async count(options: { receiver?: string } = {}): Promise<number> {
    let total = 0;
    for (const receiver of this.#pick(options.receiver))
      total += await this.#queue(receiver).getFailedCount();
    return total;
  }

  /**
   * Puts one dead letter back at the end of its receiver's queue, attempts reset. Throws a
   * `DeadLetterError`: `not_found` (no such id), `not_dead` (it is no longer a dead letter: replayed
   * or purged already), `ambiguous` (the id is dead in several receivers: name one),
   * `receiver_disabled`.
   */
  async replay(id: string, options: { receiver?: string } = {}): Promise<DeadLetter> {
    const { receiver, job } = await this.#findDead(id, options.receiver);
    await this.#refuseDisabled(receiver);
    const letter = toDeadLetter(receiver, job);
    if (!(await this.#retry(job))) throw notDead(id, 'it was replayed or purged just now');
    this.#options.logger?.info({ receiver, id: letter.id }, 'dead letter replayed');
    return letter;
  }

  /** Replays every dead letter (of one receiver, or all), in the order they were first queued. */
  async replayAll(options: { receiver?: string } = {}): Promise<ReplaySummary[]> {
    const summaries: ReplaySummary[] = [];
    for (const receiver of this.#pick(options.receiver)) {
      const disabled = await this.#options.disabledReceivers?.status(receiver);
      if (disabled) {
        summaries.push({ receiver, replayed: 0, skipped: `receiver disabled: ${disabled.reason}` });
        continue;
      }
      const jobs = ((await this.#queue(receiver).getFailed(0, -1)) as DeliveryJob[])
        .filter((job): job is DeliveryJob => Boolean(job))
        .sort((a, b) => a.timestamp - b.timestamp);
      let replayed = 0;
      for (const job of jobs) if (await this.#retry(job)) replayed += 1;
      summaries.push({ receiver, replayed });
    }
    return summaries;
  }

  /** Deletes one dead letter for good. Same errors as `replay` (but for `receiver_disabled`). */
  async purge(id: string, options: { receiver?: string } = {}): Promise<DeadLetter> {
    const { receiver, job } = await this.#findDead(id, options.receiver);
    const letter = toDeadLetter(receiver, job);
    // Checked once more right before removing, so a letter replayed meanwhile is not deleted.
    if ((await job.getState()) !== 'failed') throw notDead(id, 'it was replayed just now');
    await job.remove();
    return letter;
  }

  /** Deletes every dead letter (of one receiver, or all); resolves with how many per receiver. */
  async purgeAll(options: { receiver?: string } = {}): Promise<Array<{ receiver: string; purged: number }>> {
    const results: Array<{ receiver: string; purged: number }> = [];
    for (const receiver of this.#pick(options.receiver)) {
      const removed = await this.#queue(receiver).clean(0, 0, 'failed');
      results.push({ receiver, purged: removed.length });
    }
    return results;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((queue) => queue.close().catch(() => {})));
    this.#queues.clear();
  }

  #pick(receiver: string | undefined): readonly string[] {
    if (receiver === undefined) return this.#options.receivers;
    if (!this.#options.receivers.includes(receiver)) {
      throw new DeadLetterError('not_found', `no receiver named "${receiver}"`);
    }
    return [receiver];
  }

  #queue(receiver: string): DeliveryQueue {
    let queue = this.#queues.get(receiver);
    if (!queue) {
      queue = createDeliveryQueue({
        receiver,
        connection: this.#options.connection,
        prefix: this.#options.prefix ?? DEFAULT_PREFIX,
        logger: this.#options.logger,
      });
      this.#queues.set(receiver, queue);
    }
    return queue;
  }

  async #findDead(id: string, only: string | undefined): Promise<{ receiver: string; job: DeliveryJob }> {
    const jobId = deliveryJobId({ id });
    const found: Array<{ receiver: string; job: DeliveryJob; state: string }> = [];
    for (const receiver of this.#pick(only)) {
      const job = (await this.#queue(receiver).getJob(jobId)) as DeliveryJob | undefined;
      if (job) found.push({ receiver, job, state: await job.getState() });
    }
    const dead = found.filter((entry) => entry.state === 'failed');
    if (dead.length === 1 && dead[0]) return dead[0];
    if (dead.length > 1) {
      throw new DeadLetterError(
        'ambiguous',
        `${id} is a dead letter of several receivers (${dead.map((entry) => entry.receiver).join(', ')}); name one with --receiver`,
      );
    }
    if (found.length === 0) {
      const where = only === undefined ? '' : ` of receiver ${only}`;
      throw new DeadLetterError('not_found', `no dead letter ${id}${where}`);
    }
    const states = [...new Set(found.map((entry) => describeState(entry.state)))].join(', ');
    throw notDead(id, `it is ${states}`);
  }

  async #refuseDisabled(receiver: string): Promise<void> {
    const disabled = await this.#options.disabledReceivers?.status(receiver);
    if (disabled) {
      throw new DeadLetterError(
        'receiver_disabled',
        `receiver ${receiver} is disabled (${disabled.reason}); \`fleetwatch receiver enable ${receiver}\` first`,
      );
    }
  }

  /** Resets the attempts and moves the job from failed to waiting; false when it was not failed any more. */
  async #retry(job: DeliveryJob): Promise<boolean> {
    await job.updateData({ notification: job.data.notification });
    try {
      await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
      return true;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      // -1: the job is gone (purged); -3: it is not in the failed set (replayed by someone else).
      if (code === -1 || code === -3) return false;
      throw error;
    }
  }
}

function notDead(id: string, detail: string): DeadLetterError {
  return new DeadLetterError('not_dead', `${id} is not a dead letter any more (${detail})`);
}

function describeState(state: string): string {
  switch (state) {
    case 'completed':
      return 'delivered';
    case 'waiting':
    case 'prioritized':
    case 'delayed':
      return 'waiting to be delivered';
    case 'active':
      return 'being delivered';
    default:
      return state;
  }
}

function iso(ms: number | undefined | null): string | null {
  return typeof ms === 'number' && Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : null;
}

export function toDeadLetter(receiver: string, job: DeliveryJob): DeadLetter {
  const notification = job.data?.notification;
  const first = notification?.events?.[0];
  return {
    id: job.id ?? '',
    receiver,
    notificationId: notification?.id ?? job.id ?? '',
    groupKey: notification?.groupKey ?? '',
    status: notification?.status ?? '',
    severity: notification?.severity ?? '',
    type: first?.type ?? null,
    subject: first?.subject ?? null,
    events: notification?.events?.length ?? 0,
    reason: job.failedReason ?? '',
    // Counted by the delivery worker (BullMQ's own counter also counts a failure that sent nothing).
    attempts: job.data?.delivery?.attempts ?? 0,
    failedAt: iso(job.finishedOn),
    queuedAt: iso(job.timestamp) ?? '',
  };
}
