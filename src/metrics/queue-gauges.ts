import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { Counter, Gauge } from 'prom-client';
import type { DisabledReceivers } from '../notifiers/delivery/disabled-receivers.js';
import type { ReceiverHold, ReceiverHolds } from '../notifiers/delivery/holds.js';
import { ScrapedGauges } from './cache.js';

/**
 * `fleetwatch_queue_jobs{queue,state}`, `fleetwatch_dead_letters{receiver}` and the receivers'
 * holds (`fleetwatch_receiver_held_until_timestamp_seconds{receiver}`, 0 when not held, and
 * `fleetwatch_receiver_hold_info{receiver,cause,status,capped}` while held), read at scrape time
 * with one `getJobCounts` per queue (a handful of Redis commands each, whatever the queue length)
 * and one read of every hold, cached like the fleet reading. A receiver's dead letters are the
 * failed jobs of its `notify-<receiver>` queue. `fleetwatch_receiver_disabled{receiver}` is 1 while
 * the receiver's disabled flag exists, read in the same reading (one HGETALL per receiver). When a
 * read fails the gauges keep their last values and
 * `fleetwatch_metrics_collect_errors_total{source="queues"}` counts it.
 */

export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

export interface QueueSource {
  /** The BullMQ queue name: `poll`, `events`, `notify-<receiver>`. */
  name: string;
  queue: Pick<Queue, 'getJobCounts'>;
  /** Set on a receiver's delivery queue: its failed jobs are that receiver's dead letters. */
  receiver?: string;
}

interface QueueReading {
  counts: Array<{ source: QueueSource; counts: Record<QueueState, number> }>;
  /** The held receivers among the sources'. */
  holds: Map<string, ReceiverHold>;
  /** The disabled receivers among the sources'. */
  disabled: ReadonlySet<string>;
}

/** What the scrape-time reading needs besides the queues: the receivers' holds and disabled flags. */
export interface ReceiverSources {
  holds?: Pick<ReceiverHolds, 'statuses'>;
  disabled?: Pick<DisabledReceivers, 'status'>;
}

export interface QueueGaugesOptions {
  jobs: Gauge<'queue' | 'state'>;
  deadLetters: Gauge<'receiver'>;
  heldUntil: Gauge<'receiver'>;
  holdInfo: Gauge<'receiver' | 'cause' | 'status' | 'capped'>;
  disabled: Gauge<'receiver'>;
  errors: Counter<'source'>;
  cacheMs: number;
  /** How long a scrape waits for a read (see `ScrapedGauges`). */
  timeoutMs?: number;
  logger?: Logger;
}

async function countsOf(source: QueueSource): Promise<Record<QueueState, number>> {
  const raw = await source.queue.getJobCounts(
    'waiting',
    'prioritized',
    'active',
    'delayed',
    'failed',
    'completed',
  );
  const n = (key: string) => (typeof raw[key] === 'number' && Number.isFinite(raw[key]) ? raw[key] : 0);
  return {
    // Prioritized jobs wait too (BullMQ keeps them in a set of their own).
    waiting: n('waiting') + n('prioritized'),
    active: n('active'),
    delayed: n('delayed'),
    failed: n('failed'),
    completed: n('completed'),
  };
}

async function disabledAmong(
  source: Pick<DisabledReceivers, 'status'>,
  receivers: readonly string[],
): Promise<Set<string>> {
  const flags = await Promise.all(receivers.map(async (name) => [name, await source.status(name)] as const));
  return new Set(flags.filter(([, flag]) => flag !== undefined).map(([name]) => name));
}

export class QueueGauges extends ScrapedGauges<QueueReading> {
  readonly #options: QueueGaugesOptions;

  constructor(options: QueueGaugesOptions) {
    super({ ...options, source: 'queues', failure: 'could not count queue jobs for the metrics' });
    this.#options = options;
  }

  /** `receivers` reads the holds and disabled flags of the sources that name a receiver. */
  bind(sources: readonly QueueSource[] | undefined, receiverSources: ReceiverSources = {}): void {
    const { holds, disabled } = receiverSources;
    const list = sources ? [...sources] : undefined;
    const receivers = (list ?? []).flatMap((source) =>
      source.receiver === undefined ? [] : [source.receiver],
    );
    this.readFrom(
      list
        ? async () => {
            const [counts, held, off] = await Promise.all([
              Promise.all(list.map(async (source) => ({ source, counts: await countsOf(source) }))),
              holds ? holds.statuses(receivers) : new Map<string, ReceiverHold>(),
              disabled ? disabledAmong(disabled, receivers) : new Set<string>(),
            ]);
            return { counts, holds: held, disabled: off };
          }
        : undefined,
    );
  }

  protected apply(reading: QueueReading): void {
    const { jobs, deadLetters, heldUntil, holdInfo, disabled } = this.#options;
    jobs.reset();
    deadLetters.reset();
    heldUntil.reset();
    holdInfo.reset();
    disabled.reset();
    for (const { source, counts } of reading.counts) {
      for (const state of QUEUE_STATES) jobs.set({ queue: source.name, state }, counts[state]);
      if (source.receiver === undefined) continue;
      const receiver = source.receiver;
      deadLetters.set({ receiver }, counts.failed);
      disabled.set({ receiver }, reading.disabled.has(receiver) ? 1 : 0);
      const hold = reading.holds.get(receiver);
      heldUntil.set({ receiver }, hold ? Date.parse(hold.until) / 1000 : 0);
      if (hold) {
        holdInfo.set(
          {
            receiver,
            cause: hold.cause,
            status: hold.status === undefined ? 'none' : String(hold.status),
            capped: String(hold.capped),
          },
          1,
        );
      }
    }
  }
}
