import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { MuteMarks } from '../../src/notifiers/muting/mute-marks.js';
import { notifyQueueName, QUEUE_NAMES } from '../../src/queues/names.js';
import type { EventLog } from '../../src/store/event-log.js';
import { bullPrefix, storeKeys } from '../../src/store/keys.js';
import { readAllEvents, waitFor } from '../support/scenario.js';
import type { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * "Everything that was logged has reached the receiver, and nothing is still on its way": the
 * outbox is empty, the `events` queue and the receiver's delivery queue hold no job waiting,
 * delayed or active (a job a killed replica held stays active until another replica finds it
 * stalled, and may then be sent again, so the wait covers that too), and every logged event id is
 * in a request the receiver accepted. Then the receiver must stay quiet for a moment, so a late
 * repeat would still be seen.
 */

/** BullMQ states in which a job is still to be (or being) worked on. */
const UNFINISHED = ['wait', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;

export interface DrainOptions {
  admin: Redis;
  log: EventLog;
  prefix: string;
  receiver: WebhookReceiver;
  receiverName: string;
  timeoutMs: number;
  /** How long the receiver must then get nothing new (default 1 s). */
  quietMs?: number;
}

export interface Drained {
  /** False when the time-out came first; `pending` says what was left. */
  drained: boolean;
  pending: string;
  ms: number;
  /** Dead letters of the receiver at the end. */
  deadLetters: number;
}

export async function waitForDrain(options: DrainOptions): Promise<Drained> {
  const { admin, log, prefix, receiver, timeoutMs } = options;
  const started = Date.now();
  const keys = storeKeys(prefix);
  const connection = { connection: admin, prefix: bullPrefix(prefix) };
  const events = new Queue(QUEUE_NAMES.events, connection);
  const notify = new Queue(notifyQueueName(options.receiverName), connection);
  const marks = new MuteMarks({ redis: admin, prefix });
  let pending = '';
  try {
    await waitFor(
      'everything logged accepted by the receiver, nothing left in the pipeline',
      async () => {
        const [outbox, eventJobs, notifyJobs, entries] = await Promise.all([
          admin.xlen(keys.outbox),
          events.getJobCounts(...UNFINISHED),
          notify.getJobCounts(...UNFINISHED),
          readAllEvents(log),
        ]);
        const delivered = new Set(receiver.accepted().flatMap(({ events }) => events.map(({ id }) => id)));
        const missing = entries.filter(({ event }) => !delivered.has(event.id)).map(({ event }) => event.id);
        // An event kept out of notifications on purpose (inhibited, silenced) is settled too.
        const muted = await marks.read(missing);
        const undelivered = missing.filter((id) => !muted.has(id)).length;
        return { outbox, eventJobs, notifyJobs, undelivered };
      },
      ({ outbox, eventJobs, notifyJobs, undelivered }) => {
        const problems = [
          ...(outbox > 0 ? [`outbox ${outbox}`] : []),
          ...unfinished('events', eventJobs),
          ...unfinished('notify', notifyJobs),
          ...(undelivered > 0 ? [`${undelivered} logged events not accepted yet`] : []),
        ];
        pending = problems.join(', ');
        return problems.length === 0 ? undefined : pending;
      },
      { timeoutMs, intervalMs: 500 },
    );
    await waitForQuietReceiver(receiver, options.quietMs ?? 1_000);
    return {
      drained: true,
      pending: '',
      ms: Date.now() - started,
      deadLetters: await notify.getFailedCount(),
    };
  } catch {
    return {
      drained: false,
      pending,
      ms: Date.now() - started,
      deadLetters: await notify.getFailedCount().catch(() => -1),
    };
  } finally {
    await Promise.all([events.close(), notify.close()]);
  }
}

/**
 * Waits until the receiver's delivery queue has nothing waiting, held or under way: each
 * notification was delivered or is a dead letter. Resolves to the number of dead letters.
 */
export async function waitForIdleDelivery(
  options: Pick<DrainOptions, 'admin' | 'prefix' | 'receiverName' | 'timeoutMs'>,
): Promise<number> {
  const notify = new Queue(notifyQueueName(options.receiverName), {
    connection: options.admin,
    prefix: bullPrefix(options.prefix),
  });
  try {
    await waitFor(
      'the delivery queue idle',
      () => notify.getJobCounts(...UNFINISHED),
      (counts) => unfinished('notify', counts)[0],
      { timeoutMs: options.timeoutMs, intervalMs: 250 },
    );
    return await notify.getFailedCount();
  } finally {
    await notify.close();
  }
}

function unfinished(queue: string, counts: Record<string, number>): string[] {
  const busy = Object.entries(counts).filter(([, n]) => n > 0);
  return busy.length === 0 ? [] : [`${queue} queue ${busy.map(([state, n]) => `${state} ${n}`).join(' ')}`];
}

/** Resolves once the receiver has had no request for `quietMs`. */
async function waitForQuietReceiver(receiver: WebhookReceiver, quietMs: number): Promise<void> {
  let count = -1;
  let since = Date.now();
  await waitFor(
    `receiver quiet for ${quietMs} ms`,
    async () => receiver.deliveries.length,
    (now) => {
      if (now !== count) {
        count = now;
        since = Date.now();
      }
      return Date.now() - since >= quietMs ? undefined : 'requests still arriving';
    },
    { timeoutMs: quietMs * 10, intervalMs: 100 },
  );
}
